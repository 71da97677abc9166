import type { Intent, JsonObject } from '../types'

/** What a serializer needs besides the native record; filled by the tracker from options and the turn. */
export interface SerializeContext {
  /** Intent to attach (per-call option or the turn's NotHandled / outgoing intent); wins over one in the record. */
  intent?: Intent | undefined
  /** Per-turn user metadata, merged under the record's own `platformUserJson`. */
  platformUserJson?: JsonObject | undefined
  /** Keep the platform's own secrets in the record (default: blanked). */
  sendPlatformCredentials?: boolean | undefined
  /** Ignore list check, for shapes that carry several users (messenger webhook bodies). */
  isIgnored?: ((userId: string) => boolean) | undefined
  /** Messenger incoming: `'user'` (default) skips echoes, delivery and read receipts. */
  messengerEvents?: 'user' | 'all' | undefined
  /** Clock for `service_timestamp`; injectable for tests. */
  now?: (() => number) | undefined
}

/** One record ready for the wire: the body and the user it belongs to (for the ignore list). */
export interface WireRecord {
  body: JsonObject
  /** The human user's id, when the shape has one. */
  userId: string | undefined
  /**
   * The conversation it belongs to, when that is not just the user (a Slack channel, a Kik
   * chat, a universal `conversationId`): records of one conversation are delivered in order.
   */
  conversation?: string | undefined
}

/** NotHandled intent exactly as the spec writes it: `{name: NotHandled}` with no inputs. */
export const NOT_HANDLED: Intent = Object.freeze({ name: 'NotHandled' }) as Intent

export function mergeUserJson(turn: JsonObject | undefined, own: unknown): JsonObject | undefined {
  if (!turn) return own as JsonObject | undefined
  if (!own || typeof own !== 'object') return turn
  return { ...turn, ...(own as JsonObject) }
}

/**
 * The records a call would produce, without building them: each record's user id (`undefined`
 * where the shape names none), in order; empty when the call would produce none (echoes,
 * receipts, the bot's own DMs, ignored users — as `ctx` says). Used while the queue is full, so
 * each would-be record is counted as a drop: it walks the input's shape only (no validation,
 * no serialization, no JSON) and never throws; a malformed input counts as one record.
 */
export type RecordUsers = readonly (string | undefined)[]

/** One record whose user is not known (a malformed input, or a shape without a user). */
export const ONE_UNKNOWN: RecordUsers = Object.freeze([undefined])

/** One record of `userId` when it is a non-empty string, else one of an unknown user. */
export function oneRecordOf(userId: unknown): RecordUsers {
  return typeof userId === 'string' && userId !== '' ? [userId] : ONE_UNKNOWN
}
