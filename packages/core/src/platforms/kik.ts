import type { KikIncomingMessage, KikOutgoingMessage, KikRecord } from '../types'
import {
  isObject,
  optionalString,
  requireNonEmptyString,
  requireObject,
  requireString,
  validateIntent,
} from '../validate'
import { mergeUserJson, oneRecordOf, type RecordUsers, type SerializeContext, type WireRecord } from './context'

/**
 * Mobile chat, incoming (`message.from`) or outgoing (`message.to`): `{ apiKey, username,
 * message }`, intent at the root. Kik's own `apiKey` is blanked unless `sendPlatformCredentials`.
 */
export function serializeKik(
  record: KikRecord<KikIncomingMessage> | KikRecord<KikOutgoingMessage>,
  direction: 'incoming' | 'outgoing',
  ctx: SerializeContext = {},
): WireRecord {
  const context = `kik ${direction}`
  const r = requireObject(record, '', context)
  requireString(r.username, 'username', context)
  optionalString(r.apiKey, 'apiKey', context)
  const message = requireObject(r.message, 'message', context)
  requireString(message.type, 'message.type', context)
  optionalString(message.body, 'message.body', context)
  const userId = requireNonEmptyString(
    direction === 'incoming' ? message.from : message.to,
    `message.${direction === 'incoming' ? 'from' : 'to'}`,
    context,
  )
  if (r.intent !== undefined) validateIntent(r.intent, 'intent', context)
  const body: Record<string, unknown> = { ...r, apiKey: ctx.sendPlatformCredentials ? (r.apiKey ?? '') : '' }
  if (ctx.intent) body.intent = ctx.intent
  const user = mergeUserJson(ctx.platformUserJson, r.platformUserJson)
  if (user) body.platformUserJson = user
  return { body, userId, conversation: typeof message.chatId === 'string' ? message.chatId : undefined }
}

/** One record, for `message.from` (incoming) or `message.to` (outgoing) (see `RecordUsers`). */
export function kikUsers(record: unknown, direction: 'incoming' | 'outgoing'): RecordUsers {
  const message = isObject(record) ? record.message : undefined
  return oneRecordOf(isObject(message) ? (direction === 'incoming' ? message.from : message.to) : undefined)
}
