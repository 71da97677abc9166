/**
 * Pure builders of the mobile-chat wire records (spec: Platform-native message shapes,
 * "Mobile chat"): the SDK's objects in, `{ apiKey, username, message }` out. Nothing here
 * touches the bot's own objects: every record is a fresh copy.
 */
import type { JsonObject, KikIncomingMessage, KikOutgoingMessage, KikRecord } from '@convotrack/core'
import type { KikIncoming, KikOutgoingInput } from './types'

/** Kik message types that are receipts or typing indicators, not conversation. */
const SIGNAL_TYPES: ReadonlySet<string> = new Set(['delivery-receipt', 'read-receipt', 'is-typing'])

/**
 * True for receipts and typing indicators (tracked only with `events: 'all'`).
 *
 * @example isSignalMessage('read-receipt') // true
 */
export function isSignalMessage(type: unknown): boolean {
  return typeof type === 'string' && SIGNAL_TYPES.has(type)
}

/**
 * The incoming record of one message, with the spec's fields in the spec's order.
 *
 * @example incomingRecord(incoming, { username: 'mybot', apiKey: 'k' }) // { apiKey, username, message: { type, body, from, … } }
 */
export function incomingRecord(
  incoming: KikIncoming,
  bot: { username: string; apiKey?: string },
): KikRecord<KikIncomingMessage> {
  const message: KikIncomingMessage = {
    type: incoming.type,
    body: incoming.body,
    from: incoming.from,
    timestamp: incoming.timestamp,
    mention: incoming.mention ?? null,
    participants: incoming.participants ? [...incoming.participants] : undefined,
    readReceiptRequested: incoming.readReceiptRequested,
    id: incoming.id,
    chatId: incoming.chatId,
  }
  return { apiKey: bot.apiKey, username: bot.username, message }
}

/**
 * One outgoing record per message per recipient, each message exactly as the SDK puts it on
 * the wire (text shorthand expanded, `Message#toJSON()`), plus `to` and `chatId`. Deep copies:
 * later changes to the bot's objects do not change what is tracked, and nothing is added to them.
 *
 * @example outgoingRecords(['hi'], ['alice'], 'c1', bot) // [{ apiKey, username, message: { type: 'text', body: 'hi', to: 'alice', chatId: 'c1' } }]
 */
export function outgoingRecords(
  messages: readonly KikOutgoingInput[],
  recipients: readonly string[],
  chatId: string | undefined,
  bot: { username: string; apiKey?: string },
): KikRecord<KikOutgoingMessage>[] {
  const wire = messages.map(toWireMessage)
  const records: KikRecord<KikOutgoingMessage>[] = []
  for (const to of recipients) {
    for (const m of wire) {
      const message: KikOutgoingMessage = { ...m, type: String(m.type), to }
      if (chatId) message.chatId = chatId
      records.push({ apiKey: bot.apiKey, username: bot.username, message })
    }
  }
  return records
}

/** What the SDK sends for one message (its `prepareMessage`, without the routing fields). */
function toWireMessage(input: KikOutgoingInput): JsonObject {
  if (typeof input === 'string') return { type: 'text', body: input }
  const json = typeof input.toJSON === 'function' ? (input.toJSON as () => JsonObject)() : input
  // JSON round trip: a plain snapshot, whatever the SDK object holds.
  return JSON.parse(JSON.stringify(json)) as JsonObject
}

/** `send`/`broadcast` accept one message or an array, one recipient or an array. */
export function asArray<T>(value: T | readonly T[] | undefined): T[] {
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? [...(value as T[])] : [value as T]
}
