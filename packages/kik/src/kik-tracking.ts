import type { Tracker } from '@convotrack/core'
import { heldTurn, holdTurn, reportError } from '@convotrack/core/adapter'
import { asArray, incomingRecord, isSignalMessage, outgoingRecords } from './records'
import { kikSdkUnsupportedReason } from './sdk-support'
import type { KikBot, KikIncoming, KikMiddleware, KikOutgoingInput, KikTracking, KikTrackingOptions } from './types'

/** Bots already wrapped, per tracker: `configHandler` twice must not track twice. */
const configured = new WeakMap<object, WeakSet<Tracker>>()

/**
 * Kik hooks (spec 4.3, "configHandler(bot), logHandler"): `configHandler(bot)` tracks every
 * `bot.send` / `bot.broadcast`, `logHandler` tracks every incoming message and keeps a paused
 * chat's messages away from the bot's handlers.
 *
 * Throws on a Node where the Kik SDK cannot run (Node ≥ 23; see `kikSdkUnsupportedReason`).
 *
 * @example
 * const kik = kikTracking(tracker); kik.configHandler(bot); bot.use(kik.logHandler)
 */
export function kikTracking(tracker: Tracker, options: KikTrackingOptions = {}): KikTracking {
  const unsupported = kikSdkUnsupportedReason()
  if (unsupported) throw new Error(unsupported)
  const trackSignals = options.events === 'all'
  const keyOf = options.pauseKey ?? ((m: KikIncoming) => m.chatId || m.from || undefined)
  let defaultBot: Pick<KikBot, 'username' | 'apiKey'> | undefined

  const safely = (fn: () => void): void => {
    try {
      fn()
    } catch (error) {
      reportError(tracker, error, { platform: 'kik', type: 'outgoing', userId: undefined })
    }
  }

  const trackOutgoing = (bot: KikBot, messages: unknown, recipients: unknown, chatId: unknown): void => {
    const wanted = asArray<KikOutgoingInput>(messages as KikOutgoingInput).filter(
      (m) => trackSignals || typeof m === 'string' || !isSignalMessage(wireType(m)),
    )
    if (wanted.length === 0) return
    const records = outgoingRecords(
      wanted,
      asArray<string>(recipients as string),
      typeof chatId === 'string' ? chatId : undefined,
      bot,
    )
    const log = () => {
      for (const record of records) safely(() => tracker.kik.logOutgoing(record))
    }
    // Inside the handlers' synchronous part the turn's buffer is open: the reply waits for the message.
    const held = heldTurn(tracker)
    if (held) held.hold(log)
    else log()
  }

  const configHandler = <B extends KikBot>(bot: B): B => {
    const trackers = configured.get(bot) ?? new WeakSet<Tracker>()
    if (trackers.has(tracker)) return bot
    configured.set(bot, trackers)
    trackers.add(tracker)
    defaultBot = bot
    const send = bot.send
    const broadcast = bot.broadcast
    // The originals run first and their result (or their throw) is the bot's, untouched;
    // only a message the SDK accepted is tracked.
    bot.send = function trackedSend(this: KikBot, messages, recipient, chatId) {
      const result = send.apply(this, [messages, recipient, chatId] as Parameters<KikBot['send']>)
      safely(() => trackOutgoing(this ?? bot, messages, recipient, chatId))
      return result
    } as B['send']
    bot.broadcast = function trackedBroadcast(this: KikBot, messages, recipients) {
      const result = broadcast.apply(this, [messages, recipients] as Parameters<KikBot['broadcast']>)
      safely(() => trackOutgoing(this ?? bot, messages, recipients, undefined))
      return result
    } as B['broadcast']
    return bot
  }

  const logIncoming = (incoming: KikIncoming): void => {
    if (!trackSignals && isSignalMessage(incoming.type)) return
    const bot = incoming.bot ?? defaultBot
    try {
      tracker.kik.logIncoming(incomingRecord(incoming, { username: bot?.username ?? '', apiKey: bot?.apiKey }))
    } catch (error) {
      reportError(tracker, error, { platform: 'kik', type: 'incoming', userId: incoming.from })
    }
  }

  const handle = async (incoming: KikIncoming, next: () => void): Promise<void> => {
    if (await tracker.isPaused(keyOf(incoming))) {
      // Paused by an operator: tracked, and the bot's handlers never see it.
      logIncoming(incoming)
      return
    }
    // The message is held while the handlers' synchronous part runs, so a `tracker.setNotHandled()`
    // in it marks this message; replies it sends are held behind it, in order.
    const held = holdTurn(tracker)
    held.hold(() => logIncoming(incoming))
    let thrown: { error: unknown } | undefined
    try {
      next()
    } catch (error) {
      thrown = { error }
    }
    held.end()
    // A handler's own error surfaces as it would without tracking: uncaught, unchanged.
    if (thrown) process.nextTick(rethrow, thrown.error)
  }

  const logHandler: KikMiddleware = (incoming, next) => {
    tracker.withTurn(() => {
      handle(incoming, next).catch((error: unknown) =>
        reportError(tracker, error, { platform: 'kik', type: 'incoming', userId: undefined }),
      )
    })
  }

  return { configHandler, logHandler }
}

function wireType(message: Exclude<KikOutgoingInput, string>): unknown {
  const json = typeof message.toJSON === 'function' ? (message.toJSON as () => { type?: unknown })() : message
  return (json as { type?: unknown }).type
}

function rethrow(error: unknown): never {
  throw error
}
