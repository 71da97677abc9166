import { isObject, type RecordType } from '@convotrack/core'
import type { RecordPlatform } from './legacy-records'

/** The message fields every platform's normaliser fills (and the helpers they share). */

/** A button shown with a message (universal `buttons`, quick replies, Slack buttons, Kik keyboards…). */
export interface MessageButton {
  label: string
  value?: string
}

/** The event part of an event record. */
export interface EventFields {
  type: string
  name: string
  /** `revenueEvent` amount. */
  amount?: number
  /** The whole event body as posted. */
  body: Record<string, unknown>
}

/**
 * One message or event, the same whatever the native shape it came in (spec: "Each native
 * shape is normalized"). A messenger webhook body with several `messaging` items gives several.
 */
export interface NormalizedMessage {
  platform: RecordPlatform
  direction: RecordType
  /** The human user (never the bot). */
  userId: string
  /** Slack channel, Kik chatId, universal `conversationId`; null when the shape has none. */
  conversationId: string | null
  /**
   * The transcript a message belongs to and the `userId` the pause webhook receives: the
   * conversation id when one is sent, else the user id (spec: Pause webhook).
   */
  thread: string
  sessionId: string | null
  text: string | null
  intent: string | null
  confidence: number | null
  buttons: MessageButton[]
  images: string[]
  /** User metadata (`platformUserJson`, Alexa `serviceUser`). */
  userJson: Record<string, unknown> | null
  event: EventFields | null
}

export type Obj = Record<string, unknown>

/** Readers of untrusted JSON: the value when it has the type, else undefined / []. */
export const obj = (v: unknown): Obj | undefined => (isObject(v) ? v : undefined)
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

export function intentOf(v: unknown): { intent: string | null; confidence: number | null } {
  const i = obj(v)
  const name = str(i?.name)
  if (!name) return { intent: null, confidence: null }
  return { intent: name, confidence: typeof i?.confidence === 'number' ? i.confidence : null }
}

export function message(
  platform: RecordPlatform,
  direction: RecordType,
  userId: string,
  conversationId: string | null | undefined,
  rest: Partial<NormalizedMessage>,
): NormalizedMessage {
  const conv = conversationId || null
  return {
    platform,
    direction,
    userId,
    conversationId: conv,
    thread: conv ?? userId,
    sessionId: null,
    text: null,
    intent: null,
    confidence: null,
    buttons: [],
    images: [],
    userJson: null,
    event: null,
    ...rest,
  }
}
