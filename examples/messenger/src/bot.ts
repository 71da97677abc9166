/**
 * A raw Messenger webhook bot (Express), tracked with @convotrack/messenger: the webhook
 * middleware for incoming events, the tracked Send API for replies, pause through the
 * @convotrack/express receiver. `say()` posts real webhook bodies to the real app.
 */
import { createTracker, type MessengerWebhookBody } from '@convotrack/core'
import { pauseReceiver } from '@convotrack/express'
import { MessengerSendError, messengerWebhook, trackedSendApi } from '@convotrack/messenger'
import express from 'express'
import type { ExampleBot, ExampleBotOptions } from '../../contract'
import { type Served, serve } from '../../serve'
import { startGraphApiStandIn } from './graph-api-stand-in'

const PAGE_ID = '104857600000001'
const PAGE_ACCESS_TOKEN = 'EAAexample-page-token'
const VERIFY_TOKEN = 'example-verify-token'

/** What the bot knows about its users (a real bot would ask the User Profile API). */
const PROFILES: Record<string, { firstName: string; locale: string }> = {
  PSID_ADA: { firstName: 'Ada', locale: 'en_GB' },
  PSID_GRACE: { firstName: 'Grace', locale: 'en_US' },
}

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const print = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })
  const graph = await startGraphApiStandIn()
  const send = trackedSendApi(tracker, { accessToken: PAGE_ACCESS_TOKEN, graphApiUrl: graph.graphApiUrl })

  const app = express()
  // Facebook's subscription check.
  app.get('/webhook', (req, res) => {
    if (req.query['hub.mode'] === 'subscribe' && req.query['hub.verify_token'] === VERIFY_TOKEN)
      res.send(req.query['hub.challenge'])
    else res.sendStatus(403)
  })
  app.post('/webhook', express.json(), messengerWebhook(tracker), async (req, res, next) => {
    try {
      for (const entry of (req.body as MessengerWebhookBody).entry) {
        for (const item of entry.messaging ?? []) await handle(item)
      }
      res.status(200).send('EVENT_RECEIVED')
    } catch (error) {
      next(error)
    }
  })
  const server = await serve(app)

  let pauseServer: Served | undefined
  if (options.webhookSecret) {
    const pauseApp = express() // no express.json(): the receiver verifies the raw bytes
    pauseApp.post('/convotrack/pause', pauseReceiver({ store: tracker.pauses, secret: options.webhookSecret }))
    pauseServer = await serve(pauseApp)
  }

  /** The bot itself: one messaging item at a time. */
  async function handle(item: MessengerWebhookBody['entry'][number]['messaging'][number]): Promise<void> {
    const userId = item.sender.id
    const text = item.message?.text ?? item.postback?.payload
    if (!text || item.message?.is_echo) return
    const profile = PROFILES[userId]
    if (profile) tracker.setUserMetadata(profile)
    let reply: string
    const order = /order\s*#?(\d+)/i.exec(text)
    if (/^(hi|hello|hey|GET_STARTED)\b/i.test(text)) {
      item.intent = { name: 'greet' }
      tracker.setOutgoingIntent({ name: 'greet' })
      reply = `Hi ${profile?.firstName ?? 'there'}! Ask me about an order, e.g. "where is order 1234".`
    } else if (order?.[1]) {
      item.intent = { name: 'order_status', inputs: [{ name: 'order', value: order[1] }], confidence: 0.92 }
      tracker.setOutgoingIntent({ name: 'order_status' })
      tracker.logEvent(
        { type: 'customEvent', name: 'order_lookup', userId, extraInfo: { order: order[1] } },
        { platform: 'facebook' },
      )
      reply = `Order ${order[1]} left our warehouse today and should arrive tomorrow.`
    } else if (/thank/i.test(text)) {
      item.intent = { name: 'thanks' }
      reply = 'You are welcome!'
    } else {
      tracker.setNotHandled()
      reply = 'Sorry, I didn\'t get that. Try "where is order 1234".'
    }
    try {
      await send({ recipient: { id: userId }, messaging_type: 'RESPONSE', message: { text: reply } })
    } catch (error) {
      // The Graph API refused (tracked with its error body); a real bot would log it.
      if (!(error instanceof MessengerSendError)) throw error
      print(`  (send to ${userId} failed: ${error.error.message})`)
    }
  }

  let mid = 0
  async function say(userId: string, text: string): Promise<string[]> {
    const before = graph.sent.length
    const timestamp = Date.now()
    const body = {
      object: 'page',
      entry: [
        {
          id: PAGE_ID,
          time: timestamp,
          messaging: [
            {
              sender: { id: userId },
              recipient: { id: PAGE_ID },
              timestamp,
              message: { mid: `m_user_${++mid}`, text },
            },
          ],
        },
      ],
    }
    const res = await fetch(`${server.url}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (res.status !== 200) throw new Error(`webhook answered ${res.status}`)
    const replies = graph.sent
      .slice(before)
      .filter((m) => m.recipientId === userId)
      .map((m) => m.text ?? '')
    print(`${userId}: ${text}`)
    for (const r of replies) print(`  bot: ${r}`)
    if (replies.length === 0) print('  (no answer: paused)')
    return replies
  }

  return {
    name: 'messenger',
    tracker,
    say,
    async converse() {
      await say('PSID_ADA', 'hi')
      await say('PSID_ADA', 'where is order 1234?')
      await say('PSID_ADA', 'can you sing?')
      await say('PSID_ADA', 'thanks')
      await say('PSID_GRACE', 'hello')
    },
    pauseWebhookUrl: pauseServer ? `${pauseServer.url}/convotrack/pause` : undefined,
    async close() {
      await tracker.close()
      await server.close()
      await pauseServer?.close()
      await graph.close()
    },
  }
}
