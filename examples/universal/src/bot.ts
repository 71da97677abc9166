/**
 * A universal-shape bot: an Express HTTP chat endpoint (`POST /chat` with `{ userId, text,
 * conversationId? }` → `{ replies }`), tracked with `tracker.universal`, serving its pause
 * webhook and the operator's send-message webhook with `@convotrack/express`.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTracker, type Intent, pauseKey } from '@convotrack/core'
import { captureRawBody, operatorMessageReceiver, pauseReceiver } from '@convotrack/express'
import express from 'express'
import type { ExampleBot, ExampleBotOptions } from '../../contract'

/** The parts of Express's request and response this bot uses (Express's own types fit them). */
interface HttpRequest {
  body?: unknown
  params: Record<string, string>
}
interface HttpResponse {
  status(code: number): HttpResponse
  json(body: unknown): unknown
}

interface ChatRequest {
  userId: string
  text: string
  conversationId?: string
}

/** The bot's "understanding": a few patterns; anything else is NotHandled. */
function understand(text: string): { intent: Intent; reply: string } | undefined {
  const order = /order\s+#?(\d+)/i.exec(text)
  if (order)
    return {
      intent: { name: 'order_status', inputs: [{ name: 'order', value: order[1] as string }], confidence: 0.93 },
      reply: `Order ${order[1]} ships tomorrow.`,
    }
  if (/^(hi|hello|hey)\b/i.test(text))
    return { intent: { name: 'greet', confidence: 0.99 }, reply: 'Hello! How can I help?' }
  if (/thank/i.test(text)) return { intent: { name: 'thanks', confidence: 0.97 }, reply: 'You are welcome.' }
  return undefined
}

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const log = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })
  /** Operator messages waiting for the user's client to fetch them (a chat widget would poll). */
  const inbox = new Map<string, string[]>()

  const app = express()
  if (options.webhookSecret) {
    // Before the JSON parser: the receivers read the raw bytes themselves.
    app.post('/convotrack/pause', pauseReceiver({ store: tracker.pauses, secret: options.webhookSecret }))
    app.post(
      '/convotrack/message',
      operatorMessageReceiver({
        secret: options.webhookSecret,
        onMessage: ({ userId, text }) => {
          tracker.universal.logOutgoing({ userId, text }) // sent as if from the bot
          inbox.set(userId, [...(inbox.get(userId) ?? []), text])
          log(`operator → ${userId}: ${text}`)
        },
      }),
    )
  }
  app.use(express.json({ verify: captureRawBody }))

  app.post('/chat', async (req: HttpRequest, res: HttpResponse) => {
    const { userId, text, conversationId } = (req.body ?? {}) as Partial<ChatRequest>
    if (typeof userId !== 'string' || typeof text !== 'string') {
      res.status(400).json({ error: { code: 'invalid_body', message: 'expected { userId: string, text: string }' } })
      return
    }
    const replies = await tracker.withTurn(async () => {
      const understood = understand(text)
      // Tracking calls never throw into the bot (a bad record goes to onError and is counted).
      if (understood) tracker.universal.logIncoming({ userId, text, conversationId }, { intent: understood.intent })
      else tracker.universal.logIncoming({ userId, text, conversationId }, { notHandled: true })
      if (await tracker.isPaused(pauseKey({ userId, conversationId }))) {
        log(`${userId}: "${text}" (paused: a person answers)`)
        return []
      }
      const reply = understood?.reply ?? "Sorry, I didn't get that."
      tracker.universal.logOutgoing({ userId, text: reply, conversationId })
      log(`${userId}: "${text}" → "${reply}"`)
      return [reply]
    })
    res.json({ replies })
  })
  app.get('/chat/:userId/inbox', (req: HttpRequest, res: HttpResponse) => {
    const userId = req.params.userId ?? ''
    const messages = inbox.get(userId) ?? []
    inbox.delete(userId)
    res.json({ messages })
  })

  const server = http.createServer(app)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const say = async (userId: string, text: string, conversationId?: string): Promise<string[]> => {
    const res = await fetch(`${base}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId, text, conversationId }),
    })
    if (!res.ok) throw new Error(`chat endpoint answered ${res.status}: ${await res.text()}`)
    return ((await res.json()) as { replies: string[] }).replies
  }

  const bot: ExampleBot = {
    name: 'universal',
    tracker,
    say: (userId, text) => say(userId, text),
    async converse() {
      const ada = 'web-ada'
      await tracker.withTurn(async () => {
        tracker.setUserMetadata({ firstName: 'Ada', locale: 'en-GB', plan: 'pro' })
        tracker.universal.logIncoming({ userId: ada, text: 'opened the chat widget', sessionId: 'sess-1' })
      })
      await say(ada, 'hello there', 'conv-ada-1')
      await say(ada, 'where is my order #1234?', 'conv-ada-1')
      tracker.logEvent({
        type: 'customEvent',
        name: 'order_lookup',
        userId: ada,
        conversationId: 'conv-ada-1',
        extraInfo: { order: '1234' },
      })
      await say(ada, 'can you sing?', 'conv-ada-1')
      await say(ada, 'thanks!', 'conv-ada-1')
      tracker.logEvent({ type: 'revenueEvent', name: 'upgrade', userId: ada, amount: 9.99, referenceNumber: 'inv-77' })
    },
    async close() {
      await tracker.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  if (options.webhookSecret) {
    bot.pauseWebhookUrl = `${base}/convotrack/pause`
    bot.operatorMessageUrl = `${base}/convotrack/message`
  }
  return bot
}
