/**
 * Fuzz: thousands of random and mutated pause webhooks over real HTTP. Only validly signed,
 * well-formed, fresh deliveries change the store; nothing crashes; no 500 (the only 500 is the
 * mis-mounted receiver, which this app is not).
 */
import http from 'node:http'
import { generateWebhookSecret, MemoryPauseStore, signPauseWebhook } from '@convotrack/core'
import { pauseReceiver } from '@convotrack/express'
import express from 'express'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seeded } from '../../../test/support/fuzz-seed'
import { type Served, serve } from './support'

const secret = generateWebhookSecret()
const otherSecret = generateWebhookSecret()
const store = new MemoryPauseStore()
const model = new Map<string, boolean>() // what the store must hold
let served: Served
let url: string
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
const statuses = new Map<number, number>()
let requests = 0

beforeAll(async () => {
  const app = express()
  app.all('/p', pauseReceiver({ store, secret, logger: { warn: () => {} } }))
  served = await serve(app)
  url = `${served.url}/p`
})
afterAll(async () => {
  agent.destroy()
  await served?.close()
})

interface Delivery {
  method: string
  headers: Record<string, string>
  body: Buffer
  /** The pause change this delivery must make, if any. */
  effect?: { userId: string; paused: boolean }
}

function post(d: Delivery): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: d.method, headers: { ...d.headers, 'content-length': String(d.body.length) }, agent },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }))
      },
    )
    req.on('error', reject)
    req.end(d.body)
  })
}

const headerSafe = (v: string) => {
  try {
    http.validateHeaderValue('x', v)
    return true
  } catch {
    return false
  }
}

const userId = fc.oneof(
  fc.constantFrom('u1', 'u2', 'C0123', 'conv-9'),
  fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
)
const pauseJson = fc.record({ userId, paused: fc.boolean() })
let idCounter = 0
const freshId = () => `msg_fuzz_${++idCounter}`
const nowSec = () => Math.floor(Date.now() / 1000)

/** A validly signed delivery of a well-formed pause body: the only kind that may change state. */
const validDelivery: fc.Arbitrary<Delivery> = fc
  .tuple(
    pauseJson,
    fc.integer({ min: -290, max: 290 }),
    fc.constantFrom('application/json', 'application/json; charset=utf-8'),
    fc.boolean(),
  )
  .map(([p, skew, type, rotated]) => {
    const body = Buffer.from(JSON.stringify(p))
    const headers = signPauseWebhook({
      secret: rotated ? [otherSecret, secret] : secret,
      body,
      id: freshId(),
      timestamp: nowSec() + skew,
    })
    return { method: 'POST', headers: { 'content-type': type, ...headers }, body, effect: p }
  })

type Mutation = (d: Delivery) => fc.Arbitrary<Delivery>
const mutations: Mutation[] = [
  // flip one byte of the body
  (d) =>
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([i, x]) => {
      const body = Buffer.from(d.body)
      const at = i % body.length
      body[at] = (body[at] as number) ^ x
      return { ...d, body, effect: undefined }
    }),
  // truncate or extend the body
  (d) => fc.nat().map((i) => ({ ...d, body: d.body.subarray(0, i % d.body.length), effect: undefined })),
  (d) =>
    fc
      .string({ minLength: 1, maxLength: 20 })
      .map((s) => ({ ...d, body: Buffer.concat([d.body, Buffer.from(s)]), effect: undefined })),
  // replace or drop a signature header
  (d) =>
    fc
      .tuple(
        fc.constantFrom('webhook-id', 'webhook-timestamp', 'webhook-signature'),
        fc.option(fc.string({ maxLength: 300 }).filter(headerSafe)),
      )
      .map(([name, value]) => {
        const headers = { ...d.headers }
        if (value === null) delete headers[name]
        else if (value === headers[name]) return { ...d, headers }
        else headers[name] = value
        return { ...d, headers, effect: value === d.headers[name] ? d.effect : undefined }
      }),
  // re-signed with a secret we don't hold, or out of the tolerance window
  (d) =>
    fc.constant({
      ...d,
      headers: { ...d.headers, ...signPauseWebhook({ secret: otherSecret, body: d.body }) },
      effect: undefined,
    }),
  (d) =>
    fc.integer({ min: 302, max: 100_000 }).chain((skew) =>
      fc.constantFrom(-skew, skew).map((s) => ({
        ...d,
        headers: { ...d.headers, ...signPauseWebhook({ secret, body: d.body, timestamp: nowSec() + s }) },
        effect: undefined,
      })),
    ),
  // garbage in the signature list next to nothing valid
  (d) =>
    fc.array(fc.base64String({ maxLength: 60 }), { maxLength: 20 }).map((sigs) => ({
      ...d,
      headers: { ...d.headers, 'webhook-signature': sigs.map((s) => `v1,${s}`).join(' ') },
      effect: undefined,
    })),
  // wrong media type or method
  (d) =>
    fc
      .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/jsonx', '')
      .map((type) => ({
        ...d,
        headers: { ...d.headers, 'content-type': type },
        effect: undefined,
      })),
  // over 64 KiB, even when validly signed
  (d) =>
    fc.integer({ min: 65_537, max: 200_000 }).map((size) => {
      const body = Buffer.alloc(size, 0x20)
      d.body.copy(body)
      return { ...d, body, headers: { ...d.headers, ...signPauseWebhook({ secret, body }) }, effect: undefined }
    }),
  (d) =>
    fc
      .constantFrom('PUT', 'PATCH', 'DELETE', 'GET')
      .map((method) => ({ ...d, method, body: method === 'GET' ? Buffer.alloc(0) : d.body, effect: undefined })),
]
const mutatedDelivery = validDelivery.chain((d) => fc.oneof(...mutations.map((m) => m(d))))

/** Signed correctly but not a pause body: 400, never a change. */
const signedJunk: fc.Arbitrary<Delivery> = fc
  .oneof(
    fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
    fc.record({ userId: fc.anything(), paused: fc.anything() }).map((v) => Buffer.from(JSON.stringify(v) ?? '{}')),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  )
  .map((body) => {
    let effect: Delivery['effect']
    try {
      const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
      if (
        v &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        typeof v.userId === 'string' &&
        v.userId &&
        typeof v.paused === 'boolean'
      )
        effect = { userId: v.userId, paused: v.paused }
    } catch {}
    return {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signPauseWebhook({ secret, body, id: freshId() }) },
      body,
      effect,
    }
  })

/** Entirely random requests. */
const randomDelivery: fc.Arbitrary<Delivery> = fc
  .record({
    method: fc.constantFrom('POST', 'PUT'),
    headers: fc.dictionary(
      fc.constantFrom('content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-other'),
      fc.string({ maxLength: 80 }).filter(headerSafe),
    ),
    body: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  })
  .map((d) => ({ ...d, effect: undefined }))

function assertStoreMatchesModel(): void {
  const expected = [...model].filter(([, p]) => p).map(([k]) => k)
  expect(store.keys().sort()).toEqual(expected.sort())
}

describe('pauseReceiver fuzz', () => {
  it('only valid signed deliveries change the store; never a crash; never a 500', async () => {
    const replayable: Delivery[] = []
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            { weight: 2, arbitrary: validDelivery },
            { weight: 5, arbitrary: mutatedDelivery },
            { weight: 2, arbitrary: signedJunk },
            { weight: 1, arbitrary: randomDelivery },
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        fc.boolean(),
        async (deliveries, replay) => {
          const batch = [...deliveries]
          if (replay && replayable.length > 0)
            batch.push({ ...(replayable[replayable.length - 1] as Delivery), effect: undefined })
          for (const d of batch) {
            const res = await post(d)
            requests++
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
            expect([200, 400, 401, 405, 413, 415]).toContain(res.status)
            if (d.effect) {
              expect(res.status).toBe(200)
              expect(res.text).toBe('OK')
              model.set(d.effect.userId, d.effect.paused)
              replayable.push(d)
            } else if (res.status === 200) {
              expect(res.text).toBe('OK (already processed)') // only a replay of a valid delivery
            }
            if (d.effect) expect(store.isPaused(d.effect.userId)).toBe(d.effect.paused)
            if (requests % 100 === 0) assertStoreMatchesModel()
          }
        },
      ),
      seeded({ numRuns: 1500 }),
    )
    assertStoreMatchesModel()
    console.log(`[fuzz] ${requests} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
    expect(requests).toBeGreaterThan(2000)
    expect(statuses.get(200)).toBeGreaterThan(100)
    expect(statuses.get(401)).toBeGreaterThan(100)
    expect(statuses.get(413)).toBeGreaterThan(10)
    expect(statuses.has(500)).toBe(false)
  }, 120_000)
})
