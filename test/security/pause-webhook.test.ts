/**
 * SECURITY.md, "How the pause webhook is verified": a real Express app serving pauseReceiver
 * (its own raw read, and behind `express.json({ verify: captureRawBody })`), called the way
 * the collector calls it (`postWebhook`) and by hand. Proves: Standard Webhooks signatures on
 * the raw bytes, every (secret, signature) pair compared with crypto.timingSafeEqual (no early
 * exit), the 5-minute tolerance both ways, the replay guard, key rotation, one vague 401 for
 * every failure, and that the secret shows up in no answer, log line or error.
 */
import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { postWebhook } from '@convotrack/collector'
import { MemoryPauseStore, signPauseWebhook, verifyPauseWebhook } from '@convotrack/core'
import { captureRawBody, pauseReceiver } from '@convotrack/express'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { post, requireFrom } from '../fuzz/support'
import { Capture, errorText, findSecrets, SECRETS, WEBHOOK_KEY_PARTS } from './support'

// The real timingSafeEqual, counted: core imports it from node:crypto.
const compared = vi.hoisted(() => ({ calls: 0 }))
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>()
  const timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.calls++
    return real.timingSafeEqual(a, b)
  }
  return { ...real, default: { ...real, timingSafeEqual }, timingSafeEqual }
})

type Express = typeof import('../../packages/express/node_modules/@types/express')
const express = requireFrom('express')('express') as Express

const OTHER_SECRET = 'whsec_T0xEU0VDUkVUX3JvdGF0ZWRfYXdheV85ODc2'
const store = new MemoryPauseStore()
const capture = new Capture()
const receiverErrors: string[] = []
let base = ''
let server: http.Server
let failStore = false

beforeAll(async () => {
  const app = express()
  const options = {
    store: {
      isPaused: (k: string) => store.isPaused(k),
      setPaused: async (k: string, p: boolean) => {
        if (failStore) throw new Error('store down')
        await store.setPaused(k, p)
      },
    },
    secret: SECRETS.webhookSecret,
    logger: capture.logger,
    onError: (e: Error) => receiverErrors.push(errorText(e)),
  }
  app.post('/pause', pauseReceiver(options) as never)
  app.post('/parsed/pause', express.json({ verify: captureRawBody as never }), pauseReceiver(options) as never)
  app.post('/misplaced/pause', express.json(), pauseReceiver(options) as never)
  app.post('/rotating/pause', pauseReceiver({ ...options, secret: [OTHER_SECRET, SECRETS.webhookSecret] }) as never)
  server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s))
  })
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections()
      server.close(() => r())
    }),
)

const answers: string[] = []
async function send(path: string, body: string, headers: Record<string, string>) {
  const res = await post(`${base}${path}`, body, { 'content-type': 'application/json', ...headers })
  answers.push(`${res.status} ${res.body}`)
  return res
}
const signed = (body: string, o: { secret?: string | string[]; timestamp?: number; id?: string } = {}) =>
  signPauseWebhook({ secret: o.secret ?? SECRETS.webhookSecret, body, timestamp: o.timestamp, id: o.id })
const pauseBody = (userId: string, paused = true) => `{"userId":"${userId}","paused":${paused}}`

describe('signatures on the raw bytes', () => {
  it('the collector, sending with the bot secret, pauses and unpauses the session', async () => {
    const r1 = await postWebhook(
      `${base}/pause`,
      { userId: 'sess-collector', paused: true },
      { secret: SECRETS.webhookSecret },
    )
    expect(r1).toMatchObject({ ok: true, status: 200 })
    expect(await store.isPaused('sess-collector')).toBe(true)
    await postWebhook(`${base}/pause`, { userId: 'sess-collector', paused: false }, { secret: SECRETS.webhookSecret })
    expect(await store.isPaused('sess-collector')).toBe(false)
  })

  it('the same JSON with other bytes (re-serialized) does not verify, raw read or behind express.json', async () => {
    const original = pauseBody('sess-raw')
    const headers = signed(original)
    const reserialized = JSON.stringify({ paused: true, userId: 'sess-raw' })
    const spaced = JSON.stringify(JSON.parse(original), null, 2)
    for (const path of ['/pause', '/parsed/pause']) {
      expect((await send(path, reserialized, headers)).status).toBe(401)
      expect((await send(path, spaced, headers)).status).toBe(401)
    }
    expect(await store.isPaused('sess-raw')).toBe(false)
    expect((await send('/parsed/pause', original, headers)).status).toBe(200) // the signed bytes themselves
    expect(await store.isPaused('sess-raw')).toBe(true)
  })

  it('a wrong secret, a bad or missing header, a truncated body: one and the same 401, nothing stored', async () => {
    const body = pauseBody('sess-bad')
    const good = signed(body)
    const cases: Array<[string, Record<string, string>]> = [
      [body, signed(body, { secret: OTHER_SECRET })],
      [body, { ...good, 'webhook-signature': 'v1,AAAA' }],
      [body, { ...good, 'webhook-signature': `v2,${good['webhook-signature']?.slice(3)}` }],
      [body, { ...good, 'webhook-id': 'another-id' }],
      [body, { 'webhook-id': good['webhook-id'] as string, 'webhook-timestamp': good['webhook-timestamp'] as string }],
      [body.slice(0, -2), good],
      [body, {}],
    ]
    const bodies = new Set<string>()
    for (const [b, h] of cases) {
      const res = await send('/pause', b, h)
      expect(res.status).toBe(401)
      bodies.add(res.body)
    }
    expect([...bodies]).toEqual([
      '{"error":{"code":"invalid_signature","message":"webhook signature verification failed"}}',
    ])
    expect(await store.isPaused('sess-bad')).toBe(false)
  })

  it('behind a parser that dropped the raw bytes it refuses (500) instead of verifying a re-serialized body', async () => {
    const body = pauseBody('sess-misplaced')
    const res = await send('/misplaced/pause', body, signed(body))
    expect(res.status).toBe(500)
    expect(JSON.parse(res.body).error.code).toBe('raw_body_unavailable')
    expect(await store.isPaused('sess-misplaced')).toBe(false)
  })

  it('during a rotation either secret verifies', async () => {
    expect((await send('/rotating/pause', pauseBody('sess-rot-a'), signed(pauseBody('sess-rot-a')))).status).toBe(200)
    const withOld = signed(pauseBody('sess-rot-b'), { secret: OTHER_SECRET })
    expect((await send('/rotating/pause', pauseBody('sess-rot-b'), withOld)).status).toBe(200)
  })
})

describe('constant-time comparison', () => {
  beforeEach(() => {
    compared.calls = 0
  })

  it('compares every (secret, signature) pair with crypto.timingSafeEqual, with no early exit on a match', () => {
    const rawBody = pauseBody('sess-ct')
    const headers = signed(rawBody)
    const sig = headers['webhook-signature'] as string
    const other = signed(rawBody, {
      secret: OTHER_SECRET,
      id: headers['webhook-id'],
      timestamp: Number(headers['webhook-timestamp']),
    })
    // 3 signatures, the first valid; 2 secrets, the second valid: 6 comparisons, not 1.
    const threeSigs = `${sig} ${other['webhook-signature']} v1,${Buffer.alloc(32, 7).toString('base64')}`
    verifyPauseWebhook({
      secret: [OTHER_SECRET, SECRETS.webhookSecret],
      headers: { ...headers, 'webhook-signature': threeSigs },
      rawBody,
    })
    expect(compared.calls).toBe(6)
  })

  it('a wrong signature costs the same comparisons as a right one', () => {
    const rawBody = pauseBody('sess-ct2')
    const headers = signed(rawBody)
    verifyPauseWebhook({ secret: SECRETS.webhookSecret, headers, rawBody })
    const right = compared.calls
    compared.calls = 0
    const wrong = { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32, 1).toString('base64')}` }
    expect(() => verifyPauseWebhook({ secret: SECRETS.webhookSecret, headers: wrong, rawBody })).toThrow()
    expect(compared.calls).toBe(right)
    expect(right).toBe(1)
  })
})

describe('timestamps and replays', () => {
  const now = () => Math.floor(Date.now() / 1000)

  it('accepts a timestamp inside 5 minutes either way, refuses one outside', async () => {
    expect(
      (await send('/pause', pauseBody('sess-t1'), signed(pauseBody('sess-t1'), { timestamp: now() - 290 }))).status,
    ).toBe(200)
    expect(
      (await send('/pause', pauseBody('sess-t2'), signed(pauseBody('sess-t2'), { timestamp: now() + 290 }))).status,
    ).toBe(200)
    expect(
      (await send('/pause', pauseBody('sess-t3'), signed(pauseBody('sess-t3'), { timestamp: now() - 310 }))).status,
    ).toBe(401)
    expect(
      (await send('/pause', pauseBody('sess-t4'), signed(pauseBody('sess-t4'), { timestamp: now() + 310 }))).status,
    ).toBe(401)
    expect(await store.isPaused('sess-t3')).toBe(false)
    expect(await store.isPaused('sess-t4')).toBe(false)
  })

  it('a captured pause replayed after the unpause is acknowledged and changes nothing', async () => {
    const pause = pauseBody('sess-replay', true)
    const captured = signed(pause)
    expect((await send('/pause', pause, captured)).body).toBe('OK')
    const unpause = pauseBody('sess-replay', false)
    expect((await send('/pause', unpause, signed(unpause))).body).toBe('OK')
    const replay = await send('/pause', pause, captured)
    expect(replay).toEqual({ status: 200, body: 'OK (already processed)' })
    expect(await store.isPaused('sess-replay')).toBe(false)
  })

  it('a delivery that failed on our side (store down, 503) may be retried with the same id', async () => {
    const body = pauseBody('sess-retry')
    const headers = signed(body)
    failStore = true
    try {
      expect((await send('/pause', body, headers)).status).toBe(503)
    } finally {
      failStore = false
    }
    expect((await send('/pause', body, headers)).body).toBe('OK')
    expect(await store.isPaused('sess-retry')).toBe(true)
    expect(receiverErrors.length).toBeGreaterThan(0)
  })
})

describe('the webhook secret stays home', () => {
  it('appears in no answer, receiver log line or receiver error', () => {
    expect(answers.length).toBeGreaterThan(15)
    const extra = Object.fromEntries(WEBHOOK_KEY_PARTS.map((p, i) => [`webhookKeyPart${i}`, p]))
    expect(findSecrets({ answers, logs: capture.logs, errors: receiverErrors }, ['webhookSecret'], extra)).toEqual([])
  })

  it('a receiver without a secret says so once at start-up, without guessing one', () => {
    const logs = new Capture()
    pauseReceiver({ store, logger: logs.logger })
    expect(logs.logs).toHaveLength(1)
    expect(logs.logs[0]).toContain('no webhook secret configured')
  })
})
