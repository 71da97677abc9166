import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import type { WebhookRetryOptions } from '../options'
import type { PauseState, RecordStore } from '../store/store'
import type { LiveFeed } from './live-feed'
import { postWebhook } from './webhook-client'

/**
 * Live-person takeover (spec: States and transitions): Pause / Unpause call the bot's pause
 * webhook with `{ userId, paused }`, the operator's message goes to its send-message route.
 * State changes only once the bot acknowledged (2xx), after retries.
 *
 * @example await takeover.setPaused('demo', 'u1', true) // → { paused: true, attempts: 1, … }
 */
export class Takeover {
  constructor(
    private readonly deps: {
      bots: BotRegistry
      store: RecordStore
      feed: LiveFeed
      retry: WebhookRetryOptions | undefined
      /** Told of every pause state the bot acknowledged (the handoff desk restarts the idle time). */
      onPause?: (state: PauseState) => void
    },
  ) {}

  /** Pauses or unpauses one transcript. `thread` is the conversation id when one is sent, else the user id. */
  async setPaused(botName: string, thread: string, paused: boolean): Promise<PauseState & { attempts: number }> {
    const bot = this.deps.bots.get(botName)
    if (!bot) throw new RequestError(404, 'not_found', `no bot named "${botName}"`, 'bot')
    if (!bot.pauseWebhookUrl)
      throw new RequestError(
        409,
        'no_webhook',
        `bot "${botName}" has no pause webhook URL: register pauseWebhookUrl for it`,
        'bot',
      )
    const result = await postWebhook(
      bot.pauseWebhookUrl,
      { userId: thread, paused },
      { secret: bot.webhookSecret, retry: this.deps.retry },
    )
    if (!result.ok)
      throw new RequestError(
        502,
        'webhook_failed',
        `pause webhook failed after ${result.attempts} attempt(s): ${result.error}`,
        'pauseWebhookUrl',
      )
    const state = await this.deps.store.setPaused(botName, thread, paused)
    this.deps.feed.publish('pause', state, botName)
    this.deps.onPause?.(state)
    return { ...state, attempts: result.attempts }
  }

  /** Sends the operator's text "as if from the bot" through the bot's send-message route. */
  async sendMessage(botName: string, thread: string, text: string): Promise<{ attempts: number }> {
    const bot = this.deps.bots.get(botName)
    if (!bot) throw new RequestError(404, 'not_found', `no bot named "${botName}"`, 'bot')
    if (!bot.operatorMessageUrl)
      throw new RequestError(
        409,
        'no_webhook',
        `bot "${botName}" has no operator message URL: register operatorMessageUrl for it`,
        'bot',
      )
    const result = await postWebhook(
      bot.operatorMessageUrl,
      { userId: thread, text },
      { secret: bot.webhookSecret, retry: this.deps.retry },
    )
    if (!result.ok)
      throw new RequestError(
        502,
        'webhook_failed',
        `operator message failed after ${result.attempts} attempt(s): ${result.error}`,
        'operatorMessageUrl',
      )
    return { attempts: result.attempts }
  }
}
