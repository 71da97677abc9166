import { InvalidRecordError } from '../errors'
import type {
  MessengerMessagingItem,
  MessengerSendRequest,
  MessengerSendResponse,
  MessengerWebhookBody,
} from '../types'
import { isObject, requireNonEmptyString, requireObject, requireString, validateIntent } from '../validate'
import {
  mergeUserJson,
  ONE_UNKNOWN,
  oneRecordOf,
  type RecordUsers,
  type SerializeContext,
  type WireRecord,
} from './context'

const IN = 'messenger incoming'
const OUT = 'messenger outgoing'

/** The Send API address used when a send request names none. */
export const MESSENGER_SEND_URI = 'https://graph.facebook.com/v21.0/me/messages'

/**
 * True for what a user did (a message, a postback, a quick reply, a referral…); false for
 * the page's own echoes and for delivery / read receipts, which are not user messages.
 */
export function isMessengerUserEvent(item: MessengerMessagingItem): boolean {
  if (item.message?.is_echo) return false
  if (item.delivery !== undefined || item.read !== undefined) return false
  return true
}

/**
 * Social messenger, incoming: the webhook body as the platform sent it, with the intent
 * inside each `messaging` item (spec: Intent). Returns no record when nothing is left after
 * filtering echoes/receipts and ignored users.
 */
export function serializeMessengerIncoming(input: MessengerWebhookBody, ctx: SerializeContext = {}): WireRecord[] {
  const body = requireObject(input, '', IN)
  requireString(body.object, 'object', IN)
  if (!Array.isArray(body.entry)) throw new InvalidRecordError('entry', 'is required and must be an array', IN)
  let userId: string | undefined
  let kept = 0
  const entry = body.entry.map((rawEntry: unknown, i: number) => {
    const e = requireObject(rawEntry, `entry[${i}]`, IN)
    if (!Array.isArray(e.messaging))
      throw new InvalidRecordError(`entry[${i}].messaging`, 'is required and must be an array', IN)
    const messaging = (e.messaging as unknown[]).flatMap((rawItem, j) => {
      const path = `entry[${i}].messaging[${j}]`
      const item = requireObject(rawItem, path, IN) as unknown as MessengerMessagingItem
      const sender = requireNonEmptyString(requireObject(item.sender, `${path}.sender`, IN).id, `${path}.sender.id`, IN)
      requireString(requireObject(item.recipient, `${path}.recipient`, IN).id, `${path}.recipient.id`, IN)
      // Receipts and echoes are skipped before the item rules: Facebook sends delivery receipts without `timestamp`.
      if ((ctx.messengerEvents ?? 'user') === 'user' && !isMessengerUserEvent(item)) return []
      if (typeof item.timestamp !== 'number')
        throw new InvalidRecordError(`${path}.timestamp`, 'is required and must be a number (epoch ms)', IN)
      if (item.intent !== undefined) validateIntent(item.intent, `${path}.intent`, IN)
      if (ctx.isIgnored?.(sender)) return []
      userId ??= sender
      kept++
      const out: MessengerMessagingItem = { ...item }
      if (ctx.intent) out.intent = ctx.intent
      const user = mergeUserJson(ctx.platformUserJson, item.platformUserJson)
      if (user) out.platformUserJson = user
      return [out]
    })
    return { ...e, messaging }
  })
  if (kept === 0) return []
  return [{ body: { ...body, entry: entry.filter((e) => e.messaging.length > 0) }, userId }]
}

/**
 * How many records `serializeMessengerIncoming` would make of `input`, without making them (see
 * `RecordUsers`): the whole webhook body is one record, or none when every item is an echo, a
 * receipt (unless `messengerEvents: 'all'`) or from an ignored user. Its user is the first kept sender.
 */
export function messengerIncomingUsers(input: unknown, ctx: SerializeContext): RecordUsers {
  if (!isObject(input) || !Array.isArray(input.entry)) return ONE_UNKNOWN
  const all = ctx.messengerEvents === 'all'
  for (const e of input.entry as unknown[]) {
    if (!isObject(e) || !Array.isArray(e.messaging)) return ONE_UNKNOWN
    for (const item of e.messaging as unknown[]) {
      if (!isObject(item) || !isObject(item.sender)) return ONE_UNKNOWN
      const sender = item.sender.id
      if (typeof sender !== 'string' || sender === '') return ONE_UNKNOWN
      if (!all && !isMessengerUserEvent(item as unknown as MessengerMessagingItem)) continue
      if (ctx.isIgnored?.(sender)) continue
      return [sender]
    }
  }
  return []
}

/** One record, for the user named by `json.recipient.id` (see `RecordUsers`). */
export function messengerOutgoingUsers(request: unknown): RecordUsers {
  const json = isObject(request) ? request.json : undefined
  const recipient = isObject(json) ? json.recipient : undefined
  return oneRecordOf(isObject(recipient) ? recipient.id : undefined)
}

/**
 * Social messenger, outgoing: the Send API request (`uri`, `method`, `qs`, `json`) plus the
 * platform's `responseBody`, intent at the root. `qs.access_token` is blanked unless
 * `sendPlatformCredentials`.
 */
export function serializeMessengerOutgoing(
  request: MessengerSendRequest,
  responseBody: MessengerSendResponse | undefined,
  ctx: SerializeContext = {},
): WireRecord {
  const req = requireObject(request, '', OUT)
  const json = requireObject(req.json, 'json', OUT)
  const recipient = requireObject(json.recipient, 'json.recipient', OUT)
  const userId = requireNonEmptyString(recipient.id, 'json.recipient.id', OUT)
  if (responseBody !== undefined && !isObject(responseBody))
    throw new InvalidRecordError('responseBody', 'must be an object (the Send API answer or its error body)', OUT)
  if (req.intent !== undefined) validateIntent(req.intent, 'intent', OUT)
  const qs = isObject(req.qs) ? { ...req.qs } : {}
  if (!ctx.sendPlatformCredentials || qs.access_token === undefined) qs.access_token = ''
  const out: Record<string, unknown> = {
    ...req,
    method: typeof req.method === 'string' ? req.method : 'POST',
    qs,
    json,
    responseBody: responseBody ?? {},
  }
  if (typeof req.uri !== 'string' && typeof req.url !== 'string') out.uri = MESSENGER_SEND_URI
  if (ctx.intent) out.intent = ctx.intent
  const user = mergeUserJson(ctx.platformUserJson, req.platformUserJson)
  if (user) out.platformUserJson = user
  return { body: out, userId }
}
