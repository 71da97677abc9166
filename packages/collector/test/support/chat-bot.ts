/**
 * A small real bot for the end-to-end tests: an Express app on 127.0.0.1 that answers
 * `POST /chat { userId, text }`, tracks every message with a real core tracker (universal
 * shape), checks the pause store for each message, and serves the pause webhook and the
 * operator's send-message route with the real @convotrack/express receivers.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Collector } from '@convotrack/collector'
import { createTracker, generateWebhookSecret, type Tracker } from '@convotrack/core'
import { operatorMessageReceiver, pauseReceiver } from '@convotrack/express'
import express from 'express'

export interface ChatBot {
  url: string
  tracker: Tracker
  pauseWebhookUrl: string
  operatorMessageUrl: string
  /** What the operator sent, as the bot delivered it to the user. */
  operatorMessages: Array<{ userId: string; text: string }>
  /** Every pause webhook call the receiver accepted, in order. */
  pauseCalls: Array<{ userId: string; paused: boolean }>
  /** One user message; resolves with the bot's replies (empty while paused). */
  say(userId: string, text: string, platformUserJson?: Record<string, unknown>): Promise<string[]>
  close(): Promise<void>
}

function understand(text: string): { intent?: { name: string; confidence: number }; reply?: string } {
  const t = text.toLowerCase()
  if (/\b(hi|hello|hey)\b/.test(t))
    return { intent: { name: 'greeting', confidence: 0.97 }, reply: 'Hello! Ask me about your order.' }
  if (/order/.test(t))
    return { intent: { name: 'order.status', confidence: 0.82 }, reply: 'Your order ships tomorrow.' }
  return {}
}

export async function startChatBot(options: {
  trackingUrl: string
  apiKey: string
  webhookSecret: string
}): Promise<ChatBot> {
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })
  const operatorMessages: ChatBot['operatorMessages'] = []
  const pauseCalls: ChatBot['pauseCalls'] = []
  const app = express()
  app.post(
    '/convotrack/pause',
    pauseReceiver({
      store: tracker.pauses,
      secret: options.webhookSecret,
      onPause: ({ userId, paused }) => void pauseCalls.push({ userId, paused }),
    }),
  )
  app.post(
    '/convotrack/message',
    operatorMessageReceiver({
      secret: options.webhookSecret,
      onMessage: ({ userId, text }) => {
        // "Sent as if from the bot": delivered to the user and tracked like any bot message.
        operatorMessages.push({ userId, text })
        tracker.universal.logOutgoing({ userId, text })
      },
    }),
  )
  app.post('/chat', express.json(), async (req, res) => {
    const { userId, text, platformUserJson } = req.body as {
      userId: string
      text: string
      platformUserJson?: Record<string, unknown>
    }
    const replies = await tracker.withTurn(async () => {
      const { intent, reply } = understand(text)
      const paused = await tracker.isPaused(userId)
      const incoming = platformUserJson ? { userId, text, platformUserJson } : { userId, text }
      tracker.universal.logIncoming(incoming, intent ? { intent } : { notHandled: true })
      if (paused) return []
      const answer = reply ?? "Sorry, I didn't get that."
      tracker.universal.logOutgoing({
        userId,
        text: answer,
        buttons: reply ? [] : [{ id: 'help', label: 'Talk to a human', value: 'human' }],
      })
      return [answer]
    })
    await tracker.flush()
    res.json({ replies })
  })
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    tracker,
    pauseWebhookUrl: `${url}/convotrack/pause`,
    operatorMessageUrl: `${url}/convotrack/message`,
    operatorMessages,
    pauseCalls,
    async say(userId, text, platformUserJson) {
      const res = await fetch(`${url}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userId, text, platformUserJson }),
      })
      return ((await res.json()) as { replies: string[] }).replies
    },
    async close() {
      await tracker.close()
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

/**
 * The `shop` chat bot (tracking key `shop-key`) tracking into `collector`, registered there with
 * its pause and operator-message webhooks and a fresh signing secret.
 */
export async function startShopBot(collector: Collector): Promise<ChatBot> {
  const secret = generateWebhookSecret()
  const bot = await startChatBot({ trackingUrl: collector.url, apiKey: 'shop-key', webhookSecret: secret })
  collector.addBot({
    name: 'shop',
    apiKey: 'shop-key',
    pauseWebhookUrl: bot.pauseWebhookUrl,
    webhookSecret: secret,
    operatorMessageUrl: bot.operatorMessageUrl,
  })
  return bot
}
