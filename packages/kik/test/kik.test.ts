/**
 * The hooks against the real @kikinteractive/kik SDK: a real Bot serving its webhook on
 * 127.0.0.1, signed Kik webhook POSTs, the SDK's own send/broadcast whose HTTP calls to
 * api.kik.com are answered by nock, and a real tracking endpoint (the test sink).
 */
import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import util from 'node:util'
import { type ConvotrackError, createTracker, type Tracker, type TrackerOptions } from '@convotrack/core'
import { kikSdkUnsupportedReason, kikTracking } from '@convotrack/kik'
import Bot from '@kikinteractive/kik'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { waitOptions } from '../../../test/support/wait-options'

// The SDK itself cannot run on Node >= 23 (util.isString): there the real-bot tests are skipped,
// with the reason printed, and only our own error is tested.
const SDK_UNSUPPORTED = kikSdkUnsupportedReason()
if (SDK_UNSUPPORTED) console.log(`skipped, real Kik SDK tests: ${SDK_UNSUPPORTED}`)

const KIK_KEY = '3b3fbd8f-1b5b-4c86-9a4c-1f2d6f0e8a11'
const USERNAME = 'convobot'

interface KikApiCall {
  path: string
  messages: Array<Record<string, unknown>>
}

let sink: Sink
let kikApi: KikApiCall[]
const servers: http.Server[] = []
const trackers: Tracker[] = []

beforeAll(async () => {
  sink = await startSink()
  nock.disableNetConnect()
  nock.enableNetConnect('127.0.0.1')
})
afterAll(async () => {
  nock.cleanAll()
  nock.enableNetConnect()
  await sink.close()
})
beforeEach(() => {
  sink.clear()
  kikApi = []
  nock('https://api.kik.com')
    .persist()
    .post(/^\/v1\/(message|broadcast)$/)
    .reply(200, function record(path, body) {
      kikApi.push({ path, messages: (body as { messages: Array<Record<string, unknown>> }).messages })
      return {}
    })
})
afterEach(async () => {
  nock.cleanAll()
  await Promise.all(trackers.splice(0).map((t) => t.close(2000)))
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
})

function newTracker(options: TrackerOptions = {}): { tracker: Tracker; errors: ConvotrackError[] } {
  const errors: ConvotrackError[] = []
  const tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: (e) => errors.push(e), ...options })
  trackers.push(tracker)
  return { tracker, errors }
}

function newBot(): Bot {
  return new Bot({ username: USERNAME, apiKey: KIK_KEY, baseUrl: 'http://127.0.0.1' })
}

/** Serves the bot's real webhook handler and returns a function posting signed Kik webhooks to it. */
async function serve(bot: Bot): Promise<(messages: Array<Record<string, unknown>>) => Promise<number>> {
  const server = http.createServer(bot.incoming())
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return async (messages) => {
    const body = JSON.stringify({ messages })
    const signature = createHmac('sha1', KIK_KEY).update(body).digest('hex').toUpperCase()
    const res = await fetch(`http://127.0.0.1:${port}/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-kik-signature': signature, 'x-kik-username': USERNAME },
      body,
    })
    await res.text()
    return res.status
  }
}

/** A text message as Kik's webhook delivers it. */
function kikText(from: string, body: string, chatId: string, id: string): Record<string, unknown> {
  return {
    chatId,
    id,
    type: 'text',
    from,
    participants: [from],
    body,
    timestamp: 1399303478832,
    readReceiptRequested: true,
    mention: null,
  }
}

const byType = (type: string) => sink.records.filter((r) => r.type === type)

describe.skipIf(SDK_UNSUPPORTED)('logHandler + configHandler on a real Kik bot', () => {
  it('tracks the incoming message and the reply with the spec wire bodies, Kik apiKey blanked', async () => {
    const { tracker, errors } = newTracker()
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    bot.onTextMessage((incoming) => {
      void incoming.reply(`Hello ${incoming.from}`)
    })
    const post = await serve(bot)

    expect(await post([kikText('alice', 'hi', 'chat-1', 'm-1')])).toBe(200)
    await sink.waitFor(2)
    await tracker.flush()

    const [incoming] = byType('incoming')
    expect(incoming).toMatchObject({ platform: 'kik', type: 'incoming', v: '11.1.0-rest', apiKey: 'test-key' })
    expect(incoming?.body).toEqual({
      apiKey: '',
      username: 'convobot',
      message: {
        type: 'text',
        body: 'hi',
        from: 'alice',
        timestamp: 1399303478832,
        mention: null,
        participants: ['alice'],
        readReceiptRequested: true,
        id: 'm-1',
        chatId: 'chat-1',
      },
    })
    const [outgoing] = byType('outgoing')
    expect(outgoing).toMatchObject({ platform: 'kik', type: 'outgoing', v: '11.1.0-rest', apiKey: 'test-key' })
    expect(outgoing?.body).toEqual({
      apiKey: '',
      username: 'convobot',
      message: { type: 'text', body: 'Hello alice', to: 'alice', chatId: 'chat-1' },
    })
    expect(sink.records).toHaveLength(2)
    // Kik received exactly what the bot sent.
    expect(kikApi).toEqual([
      { path: '/v1/message', messages: [{ type: 'text', body: 'Hello alice', to: 'alice', chatId: 'chat-1' }] },
    ])
    expect(errors).toEqual([])
  })

  it('keeps the Kik apiKey with sendPlatformCredentials', async () => {
    const { tracker } = newTracker({ sendPlatformCredentials: true })
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    bot.onTextMessage((incoming) => void incoming.reply('ok'))
    const post = await serve(bot)
    await post([kikText('alice', 'hi', 'chat-1', 'm-1')])
    await sink.waitFor(2)
    expect(sink.records.map((r) => r.body.apiKey)).toEqual([KIK_KEY, KIK_KEY])
  })

  it('logs the incoming message before the replies of its turn, with the turn intents', async () => {
    const { tracker } = newTracker({ concurrency: 1 })
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    bot.onTextMessage((incoming) => {
      tracker.setNotHandled()
      tracker.setOutgoingIntent({ name: 'fallback' })
      void incoming.reply(['Sorry?', 'Try "help"'])
    })
    const post = await serve(bot)
    await post([kikText('bob', 'blorp', 'chat-2', 'm-2')])
    await sink.waitFor(3)
    await tracker.flush()
    // one request at a time: the sink's order is the tracking order
    expect(sink.records.map((r) => [r.type, r.body.intent])).toEqual([
      ['incoming', { name: 'NotHandled' }],
      ['outgoing', { name: 'fallback' }],
      ['outgoing', { name: 'fallback' }],
    ])
    expect(sink.records.slice(1).map((r) => r.body.message)).toEqual([
      { type: 'text', body: 'Sorry?', to: 'bob', chatId: 'chat-2' },
      { type: 'text', body: 'Try "help"', to: 'bob', chatId: 'chat-2' },
    ])
  })

  it('keeps concurrent conversations apart: each turn has its own intents', async () => {
    const { tracker } = newTracker()
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    const users = ['alice', 'bob', 'carol', 'dave']
    // Every turn replies only once all four have started and set their intents; alice last.
    let started = 0
    let allStarted!: () => void
    const everyoneStarted = new Promise<void>((resolve) => {
      allStarted = resolve
    })
    bot.onTextMessage((incoming) => {
      const who = incoming.from
      if (who === 'carol') tracker.setNotHandled()
      // set at once, used after the other conversations' turns have started and set theirs
      tracker.setOutgoingIntent({ name: `answer_${who}` })
      if (++started === users.length) allStarted()
      // alice's turn was the first to start: it answers after the three others have
      const ready = who === 'alice' ? everyoneStarted.then(() => new Promise((r) => setImmediate(r))) : everyoneStarted
      void ready.then(() => incoming.reply(`for ${who}`))
    })
    const post = await serve(bot)
    await Promise.all(users.map((u, i) => post([kikText(u, `q from ${u}`, `chat-${u}`, `m-${i}`)])))
    await sink.waitFor(8)
    await tracker.flush()
    for (const u of users) {
      const inRec = byType('incoming').find((r) => r.body.message.from === u)
      expect(inRec?.body.intent).toEqual(u === 'carol' ? { name: 'NotHandled' } : undefined)
      const outRec = byType('outgoing').find((r) => r.body.message.to === u)
      expect(outRec?.body).toEqual({
        apiKey: '',
        username: 'convobot',
        message: { type: 'text', body: `for ${u}`, to: u, chatId: `chat-${u}` },
        intent: { name: `answer_${u}` },
      })
    }
    expect(sink.records).toHaveLength(8)
  })

  it('pause: a paused chat is tracked and the bot handlers do not run; other chats are answered', async () => {
    const { tracker } = newTracker()
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    const handled: string[] = []
    bot.onTextMessage((incoming) => {
      handled.push(incoming.chatId ?? '')
      void incoming.reply('answer')
    })
    await tracker.pauses.setPaused('chat-paused', true)
    const post = await serve(bot)
    await post([kikText('erin', 'anyone?', 'chat-paused', 'm-p'), kikText('frank', 'hello', 'chat-live', 'm-l')])
    // The paused message is tracked in place of running the handlers: once its record is in,
    // they would have run.
    await sink.waitFor(3)
    await tracker.flush()
    expect(byType('incoming').map((r) => r.body.message.chatId)).toContain('chat-paused')
    expect(handled).toEqual(['chat-live'])
    expect(
      byType('incoming')
        .map((r) => r.body.message.chatId)
        .sort(),
    ).toEqual(['chat-live', 'chat-paused'])
    expect(byType('outgoing').map((r) => r.body.message.to)).toEqual(['frank'])
    await vi.waitFor(() => expect(kikApi.flatMap((c) => c.messages.map((m) => m.to))).toEqual(['frank']), waitOptions)

    await tracker.pauses.setPaused('chat-paused', false)
    await post([kikText('erin', 'back?', 'chat-paused', 'm-p2')])
    await sink.waitFor(5)
    expect(handled).toEqual(['chat-live', 'chat-paused'])
  })

  it('a failing pause store is reported and the bot still answers (fails open)', async () => {
    const { tracker, errors } = newTracker({
      pauses: {
        isPaused: () => Promise.reject(new Error('store down')),
        setPaused: () => undefined,
      },
    })
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    bot.onTextMessage((incoming) => void incoming.reply('still here'))
    const post = await serve(bot)
    await post([kikText('gina', 'hi', 'chat-g', 'm-g')])
    await sink.waitFor(2)
    expect(byType('outgoing')[0]?.body.message.body).toBe('still here')
    expect(errors.map((e) => e.code)).toEqual(['pause_store'])
  })

  it("a handler's own error still surfaces unchanged (uncaught), and its message is tracked", async () => {
    const { tracker, errors } = newTracker()
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
    const boom = new Error('handler bug')
    bot.onTextMessage(() => {
      throw boom
    })
    const saved = process.listeners('uncaughtException')
    process.removeAllListeners('uncaughtException')
    const caught: unknown[] = []
    process.on('uncaughtException', (e) => caught.push(e))
    try {
      const post = await serve(bot)
      await post([kikText('ivan', 'crash please', 'chat-i', 'm-i')])
      await sink.waitFor(1)
      await vi.waitFor(() => expect(caught).toHaveLength(1), waitOptions)
    } finally {
      process.removeAllListeners('uncaughtException')
      for (const l of saved) process.on('uncaughtException', l)
    }
    expect(caught).toEqual([boom])
    expect(sink.records.map((r) => r.body.message.body)).toEqual(['crash please'])
    expect(errors).toEqual([])
  })

  it('does not track receipts and typing by default; events: "all" does', async () => {
    for (const events of ['messages', 'all'] as const) {
      sink.clear()
      const { tracker } = newTracker()
      const bot = newBot()
      const kik = kikTracking(tracker, { events })
      kik.configHandler(bot)
      bot.use(kik.logHandler)
      bot.onTextMessage((incoming) => void incoming.reply([Bot.Message.isTyping(true), 'typed']))
      const post = await serve(bot)
      await post([
        {
          type: 'delivery-receipt',
          from: 'hal',
          chatId: 'chat-h',
          id: 'r-1',
          messageIds: ['x'],
          timestamp: 1,
          participants: ['hal'],
          readReceiptRequested: false,
          mention: null,
        },
        kikText('hal', 'hi', 'chat-h', 'm-h'),
      ])
      // The receipt comes first in the webhook: had it been tracked, that flush delivers it too.
      await sink.waitFor(events === 'all' ? 4 : 2)
      await tracker.flush()
      const types = sink.records.map((r) => `${r.type}:${r.body.message.type}`).sort()
      expect(types).toEqual(
        events === 'all'
          ? ['incoming:delivery-receipt', 'incoming:text', 'outgoing:is-typing', 'outgoing:text']
          : ['incoming:text', 'outgoing:text'],
      )
    }
  })
})

describe.skipIf(SDK_UNSUPPORTED)('configHandler: wrapped send and broadcast', () => {
  it('returns the original promise and sends exactly what the bot asked, one record per message per recipient', async () => {
    const { tracker } = newTracker()
    const bot = newBot()
    const returned: unknown[] = []
    const originalSend = bot.send.bind(bot)
    const originalBroadcast = bot.broadcast.bind(bot)
    bot.send = (...args: Parameters<Bot['send']>) => {
      const p = originalSend(...args)
      returned.push(p)
      return p
    }
    bot.broadcast = (...args: Parameters<Bot['broadcast']>) => {
      const p = originalBroadcast(...args)
      returned.push(p)
      return p
    }
    kikTracking(tracker).configHandler(bot)

    const link = Bot.Message.link('https://example.com/a').addTextResponse('Open', 'Later')
    const linkJsonBefore = JSON.stringify(link.toJSON())
    const plain = { type: 'text', body: 'plain object' }
    const plainBefore = structuredClone(plain)

    const sent = bot.send([Bot.Message.text('one'), plain], 'alice', 'chat-a')
    expect(sent).toBe(returned[0])
    await sent
    const broadcast = bot.broadcast(['news', link], ['bob', 'carol', 'dave'])
    expect(broadcast).toBe(returned[1])
    await broadcast
    await sink.waitFor(8)
    await tracker.flush()

    // nothing added to the bot's objects (no ids, no routing fields)
    expect(plain).toEqual(plainBefore)
    expect(JSON.stringify(link.toJSON())).toBe(linkJsonBefore)

    const linkWire = JSON.parse(linkJsonBefore) as Record<string, unknown>
    const expectedBroadcast = ['bob', 'carol', 'dave'].flatMap((to) => [
      { type: 'text', body: 'news', to },
      { ...linkWire, to },
    ])
    expect(kikApi).toEqual([
      {
        path: '/v1/message',
        messages: [
          { type: 'text', body: 'one', to: 'alice', chatId: 'chat-a' },
          { type: 'text', body: 'plain object', to: 'alice', chatId: 'chat-a' },
        ],
      },
      { path: '/v1/broadcast', messages: expectedBroadcast },
    ])
    const tracked = byType('outgoing').map((r) => r.body)
    expect(tracked).toHaveLength(8)
    expect(tracked).toEqual(
      expect.arrayContaining([
        { apiKey: '', username: 'convobot', message: { type: 'text', body: 'one', to: 'alice', chatId: 'chat-a' } },
        {
          apiKey: '',
          username: 'convobot',
          message: { type: 'text', body: 'plain object', to: 'alice', chatId: 'chat-a' },
        },
        ...expectedBroadcast.map((message) => ({ apiKey: '', username: 'convobot', message })),
      ]),
    )
    // every tracked message is its own record: no record shared between recipients
    expect(new Set(tracked.map((b) => JSON.stringify(b))).size).toBe(8)
  })

  it('configHandler twice on the same bot does not double-track', async () => {
    const { tracker } = newTracker()
    const bot = newBot()
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    kik.configHandler(bot)
    kikTracking(tracker).configHandler(bot)
    await bot.send('once', 'alice') // tracked within the call: a second record would be flushed below
    await sink.waitFor(1)
    await tracker.flush()
    expect(sink.records.map((r) => r.body.message)).toEqual([{ type: 'text', body: 'once', to: 'alice' }])
    expect(kikApi).toHaveLength(1)
  })

  it("lets the SDK's own errors reach the bot unchanged and tracks nothing for them", async () => {
    const { tracker, errors } = newTracker()
    const bot = newBot()
    kikTracking(tracker).configHandler(bot)
    expect(() => bot.send('hi', 'not a username!')).toThrow('"not a username!" is not a valid username')
    expect(() => bot.broadcast('hi', ['ok_user', 'bad user'])).toThrow('"bad user" is not a valid username')
    await tracker.flush()
    expect(sink.records).toEqual([])
    expect(kikApi).toEqual([])
    expect(errors).toEqual([])
  })

  it('a Kik API failure rejects the promise the bot holds, exactly as without tracking', async () => {
    nock.cleanAll()
    nock('https://api.kik.com').post('/v1/message').reply(401, { error: 'Unauthorized' })
    const { tracker } = newTracker()
    const bot = newBot()
    kikTracking(tracker).configHandler(bot)
    await expect(bot.send('hi', 'alice')).rejects.toMatchObject({ statusCode: 401 })
  })
})

describe('a Node the Kik SDK cannot run on (>= 23: no util.isString)', () => {
  it("kikTracking throws our reason, naming the Node version, instead of the SDK's TypeError", () => {
    const u = util as unknown as Record<string, unknown>
    const saved = u.isString
    delete u.isString // what Node 23 did; on Node >= 23 it is already gone
    try {
      expect(kikSdkUnsupportedReason()).toMatch(/Kik SDK .* cannot run on Node v\d+.*util\.isString.*Node 22 or 20/)
      const { tracker } = newTracker()
      expect(() => kikTracking(tracker)).toThrow(kikSdkUnsupportedReason() as string)
    } finally {
      if (saved) u.isString = saved
    }
    if (!SDK_UNSUPPORTED) expect(kikSdkUnsupportedReason()).toBeUndefined()
  })
})
