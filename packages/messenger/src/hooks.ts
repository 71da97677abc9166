import { type JsonObject, type MessengerSendRequest, type Tracker, toPlainJson } from '@convotrack/core'
import { heldTurn, reportError } from '@convotrack/core/adapter'

/** A message as a receive/send middleware of a bot framework sees it (Botkit-style: Messenger's own fields, plus the framework's). */
export interface HookMessage {
  [key: string]: unknown
}

/** A bot framework's receive or send middleware: `(bot, message, next)`. */
export type MessengerHook = (bot: unknown, message: HookMessage, next: (error?: unknown) => void) => void

/** Options of {@link receive}. */
export interface ReceiveHookOptions {
  /** Check the tracker's pause store and stop the message (no `next()`) while its sender is paused. Default `true`. */
  pause?: boolean
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The Messenger messaging item inside a framework's message: its `raw_message` when it keeps one, else the message itself. */
function messagingItemOf(message: HookMessage): JsonObject {
  const raw = isObject(message.raw_message) && isObject(message.raw_message.sender) ? message.raw_message : message
  const item = toPlainJson(raw) as JsonObject
  // An NLU middleware's intent travels on the message; keep it only in the spec's shape.
  const intent = message.intent ?? raw.intent
  if (isObject(intent) && typeof intent.name === 'string') item.intent = toPlainJson(intent)
  else if (typeof intent === 'string' && intent !== '') item.intent = { name: intent }
  else delete item.intent
  return item
}

/**
 * Receive middleware for a bot framework with `(bot, message, next)` hooks (Botkit's
 * `controller.middleware.receive.use`). Tracks the message when it runs — place it after your
 * NLU middleware so `message.intent` is set — then runs the rest of the pipeline as one turn.
 * A paused sender's message is tracked and `next()` is not called.
 *
 * @example controller.middleware.receive.use(receive(tracker))
 */
export function receive(tracker: Tracker, options: ReceiveHookOptions = {}): MessengerHook {
  const checkPause = options.pause ?? true
  return (_bot, message, next) => {
    let item: JsonObject | undefined
    let userId: string | undefined
    try {
      item = messagingItemOf(message)
      const sender = item.sender
      userId = isObject(sender) && typeof sender.id === 'string' ? sender.id : undefined
    } catch (error) {
      reportError(tracker, error)
    }
    const paused = checkPause && userId ? tracker.isPaused(userId) : Promise.resolve(false)
    paused
      .then((isPaused) => {
        if (item) {
          try {
            const page = isObject(item.recipient) ? String(item.recipient.id) : ''
            const time = typeof item.timestamp === 'number' ? item.timestamp : Date.now()
            tracker.messenger.logIncoming({ object: 'page', entry: [{ id: page, time, messaging: [item as never] }] })
          } catch (error) {
            reportError(tracker, error)
          }
        }
        if (!isPaused) tracker.withTurn(() => next())
      })
      // A throw from the framework's own next(): rethrown as it was, outside our promise.
      .catch((error: unknown) =>
        queueMicrotask(() => {
          throw error
        }),
      )
  }
}

/** The Send API body of an outgoing framework message: as is when it has `recipient`, else built from Botkit's `channel`/`text`. */
function sendBodyOf(message: HookMessage): MessengerSendRequest['json'] | undefined {
  if (isObject(message.recipient)) {
    if (message.message === undefined) return undefined // a sender action, not a message
    return toPlainJson(message) as MessengerSendRequest['json']
  }
  if (typeof message.channel !== 'string') return toPlainJson(message) as MessengerSendRequest['json'] // invalid: core names the field
  const body: JsonObject = {}
  for (const key of ['text', 'attachment', 'quick_replies', 'metadata'] as const)
    if (message[key] !== undefined) body[key] = toPlainJson(message[key])
  if (Object.keys(body).length === 0) return undefined
  return { recipient: { id: message.channel }, message: body }
}

/**
 * Send middleware for a bot framework with `(bot, message, next)` hooks (Botkit's
 * `controller.middleware.send.use`). Tracks the message about to be sent, with the turn's
 * outgoing intent, then calls `next()`. It runs before the Send API answers, so the record's
 * `responseBody` is empty: use `trackedSendApi` to get `message_id`.
 *
 * @example controller.middleware.send.use(send(tracker))
 */
export function send(tracker: Tracker): MessengerHook {
  return (_bot, message, next) => {
    try {
      const json = sendBodyOf(message)
      if (json) {
        // The held incoming record of the recipient goes first (webhook and botbuilder turns hold it).
        heldTurn(tracker)?.release(isObject(json.recipient) ? String(json.recipient.id) : undefined)
        tracker.messenger.logOutgoing({ method: 'POST', json })
      }
    } catch (error) {
      reportError(tracker, error)
    }
    next()
  }
}
