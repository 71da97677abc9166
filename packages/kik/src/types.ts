/**
 * Structural types of the parts of `@kikinteractive/kik` the hooks touch, so this package
 * never imports the SDK (it is an optional peer dependency and ships no types).
 */
import type { JsonObject } from '@convotrack/core'

/** A message the bot hands to `send`/`broadcast`: plain text, an SDK `Message`, or its wire JSON. */
export type KikOutgoingInput = string | { toJSON(): JsonObject } | JsonObject

/** The SDK's `IncomingMessage` (getters over the JSON Kik posted), as the hooks read it. */
export interface KikIncoming {
  readonly type: string
  readonly body?: string
  readonly from: string
  readonly timestamp?: number
  readonly mention?: string | null
  readonly participants?: string[]
  readonly readReceiptRequested?: boolean
  readonly id?: string
  readonly chatId?: string
  /** The bot the message arrived at (set by the SDK). */
  readonly bot?: Pick<KikBot, 'username' | 'apiKey'>
}

/** A Kik middleware: `bot.use((incoming, next) => …)`. */
export type KikMiddleware = (incoming: KikIncoming, next: () => void) => void

/** The SDK's `Bot`, as `configHandler` wraps it. */
export interface KikBot {
  username: string
  apiKey: string
  send(messages: KikOutgoingInput | KikOutgoingInput[], recipient: string, chatId?: string): Promise<unknown>
  broadcast(messages: KikOutgoingInput | KikOutgoingInput[], recipients: string | string[]): Promise<unknown>
}

/** Options of {@link kikTracking}. */
export interface KikTrackingOptions {
  /**
   * `'messages'` (default) tracks conversation messages only; `'all'` also tracks receipts
   * and typing indicators (`delivery-receipt`, `read-receipt`, `is-typing`) both ways.
   */
  events?: 'messages' | 'all'
  /** The pause key of an incoming message. Default: its `chatId` (else its sender). */
  pauseKey?: (incoming: KikIncoming) => string | undefined
}

/** What {@link kikTracking} returns. */
export interface KikTracking {
  /** Wraps `bot.send` and `bot.broadcast` so every message the bot sends is tracked. Idempotent per bot. */
  configHandler<B extends KikBot>(bot: B): B
  /** Middleware that tracks every incoming message and holds paused chats: `bot.use(kik.logHandler)`, first. */
  readonly logHandler: KikMiddleware
}
