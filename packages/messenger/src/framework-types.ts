/**
 * The few members of Express and botbuilder objects this package touches, written as
 * structural types (the Sentry way) so the published typings never import an optional peer:
 * a raw-webhook bot need not install botbuilder, a botbuilder bot need not install Express.
 * Express's `Request`/`Response` and botbuilder's `TurnContext`/`Activity` fit them.
 */

/** The request as an Express-style handler sees it, after `express.json()`. */
export interface WebhookRequest {
  body?: unknown
}

/** The response members the webhook middleware uses: Node's `http.ServerResponse` has them all. */
export interface WebhookResponse {
  readonly headersSent: boolean
  statusCode: number
  setHeader(name: string, value: string): unknown
  end(chunk?: string): unknown
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/** Express's `next`. */
export type WebhookNext = (error?: unknown) => void

/** An Express-style middleware: `(req, res, next) => void`. */
export type WebhookMiddleware = (req: WebhookRequest, res: WebhookResponse, next: WebhookNext) => void

/** An account of a botbuilder activity (`from`, `recipient`). */
export interface BotAccount {
  id: string
  name?: string
}

/** The botbuilder `Activity` fields read here. */
export interface BotActivity {
  type?: string
  id?: string
  text?: string
  channelId?: string
  from?: BotAccount
  recipient?: BotAccount
  conversation?: { id: string }
  channelData?: unknown
  timestamp?: Date | string
  attachments?: unknown[]
}

/** botbuilder's `ResourceResponse`: the id the channel gave a sent activity. */
export interface BotResourceResponse {
  id: string
}

/** botbuilder's `SendActivitiesHandler`; it must return `next()`'s result. */
export type BotSendActivitiesHandler = (
  context: unknown,
  activities: Partial<BotActivity>[],
  next: () => Promise<BotResourceResponse[]>,
) => Promise<BotResourceResponse[]>

/** The botbuilder `TurnContext` members the middleware uses. */
export interface BotTurnContext {
  readonly activity: BotActivity
  onSendActivities(handler: BotSendActivitiesHandler): unknown
}
