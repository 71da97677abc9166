/**
 * A Kik bot on the real @kikinteractive/kik SDK, tracked with @convotrack/kik. The bot serves
 * its real webhook (signed by Kik's rules) on 127.0.0.1; Kik's own API (api.kik.com), which
 * cannot be reached from here, is answered by a nock stand-in that records what the bot sent.
 */
import { createHmac } from 'node:crypto'
import { createTracker } from '@convotrack/core'
import { pauseReceiver } from '@convotrack/express'
import { kikTracking } from '@convotrack/kik'
import Bot from '@kikinteractive/kik'
import nock from 'nock'
import type { ExampleBot, ExampleBotOptions } from '../../contract'
import { type Served, serve } from '../../serve'

const USERNAME = 'convotrack.shop'
/** A Kik API key has the shape of a UUID; this one is the example's own. */
const KIK_API_KEY = '6d1c0c5e-2f6b-4a8e-9b53-0f5e8e3f2a71'

/** What the bot knows about its users (a real bot would call bot.getUserProfile). */
const PROFILES: Record<string, { firstName: string; locale: string }> = {
  alice: { firstName: 'Alice', locale: 'en_GB' },
  bob: { firstName: 'Bob', locale: 'en_US' },
}

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const print = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })

  // Kik's API stand-in: every message the SDK posts to /v1/message or /v1/broadcast.
  const kikSent: Array<{ to: string; body: string }> = []
  const kikApi = nock('https://api.kik.com')
    .persist()
    .post(/^\/v1\/(message|broadcast)$/)
  kikApi.reply(200, (_path, body) => {
    for (const m of (body as { messages: Array<{ to: string; body?: string; type: string }> }).messages)
      kikSent.push({ to: m.to, body: m.body ?? `[${m.type}]` })
    return {}
  })

  const bot = new Bot({ username: USERNAME, apiKey: KIK_API_KEY, baseUrl: 'http://127.0.0.1' })
  const kik = kikTracking(tracker)
  kik.configHandler(bot) // tracks bot.send / bot.broadcast (and so incoming.reply)
  bot.use(kik.logHandler) // first: tracks each incoming message, holds paused chats

  /** Replies in progress per incoming message id, so `say()` knows when the bot is done. */
  const replying = new Map<string, Promise<unknown>>()

  bot.use((incoming, next) => {
    const profile = PROFILES[incoming.from]
    if (profile) tracker.setUserMetadata(profile)
    next()
  })
  bot.onTextMessage((incoming) => {
    const text = incoming.body ?? ''
    const order = /order\s*#?(\d+)/i.exec(text)
    let reply: Bot.Sendable
    if (/^(hi|hello|hey)\b/i.test(text)) {
      tracker.setOutgoingIntent({ name: 'greet' })
      reply = Bot.Message.text(
        `Hi ${PROFILES[incoming.from]?.firstName ?? 'there'}! Ask me where your order is.`,
      ).addTextResponse('Where is order 1234?', 'Help')
    } else if (order?.[1]) {
      tracker.setOutgoingIntent({ name: 'order_status', inputs: [{ name: 'order', value: order[1] }], confidence: 0.9 })
      tracker.logEvent(
        { type: 'customEvent', name: 'order_lookup', userId: incoming.from, extraInfo: { order: order[1] } },
        { platform: 'kik' },
      )
      reply = `Order ${order[1]} left our warehouse today and arrives tomorrow.`
    } else if (/thank/i.test(text)) {
      tracker.setOutgoingIntent({ name: 'thanks' })
      reply = 'You are welcome!'
    } else {
      tracker.setNotHandled()
      reply = 'Sorry, I didn\'t get that. Try "where is order 1234".'
    }
    replying.set(incoming.id ?? '', incoming.reply(reply))
  })

  const webhook = await serve(bot.incoming())

  let pause: Served | undefined
  if (options.webhookSecret) {
    const receive = pauseReceiver({ store: tracker.pauses, secret: options.webhookSecret })
    pause = await serve((req, res) => {
      if (req.method === 'POST' && req.url === '/convotrack/pause') return void receive(req, res)
      res.statusCode = 404
      res.end()
    })
  }

  /** Resolves once the tracker has dealt with the incoming record of message `id` (delivered or failed). */
  const incomingTracked = (id: string) =>
    new Promise<void>((resolve) => {
      const mine = (r: { type: string; body?: string } | undefined) =>
        r?.type === 'incoming' && r.body?.includes(`"id":"${id}"`) === true
      const finish = () => {
        tracker.off('sent', onSent)
        tracker.off('error', onError)
        resolve()
      }
      const onSent = (r: { type: string; body: string }) => mine(r) && finish()
      const onError = (_e: unknown, r?: { type: string; body?: string }) => mine(r) && finish()
      tracker.on('sent', onSent)
      tracker.on('error', onError)
    })

  let seq = 0
  async function say(userId: string, text: string): Promise<string[]> {
    const id = `msg-${++seq}`
    const chatId = `chat-${userId}`
    const before = kikSent.length
    const tracked = incomingTracked(id)
    const body = JSON.stringify({
      messages: [
        {
          chatId,
          id,
          type: 'text',
          from: userId,
          participants: [userId],
          body: text,
          timestamp: Date.now(),
          readReceiptRequested: true,
          mention: null,
        },
      ],
    })
    const res = await fetch(`${webhook.url}/incoming`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-kik-username': USERNAME,
        'x-kik-signature': createHmac('sha1', KIK_API_KEY).update(body).digest('hex').toUpperCase(),
      },
      body,
    })
    if (res.status !== 200) throw new Error(`Kik webhook answered ${res.status}`)
    await tracked
    await replying.get(id)
    replying.delete(id)
    const replies = kikSent
      .slice(before)
      .filter((m) => m.to === userId)
      .map((m) => m.body)
    print(`${userId}: ${text}`)
    for (const r of replies) print(`  bot: ${r}`)
    if (replies.length === 0) print('  (no answer: paused)')
    return replies
  }

  return {
    name: 'kik',
    tracker,
    say,
    async converse() {
      await say('alice', 'hi')
      await say('alice', 'where is order 1234?')
      await say('alice', 'can you sing?')
      await say('alice', 'thanks')
      await say('bob', 'hello')
      await bot.broadcast('The shop opens at 9 tomorrow.', ['alice', 'bob'])
      print('broadcast to alice, bob: The shop opens at 9 tomorrow.')
    },
    pauseWebhookUrl: pause ? `${pause.url}/convotrack/pause` : undefined,
    async close() {
      await tracker.close()
      await webhook.close()
      await pause?.close()
      nock.removeInterceptor(kikApi)
    },
  }
}
