/**
 * HTTP fuzz of the collector's `POST /track` (a real collector on 127.0.0.1, SQLite in
 * memory): random query strings, media types and bodies (mutated records of every platform,
 * random JSON, truncated JSON, bodies over the size limit). Every answer is 201 `{ id }` or a
 * 4xx `{ error: { code, message, path } }`; never a 5xx, never a hang; valid records stay
 * accepted afterwards.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seeded } from '../support/fuzz-seed'
import { hugeString, jsonAnything, mutated, post, RUNS, truncatedJson, withDeadline } from './support'

const KEY = 'fuzz-collector-key'
let collector: Collector

beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    demoBot: false,
    bots: [{ name: 'fuzz', apiKey: KEY }],
    maxBodyBytes: 64 * 1024,
  })
})
afterAll(() => collector?.close())

const records: Record<string, unknown> = {
  'universal/incoming': { text: 'hi', userId: 'u1', intent: { name: 'greet', confidence: 0.9 } },
  'slack/incoming': {
    team: { id: 'T1', name: 'Acme' },
    bot: { id: 'B1' },
    message: { type: 'message', channel: 'C1', user: 'U1', text: 'hi', ts: '1.1', team: 'T1' },
  },
  'kik/outgoing': { apiKey: '', username: 'bot', message: { type: 'text', body: 'hi', to: 'alice', chatId: 'c1' } },
  'facebook/incoming': {
    object: 'page',
    entry: [
      {
        id: 'P',
        time: 1,
        messaging: [{ sender: { id: 'U' }, recipient: { id: 'P' }, timestamp: 1, message: { mid: 'm', text: 'hi' } }],
      },
    ],
  },
  'alexa/incoming': {
    event: {
      version: '1.0',
      session: {
        new: true,
        sessionId: 's',
        application: { applicationId: 'a' },
        attributes: {},
        user: { userId: 'u' },
      },
      request: { type: 'LaunchRequest', requestId: 'r', timestamp: '2024-05-01T10:00:00Z' },
    },
  },
  'generic/event': { type: 'revenueEvent', name: 'buy', userId: 'u1', amount: 9.5 },
  // What the dashbot SDK sends (accepted with its `v`, e.g. 12.1.0-npm: the legacy layer).
  'microsoft/incoming': {
    type: 'message',
    text: 'hi',
    from: { id: 'u1' },
    recipient: { id: 'b' },
    conversation: { id: 'c1' },
  },
  'google/outgoing': {
    dashbot_timestamp: 1,
    request_body: { result: { resolvedQuery: 'hi', metadata: { intentName: 'x' } }, sessionId: 's1' },
    message: { speech: 'hello' },
  },
  'facebook/all': {
    object: 'page',
    entry: [{ time: 1, messaging: [{ sender: { id: 'U' }, timestamp: 1, message: { text: 'hi', is_echo: true } }] }],
  },
  'slack/connect': { ok: true, self: { id: 'B1' }, team: { id: 'T1' } },
  'webchat/incoming': { text: 'hi', userId: 'u1', images: [{ image: { url: 'https://x/i.png' } }] },
  'facebook/event': { type: 'pageLaunchEvent', userId: 'u1' },
}

const queryValue = (valid: string[]) =>
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) })

const requests = fc
  .record({
    kind: fc.constantFrom(...Object.keys(records)),
    v: queryValue(['11.1.0-rest', '10.1.1-rest', '12.1.0-npm', '12.1.0-botkit']),
    apiKey: queryValue([KEY]),
    dropParam: fc.oneof(
      { weight: 6, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom('platform', 'type', 'v', 'apiKey') },
    ),
    contentType: fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 1,
        arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1', 'application/x+json', ''),
      },
    ),
    body: fc.integer({ min: 0, max: 9 }),
  })
  .chain((r) => {
    const base = records[r.kind]
    const body: fc.Arbitrary<string> =
      r.body < 5
        ? mutated(base).map((b) => JSON.stringify(b) ?? '')
        : r.body < 7
          ? jsonAnything.map((b) => JSON.stringify(b) ?? '')
          : r.body < 8
            ? truncatedJson(base)
            : r.body < 9
              ? hugeString.map((s) => JSON.stringify({ ...(base as object), text: s }))
              : fc.constant(JSON.stringify(base))
    return body.map((raw) => ({ ...r, raw }))
  })

describe('collector POST /track under random requests', () => {
  it('answers 201 { id } or a 4xx JSON error naming the problem; never 5xx or a hang', async () => {
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(requests, async (r) => {
        const [platform, type] = r.kind.split('/') as [string, string]
        const q = new URLSearchParams({ platform, type, v: r.v, apiKey: r.apiKey })
        if (r.dropParam) q.delete(r.dropParam)
        const headers: Record<string, string> = r.contentType ? { 'content-type': r.contentType } : {}
        const res = await withDeadline(post(`${collector.url}/track?${q}`, r.raw, headers), 5_000, 'POST /track')
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status === 201) {
          expect(JSON.parse(res.body)).toEqual({ id: expect.any(Number) })
        } else {
          expect(res.status).toBeGreaterThanOrEqual(400)
          expect(res.status).toBeLessThan(500)
          const err = JSON.parse(res.body).error
          expect(typeof err.code).toBe('string')
          expect(err.message.length).toBeGreaterThan(5)
          expect(typeof err.path).toBe('string')
          expect(res.body).not.toContain(KEY)
        }
      }),
      seeded({ numRuns: RUNS }),
    )
    expect(statuses.get(201)).toBeGreaterThan(0)
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true)
    const after = await post(
      `${collector.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=${KEY}`,
      JSON.stringify({ text: 'still here', userId: 'u1' }),
      { 'content-type': 'application/json' },
    )
    expect(after.status).toBe(201)
  })
})
