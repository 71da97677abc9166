import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Collector, startCollector } from '@convotrack/collector'
import { generateWebhookSecret, MemoryPauseStore, verifyPauseWebhook } from '@convotrack/core'
import { operatorMessageReceiver, pauseReceiver } from '@convotrack/express'
import express from 'express'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

// The receiver side is the real @convotrack/express receiver on a real Express app.
const secret = generateWebhookSecret()
const pauses = new MemoryPauseStore()
const pauseCalls: Array<{ userId: string; paused: boolean; webhookId: string | undefined }> = []
const operatorMessages: Array<{ userId: string; text: string }> = []
const flaky = { failuresLeft: 0, ids: [] as string[] }
let bot: Server
let botUrl = ''
let collector: Collector

async function listen(app: express.Express): Promise<{ server: Server; url: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

beforeAll(async () => {
  const app = express()
  const receiver = pauseReceiver({ store: pauses, secret, onPause: (c) => pauseCalls.push(c) })
  app.post('/pause', receiver)
  // Fails the first `failuresLeft` deliveries with 503, then lets the real receiver answer.
  app.post('/flaky-pause', (req, res, next) => {
    flaky.ids.push(String(req.headers['webhook-id']))
    if (flaky.failuresLeft > 0) {
      flaky.failuresLeft--
      req.resume()
      res.status(503).send('busy')
      return
    }
    receiver(req, res, next)
  })
  app.post(
    '/message',
    operatorMessageReceiver({
      secret,
      onMessage: (m) => void operatorMessages.push({ userId: m.userId, text: m.text }),
    }),
  )
  ;({ server: bot, url: botUrl } = await listen(app))
  collector = await startCollector({
    port: 0,
    webhookRetry: { attempts: 3, baseDelayMs: 10, timeoutMs: 2000 },
    bots: [
      {
        name: 'shop',
        apiKey: 'shop-key',
        pauseWebhookUrl: `${botUrl}/pause`,
        webhookSecret: secret,
        operatorMessageUrl: `${botUrl}/message`,
      },
      { name: 'flaky', apiKey: 'flaky-key', pauseWebhookUrl: `${botUrl}/flaky-pause`, webhookSecret: secret },
      {
        name: 'wrong-secret',
        apiKey: 'ws-key',
        pauseWebhookUrl: `${botUrl}/pause`,
        webhookSecret: generateWebhookSecret(),
      },
      { name: 'gone', apiKey: 'gone-key', pauseWebhookUrl: 'http://127.0.0.1:9/pause', webhookSecret: secret },
      { name: 'plain', apiKey: 'plain-key' },
    ],
  })
})
afterAll(async () => {
  await collector.close()
  await new Promise((r) => bot.close(r))
})
afterEach(() => {
  pauseCalls.length = 0
})

async function api(path: string, body: unknown) {
  const res = await fetch(`${collector.url}/api/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

async function trackSlack(channel: string, user: string, text: string, apiKey = 'shop-key') {
  const body = {
    team: { id: 'T' },
    bot: { id: 'B' },
    message: { type: 'message', channel, user, text, ts: (Date.now() / 1000).toFixed(6) },
  }
  const res = await fetch(`${collector.url}/track?platform=slack&type=incoming&v=11.1.0-rest&apiKey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(201)
}

describe('Pause / Unpause call the bot’s signed pause webhook', () => {
  it('pause: the receiver verifies the signature and stores the pause under the conversation id; the collector shows it', async () => {
    await trackSlack('C-ops', 'U-ada', 'help!')
    const [conv] = await (await fetch(`${collector.url}/api/conversations?bot=shop`)).json()
    expect(conv).toMatchObject({ thread: 'C-ops', userId: 'U-ada', paused: false })

    const res = await api('pause', { bot: 'shop', thread: 'C-ops', paused: true })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ bot: 'shop', thread: 'C-ops', paused: true, attempts: 1 })
    // Spec (Pause webhook): userId is the conversation id when one is sent.
    expect(pauseCalls).toEqual([{ userId: 'C-ops', paused: true, webhookId: expect.stringMatching(/^msg_/) }])
    expect(await pauses.isPaused('C-ops')).toBe(true)
    const transcript = await (await fetch(`${collector.url}/api/transcript?bot=shop&thread=C-ops`)).json()
    expect(transcript.paused).toBe(true)
    const [after] = await (await fetch(`${collector.url}/api/conversations?bot=shop`)).json()
    expect(after.paused).toBe(true)
  })

  it('unpause sends paused:false and the bot may answer again', async () => {
    await api('pause', { bot: 'shop', thread: 'C-ops', paused: true })
    const res = await api('pause', { bot: 'shop', thread: 'C-ops', paused: false })
    expect(res.body).toMatchObject({ paused: false })
    expect(pauseCalls.at(-1)).toMatchObject({ userId: 'C-ops', paused: false })
    expect(await pauses.isPaused('C-ops')).toBe(false)
  })

  it('the signature is Standard Webhooks over the exact body, verifiable with core', async () => {
    const seen: Array<{ headers: Record<string, string | string[] | undefined>; raw: string }> = []
    const app = express()
    app.post('/hook', express.raw({ type: () => true }), (req, res) => {
      seen.push({ headers: req.headers, raw: (req.body as Buffer).toString('utf8') })
      res.send('OK')
    })
    const { server, url } = await listen(app)
    collector.addBot({ name: 'raw', apiKey: 'raw-key', pauseWebhookUrl: `${url}/hook`, webhookSecret: secret })
    try {
      await api('pause', { bot: 'raw', thread: 'u-7', paused: true })
      expect(seen).toHaveLength(1)
      expect(JSON.parse(seen[0]!.raw)).toEqual({ userId: 'u-7', paused: true })
      expect(seen[0]!.headers['content-type']).toBe('application/json')
      expect(() => verifyPauseWebhook({ secret, headers: seen[0]!.headers, rawBody: seen[0]!.raw })).not.toThrow()
      expect(() =>
        verifyPauseWebhook({ secret: generateWebhookSecret(), headers: seen[0]!.headers, rawBody: seen[0]!.raw }),
      ).toThrow()
    } finally {
      await new Promise((r) => server.close(r))
    }
  })

  it('retries 5xx with the same webhook-id, then succeeds', async () => {
    flaky.failuresLeft = 2
    flaky.ids.length = 0
    const res = await api('pause', { bot: 'flaky', thread: 'u-9', paused: true })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ paused: true, attempts: 3 })
    expect(flaky.ids).toHaveLength(3)
    expect(new Set(flaky.ids).size).toBe(1)
    expect(await pauses.isPaused('u-9')).toBe(true)
  })

  it('a wrong secret is refused by the receiver (401): not retried, 502 webhook_failed, state unchanged', async () => {
    const res = await api('pause', { bot: 'wrong-secret', thread: 'u-1', paused: true })
    expect(res.status).toBe(502)
    expect(res.body.error).toMatchObject({ code: 'webhook_failed', path: 'pauseWebhookUrl' })
    expect(res.body.error.message).toContain('1 attempt')
    expect(res.body.error.message).toContain('401')
    expect(await pauses.isPaused('u-1')).toBe(false)
    const t = await (await fetch(`${collector.url}/api/transcript?bot=wrong-secret&thread=u-1`)).json()
    expect(t.paused).toBe(false)
  })

  it('an unreachable webhook is retried, then reported (502)', async () => {
    const res = await api('pause', { bot: 'gone', thread: 'u-1', paused: true })
    expect(res.status).toBe(502)
    expect(res.body.error.message).toMatch(/after 3 attempt\(s\): webhook unreachable/)
  })

  it.each([
    [{ bot: 'plain', thread: 'u', paused: true }, 409, 'no_webhook', 'bot'],
    [{ bot: 'nobody', thread: 'u', paused: true }, 404, 'not_found', 'bot'],
    [{ bot: 'shop', thread: 'u', paused: 'yes' }, 400, 'invalid_request', 'paused'],
    [{ bot: 'shop', paused: true }, 400, 'invalid_request', 'thread'],
  ])('%j → %i %s', async (body, status, code, path) => {
    const res = await api('pause', body)
    expect(res.status).toBe(status)
    expect(res.body.error).toMatchObject({ code, path })
  })
})

describe('operator message box', () => {
  it('POSTs { userId, text } signed to the bot’s operator message URL', async () => {
    const res = await api('operator-message', { bot: 'shop', thread: 'C-ops', text: 'Hi, a human here' })
    expect(res.status).toBe(200)
    expect(operatorMessages).toEqual([{ userId: 'C-ops', text: 'Hi, a human here' }])
  })

  it('a bot without an operator message URL → 409', async () => {
    const res = await api('operator-message', { bot: 'flaky', thread: 'u', text: 'x' })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('no_webhook')
  })
})

describe('the dashboard never sees keys or secrets', () => {
  it('GET /api/bots lists capabilities only', async () => {
    const text = await (await fetch(`${collector.url}/api/bots`)).text()
    expect(text).not.toContain('shop-key')
    expect(text).not.toContain(secret)
    // Capabilities and the number of records stored: no key, no secret.
    const bots = JSON.parse(text) as Array<Record<string, unknown>>
    for (const b of bots) expect(Object.keys(b).sort()).toEqual(['canMessage', 'canPause', 'name', 'records', 'signed'])
    expect(bots).toContainEqual(
      expect.objectContaining({ name: 'shop', canPause: true, signed: true, canMessage: true }),
    )
    expect(bots).toContainEqual({ name: 'demo', canPause: false, signed: false, canMessage: false, records: 0 })
  })
})
