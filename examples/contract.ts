/**
 * What every example bot exports, so the demo (scripts/demo.ts) and the end-to-end tests can
 * start it, drive it through its real framework and mount its pause webhook.
 */
import type { Tracker } from '@convotrack/core'

export interface ExampleBotOptions {
  /** Base URL of the tracking service (the local collector). */
  trackingUrl: string
  /** The bot's tracking key as registered in the collector. */
  apiKey: string
  /** Pause webhook secret (whsec_…) the collector signs with; when set, the bot serves a pause receiver. */
  webhookSecret?: string
  /** Log to stdout what the bot does (default true for `main.ts`, false in tests). */
  verbose?: boolean
}

export interface ExampleBot {
  /** Short platform name: 'alexa', 'slack', 'messenger', 'botbuilder', 'kik', 'universal'. */
  name: string
  /** The tracker this bot uses (its `pauses` store is what the pause webhook changes). */
  tracker: Tracker
  /**
   * Sends one user message through the real framework (a signed Events API request, a skill
   * envelope, a webhook POST, a botbuilder turn…) and resolves with the bot's text replies,
   * empty when the bot did not answer (paused).
   */
  say(userId: string, text: string): Promise<string[]>
  /** Runs a short realistic scripted conversation (greetings, an intent, a NotHandled input, an event, user metadata). */
  converse(): Promise<void>
  /** URL of this bot's pause webhook (served on 127.0.0.1), when `webhookSecret` was given. */
  pauseWebhookUrl?: string
  /** URL of this bot's operator send-message route ("sent as if from the bot"), when it serves one. */
  operatorMessageUrl?: string
  /** Flushes the tracker and stops every server the bot started. */
  close(): Promise<void>
}
