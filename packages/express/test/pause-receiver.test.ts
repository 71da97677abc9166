import type http from 'node:http'
import { generateWebhookSecret, MemoryPauseStore, type PauseStore, signPauseWebhook } from '@convotrack/core'
import { captureRawBody, operatorMessageReceiver, pauseReceiver } from '@convotrack/express'
import express from 'express'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type Served, send, serve } from './support'

const secret = generateWebhookSecret()
const quiet = { warn: () => {} }
const servers: Served[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
})

async function pauseApp(
  options: Partial<Parameters<typeof pauseReceiver>[0]> = {},
  setup?: (app: express.Express) => void,
) {
  const store = (options.store as MemoryPauseStore | undefined) ?? new MemoryPauseStore()
  const app = express()
  setup?.(app)
  app.post('/convotrack/pause', pauseReceiver({ store, secret, logger: quiet, ...options }))
  const served = await serve(app)
  servers.push(served)
  return { store, url: `${served.url}/convotrack/pause` }
}

function signed(
  body: string | Buffer,
  opts: { secret?: string | string[]; timestamp?: number; id?: string } = {},
): { body: string | Buffer; headers: Record<string, string> } {
  return {
    body,
    headers: {
      'content-type': 'application/json',
      ...signPauseWebhook({ secret: opts.secret ?? secret, body, ...opts }),
    },
  }
}
const pauseBody = (userId: string, paused: boolean) => JSON.stringify({ userId, paused })
const UNAUTHORIZED = { error: { code: 'invalid_signature', message: 'webhook signature verification failed' } }

describe('pauseReceiver: the signed pause webhook', () => {
  it('pauses and unpauses: 200 with a plain acknowledgement text', async () => {
    const { store, url } = await pauseApp()
    const res = await send(url, signed(pauseBody('u1', true)))
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/plain/)
    expect(res.text).toBe('OK')
    expect(store.isPaused('u1')).toBe(true)
    expect((await send(url, signed(pauseBody('u1', false)))).status).toBe(200)
    expect(store.isPaused('u1')).toBe(false)
  })

  it('accepts every listed secret (rotation) and a header carrying several signatures', async () => {
    const oldSecret = generateWebhookSecret()
    const { store, url } = await pauseApp({ secret: [secret, oldSecret] })
    expect((await send(url, signed(pauseBody('a', true), { secret: oldSecret }))).status).toBe(200)
    expect((await send(url, signed(pauseBody('b', true), { secret }))).status).toBe(200)
    // The sender signs with a secret we don't know AND one we do: accepted.
    expect((await send(url, signed(pauseBody('c', true), { secret: [generateWebhookSecret(), secret] }))).status).toBe(
      200,
    )
    expect(store.keys().sort()).toEqual(['a', 'b', 'c'])
  })

  it('401 with the same body whatever failed: no headers, bad signature, wrong secret, tampered body, stale or future timestamp', async () => {
    const { store, url } = await pauseApp()
    const body = pauseBody('u1', true)
    const good = signed(body)
    const now = Math.floor(Date.now() / 1000)
    const attempts = [
      { body, headers: { 'content-type': 'application/json' } },
      { body, headers: { ...good.headers, 'webhook-signature': 'v1,AAAA' } },
      signed(body, { secret: generateWebhookSecret() }),
      { body: pauseBody('u2', true), headers: good.headers },
      { body: `${body} `, headers: good.headers },
      // Well outside the ±300 s tolerance: a slow run (the loop takes seconds on a loaded
      // machine) must not bring a "future" timestamp back inside it.
      signed(body, { timestamp: now - 330 }),
      signed(body, { timestamp: now + 330 }),
      {
        body,
        headers: {
          ...good.headers,
          'webhook-signature': (good.headers['webhook-signature'] as string).replace('v1,', 'v2,'),
        },
      },
      { body, headers: { ...good.headers, 'webhook-id': 'another-id' } },
    ]
    for (const attempt of attempts) {
      const res = await send(url, attempt)
      expect(res.status).toBe(401)
      expect(res.json()).toEqual(UNAUTHORIZED)
    }
    expect(store.keys()).toEqual([])
  })

  it('accepts timestamps inside the ±5 minute tolerance', async () => {
    const { store, url } = await pauseApp()
    const now = Math.floor(Date.now() / 1000)
    // Well inside the tolerance, whatever the machine's load.
    expect((await send(url, signed(pauseBody('past', true), { timestamp: now - 270 }))).status).toBe(200)
    expect((await send(url, signed(pauseBody('future', true), { timestamp: now + 270 }))).status).toBe(200)
    expect(store.keys().sort()).toEqual(['future', 'past'])
  })

  it('ignores a replayed id within the window: an old pause replayed after an unpause changes nothing', async () => {
    const { store, url } = await pauseApp()
    const pause = signed(pauseBody('u1', true))
    expect((await send(url, pause)).status).toBe(200)
    expect((await send(url, signed(pauseBody('u1', false)))).status).toBe(200)
    const replay = await send(url, pause)
    expect(replay.status).toBe(200)
    expect(replay.text).toBe('OK (already processed)')
    expect(store.isPaused('u1')).toBe(false)
  })

  it('400 for bad JSON or wrong field types, after the signature check; nothing changes', async () => {
    const { store, url } = await pauseApp()
    const cases: Array<[string, string, string]> = [
      ['{"userId":"u1",', 'invalid_json', 'the body is not valid UTF-8 JSON'],
      ['{"userId":"u1","paused":"true"}', 'invalid_body', '`paused` must be a boolean'],
      ['{"paused":true}', 'invalid_body', '`userId` must be a non-empty string'],
      ['{"userId":"","paused":true}', 'invalid_body', '`userId` must be a non-empty string'],
      ['{"userId":7,"paused":true}', 'invalid_body', '`userId` must be a non-empty string'],
      ['[{"userId":"u1","paused":true}]', 'invalid_body', 'the body must be a JSON object'],
      ['null', 'invalid_body', 'the body must be a JSON object'],
    ]
    for (const [body, code, message] of cases) {
      const res = await send(url, signed(body))
      expect(res.status, body).toBe(400)
      expect((res.json() as { error: { code: string; message: string } }).error.code).toBe(code)
      expect((res.json() as { error: { message: string } }).error.message).toContain(message)
    }
    const badUtf8 = Buffer.concat([
      Buffer.from('{"userId":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","paused":true}'),
    ])
    const res = await send(url, {
      body: badUtf8,
      headers: { 'content-type': 'application/json', ...signPauseWebhook({ secret, body: badUtf8 }) },
    })
    expect(res.status).toBe(400)
    expect(store.keys()).toEqual([])
  })

  it('413 over 64 KiB, announced or chunked; 64 KiB exactly is read', async () => {
    const { store, url } = await pauseApp()
    const big = JSON.stringify({ userId: 'u1', paused: true, pad: 'x'.repeat(70_000) })
    for (const chunked of [false, true]) {
      const res = await send(url, { ...signed(big), chunked })
      expect(res.status).toBe(413)
      expect(res.json()).toEqual({ error: { code: 'body_too_large', message: 'the body is larger than 65536 bytes' } })
    }
    const base = JSON.stringify({ userId: 'u1', paused: true, pad: '' })
    const exact = JSON.stringify({ userId: 'u1', paused: true, pad: 'x'.repeat(65_536 - base.length) })
    expect(Buffer.byteLength(exact)).toBe(65_536)
    expect((await send(url, { ...signed(exact), chunked: true })).status).toBe(200)
    expect(store.keys()).toEqual(['u1'])
  })

  it('415 when not JSON (or compressed), 405 for another method when mounted with app.all', async () => {
    const store = new MemoryPauseStore()
    const app = express()
    app.all('/hook', pauseReceiver({ store, secret, logger: quiet }))
    const served = await serve(app)
    servers.push(served)
    const body = pauseBody('u1', true)
    const asText = await send(`${served.url}/hook`, {
      body,
      headers: { ...signed(body).headers, 'content-type': 'text/plain' },
    })
    expect(asText.status).toBe(415)
    expect(asText.json()).toEqual({
      error: { code: 'unsupported_media_type', message: 'Content-Type must be application/json' },
    })
    expect((await send(`${served.url}/hook`, { body, headers: signPauseWebhook({ secret, body }) })).status).toBe(415)
    const latin1 = await send(`${served.url}/hook`, {
      body,
      headers: { ...signed(body).headers, 'content-type': 'application/json; charset=latin1' },
    })
    expect(latin1.status).toBe(415)
    const gz = await send(`${served.url}/hook`, {
      body,
      headers: { ...signed(body).headers, 'content-encoding': 'gzip' },
    })
    expect(gz.status).toBe(415)
    const get = await send(`${served.url}/hook`, { method: 'GET' })
    expect(get.status).toBe(405)
    expect(get.headers.allow).toBe('POST')
    expect(get.json()).toEqual({ error: { code: 'method_not_allowed', message: 'pauseReceiver accepts POST only' } })
    // application/*+json is JSON too
    expect(
      (
        await send(`${served.url}/hook`, {
          body,
          headers: { ...signed(body).headers, 'content-type': 'application/webhook+json' },
        })
      ).status,
    ).toBe(200)
    expect(store.keys()).toEqual(['u1'])
  })

  it('without a secret: accepts unsigned calls and warns once, at start-up', async () => {
    const warn = vi.fn()
    const store = new MemoryPauseStore()
    const app = express()
    app.post('/p', pauseReceiver({ store, logger: { warn } }))
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn.mock.calls[0]?.[0]).toMatch(/no webhook secret configured/)
    const served = await serve(app)
    servers.push(served)
    for (const paused of [true, false, true]) {
      const res = await send(`${served.url}/p`, {
        body: pauseBody('u1', paused),
        headers: { 'content-type': 'application/json' },
      })
      expect(res.status).toBe(200)
    }
    expect(store.isPaused('u1')).toBe(true)
    expect(warn).toHaveBeenCalledTimes(1)
    // an env variable that is set but empty counts as "no secret"
    expect(() => pauseReceiver({ store, secret: '', logger: quiet })).not.toThrow()
  })

  it('refuses a bad configuration at start-up', () => {
    expect(() => pauseReceiver({} as never)).toThrow(/store/)
    expect(() => pauseReceiver({ store: new MemoryPauseStore(), secret: ['whsec_'] })).toThrow(/secret/)
    expect(() => pauseReceiver({ store: new MemoryPauseStore(), secret: [secret, 5 as never] })).toThrow(/secret/)
  })
})

describe('pauseReceiver: raw bytes whatever the app parses', () => {
  it('behind express.json({ verify: captureRawBody }) it verifies the kept bytes (not a re-serialized body)', async () => {
    const { store, url } = await pauseApp({}, (app) => app.use(express.json({ verify: captureRawBody })))
    // Whitespace and key order that JSON.stringify(req.body) would not reproduce.
    const body = '{ "paused" : true,\n  "userId" : "u1" }'
    expect((await send(url, signed(body))).status).toBe(200)
    expect(store.isPaused('u1')).toBe(true)
    expect((await send(url, { body: pauseBody('u1', false), headers: signed(body).headers })).status).toBe(401)
    expect(store.isPaused('u1')).toBe(true)
  })

  it('behind express.raw({ type: "application/json" }) it verifies the Buffer body', async () => {
    const { store, url } = await pauseApp({}, (app) => app.use(express.raw({ type: 'application/json' })))
    expect((await send(url, signed(pauseBody('u1', true)))).status).toBe(200)
    expect(store.isPaused('u1')).toBe(true)
  })

  it('behind a parser that kept no raw bytes it fails closed: 500 saying how to mount it, nothing changed', async () => {
    for (const parser of [express.json(), express.text({ type: '*/*' })]) {
      const { store, url } = await pauseApp({}, (app) => app.use(parser))
      const res = await send(url, signed(pauseBody('u1', true)))
      expect(res.status).toBe(500)
      const { error } = res.json() as { error: { code: string; message: string } }
      expect(error.code).toBe('raw_body_unavailable')
      expect(error.message).toContain('express.json({ verify: captureRawBody })')
      expect(store.keys()).toEqual([])
    }
  })

  it('mounted before the app’s global parser it reads the bytes itself', async () => {
    const store = new MemoryPauseStore()
    const app = express()
    app.post('/convotrack/pause', pauseReceiver({ store, secret, logger: quiet }))
    app.use(express.json())
    app.post('/other', (req, res) => {
      res.json({ got: req.body })
    })
    const served = await serve(app)
    servers.push(served)
    expect((await send(`${served.url}/convotrack/pause`, signed(pauseBody('u1', true)))).status).toBe(200)
    expect(store.isPaused('u1')).toBe(true)
    const other = await send(`${served.url}/other`, {
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    })
    expect(other.json()).toEqual({ got: { a: 1 } })
  })

  it('works as a plain node:http handler too', async () => {
    const store = new MemoryPauseStore()
    const handler = pauseReceiver({ store, secret, logger: quiet })
    const served = await serve((req: http.IncomingMessage, res: http.ServerResponse) => void handler(req, res))
    servers.push(served)
    expect((await send(served.url, signed(pauseBody('u1', true)))).status).toBe(200)
    expect(store.isPaused('u1')).toBe(true)
  })
})

describe('pauseReceiver: when the store fails', () => {
  it('answers 503 and reports it; the sender’s retry of the same delivery is applied once the store is back', async () => {
    const inner = new MemoryPauseStore()
    let down = true
    const store: PauseStore = {
      isPaused: (k) => inner.isPaused(k),
      setPaused: async (k, p) => {
        if (down) throw new Error('connection refused')
        inner.setPaused(k, p)
      },
    }
    const errors: Error[] = []
    const { url } = await pauseApp({ store, onError: (e) => errors.push(e) })
    const delivery = signed(pauseBody('u1', true))
    const res = await send(url, delivery)
    expect(res.status).toBe(503)
    expect(res.json()).toEqual({
      error: { code: 'store_unavailable', message: 'the pause state could not be saved; retry later' },
    })
    expect(errors.map((e) => e.message)).toEqual(['connection refused'])
    down = false
    const retry = await send(url, delivery) // same id, same signature
    expect(retry.status).toBe(200)
    expect(retry.text).toBe('OK')
    expect(inner.isPaused('u1')).toBe(true)
    expect((await send(url, delivery)).text).toBe('OK (already processed)')
  })
})

describe('operatorMessageReceiver', () => {
  async function messageApp(onMessage: Parameters<typeof operatorMessageReceiver>[0]['onMessage']) {
    const app = express()
    app.use(express.json({ verify: captureRawBody }))
    app.post('/convotrack/message', operatorMessageReceiver({ secret, onMessage, logger: quiet, onError: () => {} }))
    const served = await serve(app)
    servers.push(served)
    return `${served.url}/convotrack/message`
  }

  it('hands a signed { userId, text, messageJson? } to onMessage once; forged calls never reach it', async () => {
    const sent: unknown[] = []
    const url = await messageApp((m) => {
      sent.push(m)
    })
    const body = JSON.stringify({ userId: 'u1', text: 'Hi, a person here', messageJson: { quick_replies: [] } })
    const delivery = signed(body, { id: 'msg_op_1' })
    expect((await send(url, delivery)).text).toBe('OK')
    expect((await send(url, delivery)).text).toBe('OK (already sent)')
    expect((await send(url, signed(body, { secret: generateWebhookSecret() }))).status).toBe(401)
    const bad = await send(url, signed(JSON.stringify({ userId: 'u1', text: 'x', messageJson: 'no' })))
    expect(bad.status).toBe(400)
    expect(sent).toEqual([
      { userId: 'u1', text: 'Hi, a person here', messageJson: { quick_replies: [] }, webhookId: 'msg_op_1' },
    ])
  })

  it('502 when onMessage fails; the retry of that delivery is sent', async () => {
    let attempts = 0
    const url = await messageApp(async () => {
      attempts++
      if (attempts === 1) throw new Error('platform said no')
    })
    const delivery = signed(JSON.stringify({ userId: 'u1', text: 'hello' }))
    const first = await send(url, delivery)
    expect(first.status).toBe(502)
    expect(first.json()).toEqual({
      error: { code: 'send_failed', message: 'the message could not be sent to the user; retry later' },
    })
    expect((await send(url, delivery)).status).toBe(200)
    expect(attempts).toBe(2)
  })

  it('requires onMessage', () => {
    expect(() => operatorMessageReceiver({ secret } as never)).toThrow(/onMessage/)
  })
})

describe('pauseReceiver: concurrency', () => {
  it('handles many signed deliveries at once, each applied to its own key', async () => {
    const { store, url } = await pauseApp()
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => send(url, signed(pauseBody(`u${i}`, i % 3 !== 0)))),
    )
    expect(results.every((r) => r.status === 200)).toBe(true)
    const expected = Array.from({ length: 100 }, (_, i) => `u${i}`).filter((_, i) => i % 3 !== 0)
    expect(store.keys().sort()).toEqual(expected.sort())
  })
})
