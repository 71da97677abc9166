import { InvalidRecordError } from '../errors'
import type { TwitterDirectMessageEvent, TwitterDmPayload, UniversalButton } from '../types'
import { isObject, requireNonEmptyString, requireObject, requireString } from '../validate'
import { mergeUserJson, ONE_UNKNOWN, type RecordUsers, type SerializeContext, type WireRecord } from './context'

const CONTEXT = 'twitter DM'

function dmEvents(payload: TwitterDmPayload): TwitterDirectMessageEvent[] {
  requireObject(payload, '', CONTEXT)
  if (payload.direct_message_events !== undefined) {
    if (!Array.isArray(payload.direct_message_events))
      throw new InvalidRecordError('direct_message_events', 'must be an array', CONTEXT)
    return payload.direct_message_events
  }
  if (payload.event !== undefined) return [payload.event]
  throw new InvalidRecordError('direct_message_events', 'is required (or `event`, as the send API writes it)', CONTEXT)
}

function checkEvent(ev: unknown, path: string): TwitterDirectMessageEvent {
  const e = requireObject(ev, path, CONTEXT)
  const mc = requireObject(e.message_create, `${path}.message_create`, CONTEXT)
  const target = requireObject(mc.target, `${path}.message_create.target`, CONTEXT)
  requireNonEmptyString(target.recipient_id, `${path}.message_create.target.recipient_id`, CONTEXT)
  const data = requireObject(mc.message_data, `${path}.message_create.message_data`, CONTEXT)
  requireString(data.text, `${path}.message_create.message_data.text`, CONTEXT)
  return e as unknown as TwitterDirectMessageEvent
}

function platformJsonFor(payload: TwitterDmPayload, ev: TwitterDirectMessageEvent): Record<string, unknown> {
  const { event: _single, ...rest } = payload
  return { ...rest, direct_message_events: [ev] }
}

/**
 * Short-post DM, incoming: one universal record per received `message_create` event. `userId`
 * is the human sender (`sender_id`); events sent by the subscribed account itself
 * (`for_user_id`) are the bot's own and skipped. A quick-reply answer becomes
 * `postback.buttonClick.buttonId`.
 */
export function serializeTwitterIncoming(payload: TwitterDmPayload, ctx: SerializeContext = {}): WireRecord[] {
  return dmEvents(payload).flatMap((raw, i) => {
    const ev = checkEvent(raw, `direct_message_events[${i}]`)
    const mc = ev.message_create
    const userId = requireNonEmptyString(mc.sender_id, `direct_message_events[${i}].message_create.sender_id`, CONTEXT)
    if (payload.for_user_id !== undefined && userId === payload.for_user_id) return []
    const body: Record<string, unknown> = { text: mc.message_data.text, userId }
    const reply = mc.message_data.quick_reply_response
    if (reply?.metadata !== undefined) body.postback = { buttonClick: { buttonId: String(reply.metadata) } }
    if (ctx.intent) body.intent = ctx.intent
    const user = mergeUserJson(ctx.platformUserJson, undefined)
    if (user) body.platformUserJson = user
    body.platformJson = platformJsonFor(payload, ev)
    return [{ body, userId }]
  })
}

/**
 * Short-post DM, outgoing: `userId` is the recipient (`target.recipient_id`), never the bot;
 * quick-reply options become `buttons` `{ id, label, value: metadata }`.
 */
export function serializeTwitterOutgoing(payload: TwitterDmPayload, ctx: SerializeContext = {}): WireRecord[] {
  return dmEvents(payload).map((raw, i) => {
    const ev = checkEvent(raw, payload.direct_message_events ? `direct_message_events[${i}]` : 'event')
    const mc = ev.message_create
    const userId = mc.target.recipient_id
    const body: Record<string, unknown> = { text: mc.message_data.text, userId }
    const options = mc.message_data.quick_reply?.options
    if (Array.isArray(options)) {
      body.buttons = options.map((o, j): UniversalButton => {
        requireString(o?.label, `message_create.message_data.quick_reply.options[${j}].label`, CONTEXT)
        const value = o.metadata ?? o.label
        return { id: value, label: o.label, value }
      })
    }
    if (ctx.intent) body.intent = ctx.intent
    const user = mergeUserJson(ctx.platformUserJson, undefined)
    if (user) body.platformUserJson = user
    body.platformJson = platformJsonFor(payload, ev)
    return { body, userId }
  })
}

/** The DM events of a payload without checking them; undefined when the payload has no such list. */
function rawEvents(payload: unknown): unknown[] | undefined {
  if (!isObject(payload)) return undefined
  if (payload.direct_message_events !== undefined)
    return Array.isArray(payload.direct_message_events) ? payload.direct_message_events : undefined
  return payload.event !== undefined ? [payload.event] : undefined
}

/** A `message_create` string field of a raw event, or undefined. */
function messageCreateField(ev: unknown, field: 'sender_id' | 'target'): unknown {
  const mc = isObject(ev) ? ev.message_create : undefined
  if (!isObject(mc)) return undefined
  return field === 'target' ? (isObject(mc.target) ? mc.target.recipient_id : undefined) : mc.sender_id
}

/**
 * How many records `serializeTwitterIncoming` would make of `payload`, without making them (see
 * `RecordUsers`): one per received event, the subscribed account's own events left out.
 */
export function twitterIncomingUsers(payload: unknown): RecordUsers {
  const events = rawEvents(payload)
  if (!events) return ONE_UNKNOWN
  const own = (payload as { for_user_id?: unknown }).for_user_id
  const users: string[] = []
  for (const ev of events) {
    const sender = messageCreateField(ev, 'sender_id')
    if (typeof sender !== 'string' || sender === '') return ONE_UNKNOWN
    if (own !== undefined && sender === own) continue
    users.push(sender)
  }
  return users
}

/**
 * How many records `serializeTwitterOutgoing` would make of `payload`, without making them (see
 * `RecordUsers`): one per event, for its recipient.
 */
export function twitterOutgoingUsers(payload: unknown): RecordUsers {
  const events = rawEvents(payload)
  if (!events) return ONE_UNKNOWN
  const users: string[] = []
  for (const ev of events) {
    const recipient = messageCreateField(ev, 'target')
    if (typeof recipient !== 'string' || recipient === '') return ONE_UNKNOWN
    users.push(recipient)
  }
  return users
}
