import { type MessengerWebhookBody, NOT_HANDLED, type Tracker } from '@convotrack/core'
import { messengerWebhook, trackedSendApi } from '@convotrack/messenger'
import express, { type NextFunction, type Request, type Response } from 'express'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  byType,
  GRAPH,
  type Harness,
  harness,
  listen,
  PAGE_ID,
  post,
  SEND_PATH,
  SEND_URI,
  TOKEN,
  textItem,
  webhookBody,
} from './helpers'

beforeAll(() => {
  nock.disableNetConnect()
  nock.enableNetConnect('127.0.0.1')
})
afterAll(() => nock.enableNetConnect())

/** The Graph API answering every send with the recipient and a message id, as it does. */
function graphApi(times = 1) {
  let n = 0
  return nock(GRAPH)
    .post(SEND_PATH)
    .query({ access_token: TOKEN })
    .times(times)
    .reply(200, (_uri, body) => ({
      recipient_id: (body as { recipient: { id: string } }).recipient.id,
      message_id: `m_out_${++n}`,
    }))
}

type Handler = (req: Request, res: Response) => Promise<void> | void

/** A raw Messenger webhook bot: Express, express.json(), our middleware, the bot's handler. */
async function startBot(h: Harness, handler: Handler, options?: Parameters<typeof messengerWebhook>[1]) {
  const app = express()
  const errors: unknown[] = []
  app.post('/webhook', express.json(), messengerWebhook(h.tracker, options), handler)
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    errors.push(err)
    res.status(500).send('bot error')
  })
  const server = await listen(app)
  return { ...server, webhook: `${server.url}/webhook`, errors }
}

/** The bot's handler in Facebook's sample style: each messaging item, a reply to text. */
function echoBot(tracker: Tracker, seen: MessengerWebhookBody[] = []): Handler {
  const send = trackedSendApi(tracker, { accessToken: TOKEN })
  return async (req, res) => {
    const body = req.body as MessengerWebhookBody
    seen.push(structuredClone(body))
    for (const entry of body.entry) {
      for (const item of entry.messaging) {
        const text = item.message?.text ?? item.postback?.payload
        if (!text || item.message?.is_echo) continue
        if (text === 'hello') {
          item.intent = { name: 'greet', inputs: [{ name: 'greeting', value: 'hello' }], confidence: 0.93 }
          tracker.setOutgoingIntent({ name: 'greet-reply' })
        } else if (text === 'blorp') {
          tracker.setNotHandled()
        }
        await send({ recipient: { id: item.sender.id }, message: { text: `you said ${text}` } })
      }
    }
    res.status(200).send('EVENT_RECEIVED')
  }
}

let h: Harness
beforeEach(async () => {
  h = await harness({ concurrency: 1 }) // one request at a time: the sink sees records in queue order
})
afterEach(async () => {
  nock.cleanAll()
  await h.close()
})

describe('messengerWebhook: incoming bodies as sent, replies after them', () => {
  it('the held incoming record is the tracker’s: flush() during the turn waits for it and counts it at its deadline', async () => {
    const graph = graphApi()
    let inHandler!: () => void
    const handling = new Promise<void>((resolve) => {
      inHandler = resolve
    })
    let finish!: () => void
    const decided = new Promise<void>((resolve) => {
      finish = resolve
    })
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })
    const bot = await startBot(h, async (_req, res) => {
      inHandler()
      await decided // the bot is still thinking: the incoming record is held
      h.tracker.setNotHandled()
      await send({ recipient: { id: 'USER_1' }, message: { text: 'pardon?' } })
      res.status(200).send('EVENT_RECEIVED')
    })
    const answered = post(bot.webhook, webhookBody(textItem('USER_1', 'blorp')))
    await handling
    expect(await h.tracker.flush(20)).toMatchObject({ delivered: false, held: 1 })
    finish()
    const result = await h.tracker.flush(5000)
    expect(result).toMatchObject({ delivered: true, held: 0, pending: 0 })
    expect((await answered).status).toBe(200)
    await bot.close()
    expect(graph.isDone()).toBe(true)
    await h.tracker.flush(5000) // the reply was logged when the Graph API answered
    expect(h.sink.records.map((r) => r.type)).toEqual(['incoming', 'outgoing'])
    expect(h.sink.records[0]?.body.entry[0].messaging[0].intent).toEqual(NOT_HANDLED)
  })

  it('tracks a text message with the intent the bot put on it, then the reply with the Graph API answer', async () => {
    const graph = graphApi()
    const bot = await startBot(h, echoBot(h.tracker))
    const body = webhookBody(textItem('USER_1', 'hello'))
    expect(await post(bot.webhook, body)).toEqual({ status: 200, text: 'EVENT_RECEIVED' })
    await bot.close()
    expect(graph.isDone()).toBe(true)

    const records = await h.records()
    expect(records.map((r) => [r.platform, r.type, r.v, r.apiKey])).toEqual([
      ['facebook', 'incoming', '11.1.0-rest', 'test-key'],
      ['facebook', 'outgoing', '11.1.0-rest', 'test-key'],
    ])
    expect(records[0]?.body).toEqual({
      object: 'page',
      entry: [
        {
          id: PAGE_ID,
          time: 1_700_000_000_500,
          messaging: [
            {
              sender: { id: 'USER_1' },
              recipient: { id: PAGE_ID },
              timestamp: 1_700_000_000_000,
              message: { mid: 'm_USER_1_1700000000000', seq: 12, text: 'hello' },
              intent: { name: 'greet', inputs: [{ name: 'greeting', value: 'hello' }], confidence: 0.93 },
            },
          ],
        },
      ],
    })
    expect(records[1]?.body).toEqual({
      uri: SEND_URI,
      method: 'POST',
      qs: { access_token: '' },
      json: { recipient: { id: 'USER_1' }, message: { text: 'you said hello' } },
      responseBody: { recipient_id: 'USER_1', message_id: 'm_out_1' },
      intent: { name: 'greet-reply' },
    })
    expect(records.some((r) => r.raw.includes(TOKEN))).toBe(false)
    expect(h.errors).toEqual([])
  })

  it('setNotHandled() before the reply marks the message NotHandled', async () => {
    graphApi()
    const bot = await startBot(h, echoBot(h.tracker))
    await post(bot.webhook, webhookBody(textItem('USER_1', 'blorp')))
    await bot.close()
    const [incoming, outgoing] = await h.records()
    expect(incoming?.type).toBe('incoming')
    expect(incoming?.body.entry[0].messaging[0].intent).toEqual({ name: 'NotHandled' })
    expect(outgoing?.type).toBe('outgoing')
    expect(outgoing?.body.intent).toBeUndefined()
  })

  it('a bot that does not reply: the message is tracked when the webhook is answered, with its NotHandled', async () => {
    const bot = await startBot(h, (_req, res) => {
      h.tracker.setNotHandled()
      res.sendStatus(200)
    })
    await post(bot.webhook, webhookBody(textItem('USER_2', '???')))
    await bot.close()
    const records = await h.records()
    expect(records).toHaveLength(1)
    expect(records[0]?.body).toEqual(webhookBodyWith(textItem('USER_2', '???'), NOT_HANDLED))
  })

  it('postbacks and quick replies are tracked; echoes, delivery and read receipts are not — the bot still gets them all', async () => {
    const postback = {
      sender: { id: 'USER_3' },
      recipient: { id: PAGE_ID },
      timestamp: 1_700_000_001_000,
      postback: { mid: 'm_pb', title: 'Get Started', payload: 'GET_STARTED' },
    }
    const quickReply = {
      sender: { id: 'USER_3' },
      recipient: { id: PAGE_ID },
      timestamp: 1_700_000_002_000,
      message: { mid: 'm_qr', text: 'Red', quick_reply: { payload: 'COLOR_RED' } },
    }
    const echo = {
      sender: { id: PAGE_ID },
      recipient: { id: 'USER_3' },
      timestamp: 1_700_000_003_000,
      message: { is_echo: true, app_id: 1517776481860111, mid: 'm_echo', text: 'you said Red' },
    }
    // As Facebook documents it: a delivery receipt has no timestamp.
    const delivery = {
      sender: { id: 'USER_3' },
      recipient: { id: PAGE_ID },
      delivery: { mids: ['m_echo'], watermark: 1_700_000_003_000 },
    }
    const read = {
      sender: { id: 'USER_3' },
      recipient: { id: PAGE_ID },
      timestamp: 1_700_000_004_000,
      read: { watermark: 1_700_000_003_000 },
    }
    graphApi(2)
    const seen: MessengerWebhookBody[] = []
    const bot = await startBot(h, echoBot(h.tracker, seen))
    const body = webhookBody(postback, quickReply, echo, delivery, read)
    await post(bot.webhook, body)
    await bot.close()

    expect(seen).toEqual([body])
    const records = await h.records()
    expect(byType(records, 'incoming').map((r) => r.body)).toEqual([
      { object: 'page', entry: [{ id: PAGE_ID, time: 1_700_000_000_500, messaging: [postback, quickReply] }] },
    ])
    expect(byType(records, 'outgoing').map((r) => r.body.json.message.text)).toEqual([
      'you said GET_STARTED',
      'you said Red',
    ])
    expect(h.errors).toEqual([])
  })

  it("with messengerEvents 'all' the page's echoes and read receipts are tracked too", async () => {
    await h.close()
    h = await harness({ concurrency: 1, messengerEvents: 'all' })
    const echo = {
      sender: { id: PAGE_ID },
      recipient: { id: 'USER_4' },
      timestamp: 1_700_000_003_000,
      message: { is_echo: true, app_id: 1517776481860111, mid: 'm_echo', text: 'hi' },
    }
    const read = {
      sender: { id: 'USER_4' },
      recipient: { id: PAGE_ID },
      timestamp: 1_700_000_004_000,
      read: { watermark: 1 },
    }
    const bot = await startBot(h, (_req, res) => void res.sendStatus(200))
    await post(bot.webhook, webhookBody(echo, read))
    await bot.close()
    const bodies = (await h.records()).map((r) => r.body.entry[0].messaging)
    expect(bodies).toEqual(expect.arrayContaining([[echo], [read]]))
    expect(bodies).toHaveLength(2)
  })

  it('a batched body with two users: one record per user, each just before its reply, intents kept apart', async () => {
    graphApi(2)
    const bot = await startBot(h, echoBot(h.tracker))
    const a = textItem('USER_A', 'blorp', 1_700_000_000_001)
    const b = textItem('USER_B', 'hello', 1_700_000_000_002)
    await post(bot.webhook, webhookBody(a, b))
    await bot.close()
    const records = await h.records()
    const userOf = (r: (typeof records)[number]) =>
      r.type === 'incoming' ? r.body.entry[0].messaging[0].sender.id : r.body.json.recipient.id
    // Order is kept within each conversation (different users' records may interleave).
    const of = (user: string) => records.filter((r) => userOf(r) === user)
    expect(of('USER_A').map((r) => r.type)).toEqual(['incoming', 'outgoing'])
    expect(of('USER_B').map((r) => r.type)).toEqual(['incoming', 'outgoing'])
    expect(records).toHaveLength(4)
    expect(of('USER_A')[0]?.body).toEqual(webhookBodyWith(a, NOT_HANDLED))
    expect(of('USER_B')[0]?.body).toEqual(
      webhookBodyWith(b, { name: 'greet', inputs: [{ name: 'greeting', value: 'hello' }], confidence: 0.93 }),
    )
    expect(of('USER_A')[1]?.body.intent).toBeUndefined()
    expect(of('USER_B')[1]?.body.intent).toEqual({ name: 'greet-reply' })
  })
})

describe('messengerWebhook: pause', () => {
  it('a paused user is tracked and removed from the body; the bot answers the others; unpause restores it', async () => {
    const graph = graphApi(3)
    const seen: MessengerWebhookBody[] = []
    const bot = await startBot(h, echoBot(h.tracker, seen))
    await h.tracker.pauses.setPaused('USER_P', true)

    const p = textItem('USER_P', 'is anyone there?', 1_700_000_000_010)
    const q = textItem('USER_Q', 'hi', 1_700_000_000_020)
    expect(await post(bot.webhook, webhookBody(p, q))).toEqual({ status: 200, text: 'EVENT_RECEIVED' })
    expect(seen).toEqual([webhookBody(q)])

    // Only the paused user's event: nothing for the bot, the middleware answers Facebook itself.
    expect(await post(bot.webhook, webhookBody(textItem('USER_P', 'hello?', 1_700_000_000_030)))).toEqual({
      status: 200,
      text: 'EVENT_RECEIVED',
    })
    expect(seen).toHaveLength(1)

    await h.tracker.pauses.setPaused('USER_P', false)
    await post(bot.webhook, webhookBody(textItem('USER_P', 'back', 1_700_000_000_040)))
    expect(seen).toHaveLength(2)
    await bot.close()

    const records = await h.records()
    const incoming = byType(records, 'incoming').map((r) => r.body.entry[0].messaging[0].message.text)
    expect(incoming).toEqual(['is anyone there?', 'hi', 'hello?', 'back'])
    expect(byType(records, 'incoming')[0]?.body).toEqual(webhookBody(p))
    const replies = byType(records, 'outgoing').map((r) => r.body.json)
    expect(replies).toEqual([
      { recipient: { id: 'USER_Q' }, message: { text: 'you said hi' } },
      { recipient: { id: 'USER_P' }, message: { text: 'you said back' } },
    ])
    expect(graph.pendingMocks()).toHaveLength(1) // 2 of 3 sends used: the paused user got no answer
  })

  it('pause: false leaves every event to the bot', async () => {
    graphApi()
    const seen: MessengerWebhookBody[] = []
    const bot = await startBot(h, echoBot(h.tracker, seen), { pause: false })
    await h.tracker.pauses.setPaused('USER_P', true)
    await post(bot.webhook, webhookBody(textItem('USER_P', 'hi')))
    await bot.close()
    expect(seen).toHaveLength(1)
  })

  it('a failing pause store counts as not paused (reported), the bot answers', async () => {
    await h.close()
    h = await harness({
      concurrency: 1,
      pauses: {
        isPaused: () => Promise.reject(new Error('redis down')),
        setPaused: () => undefined,
      },
    })
    graphApi()
    const seen: MessengerWebhookBody[] = []
    const bot = await startBot(h, echoBot(h.tracker, seen))
    await post(bot.webhook, webhookBody(textItem('USER_1', 'hi')))
    await bot.close()
    expect(seen).toHaveLength(1)
    expect(h.errors.map((e) => e.code)).toEqual(['pause_store'])
    expect((await h.records()).map((r) => r.type)).toEqual(['incoming', 'outgoing'])
  })
})

describe('messengerWebhook: never hurts the bot', () => {
  it('without express.json() the problem is reported and the bot runs', async () => {
    const app = express()
    let ran = false
    app.post('/webhook', messengerWebhook(h.tracker), (_req, res) => {
      ran = true
      res.sendStatus(200)
    })
    const server = await listen(app)
    expect((await post(`${server.url}/webhook`, webhookBody(textItem('U', 'x')))).status).toBe(200)
    await server.close()
    expect(ran).toBe(true)
    expect(h.errors[0]?.message).toMatch(/express\.json\(\) before messengerWebhook/)
    expect(await h.records()).toEqual([])
  })

  it("an invalid item is reported, the bot still gets the body, other users' records still go", async () => {
    const seen: MessengerWebhookBody[] = []
    const bot = await startBot(h, (req, res) => {
      seen.push(req.body)
      res.sendStatus(200)
    })
    const bad = {
      sender: { id: 'USER_BAD' },
      recipient: { id: PAGE_ID },
      timestamp: 'yesterday',
      message: { text: 'x' },
    }
    const good = textItem('USER_OK', 'fine')
    await post(bot.webhook, webhookBody(bad, good))
    await bot.close()
    expect(seen).toEqual([webhookBody(bad, good)])
    expect(h.errors.map((e) => e.code)).toEqual(['invalid_record'])
    expect(h.errors[0]?.message).toMatch(/timestamp/)
    expect((await h.records()).map((r) => r.body)).toEqual([webhookBody(good)])
  })

  it("the bot's own error reaches Express's error handler unchanged; the message is still tracked", async () => {
    const boom = new Error('bot broke')
    const bot = await startBot(h, () => {
      throw boom
    })
    expect((await post(bot.webhook, webhookBody(textItem('USER_1', 'hi')))).status).toBe(500)
    await bot.close()
    expect(bot.errors).toEqual([boom])
    expect((await h.records()).map((r) => r.type)).toEqual(['incoming'])
  })
})

function webhookBodyWith(item: ReturnType<typeof textItem>, intent: object) {
  return webhookBody({ ...item, intent })
}
