import type { SlackRecord } from '../types'
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
 * Team chat, incoming or outgoing: `{ token?, team, bot, message }` with the intent at the
 * root. `token` (Slack's verification token) is left out unless `sendPlatformCredentials`.
 * `userId` is the message's user, or the channel for the bot's own messages.
 */
export function serializeSlack(
  record: SlackRecord,
  direction: 'incoming' | 'outgoing',
  ctx: SerializeContext = {},
): WireRecord {
  const context = `slack ${direction}`
  const r = requireObject(record, '', context)
  requireNonEmptyString(requireObject(r.team, 'team', context).id, 'team.id', context)
  requireString(requireObject(r.bot, 'bot', context).id, 'bot.id', context)
  const message = requireObject(r.message, 'message', context)
  requireString(message.type, 'message.type', context)
  const channel = requireNonEmptyString(message.channel, 'message.channel', context)
  optionalString(message.text, 'message.text', context)
  optionalString(message.user, 'message.user', context)
  if (r.intent !== undefined) validateIntent(r.intent, 'intent', context)
  const { token, ...rest } = r
  const body: Record<string, unknown> = ctx.sendPlatformCredentials && token !== undefined ? { token, ...rest } : rest
  if (ctx.intent) body.intent = ctx.intent
  const user = mergeUserJson(ctx.platformUserJson, r.platformUserJson)
  if (user) body.platformUserJson = user
  const userId = direction === 'incoming' && typeof message.user === 'string' ? message.user : channel
  return { body, userId, conversation: channel }
}

/** One record, for the user `serializeSlack` would name (see `RecordUsers`). */
export function slackUsers(record: unknown, direction: 'incoming' | 'outgoing'): RecordUsers {
  const message = isObject(record) ? record.message : undefined
  if (!isObject(message)) return oneRecordOf(undefined)
  return oneRecordOf(direction === 'incoming' && typeof message.user === 'string' ? message.user : message.channel)
}
