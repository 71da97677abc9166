/**
 * PostgreSQL that HANGS instead of going away: the server's processes are frozen (SIGSTOP to the
 * postmaster and every backend), so sockets stay open and nothing answers. The collector must
 * still answer — 503 + Retry-After on /track, /track/batch and the dashboard API, /readyz not
 * ready — recover by itself once the server resumes (SIGCONT), lose nothing a tracker logged,
 * store each record once, and its LISTEN session (the live feed across instances) must notice
 * the hang, reconnect and catch up without duplicates. Every option is the default.
 */
import { type Collector, PgRecordStore, startCollector } from '@convotrack/collector'
import { createTracker, type TransportError } from '@convotrack/core'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, startPostgres } from './support/postgres'
import { openStream } from './support/team'

let server: PostgresServer
let db: string
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 30_000, interval: 100 })
/** A request that never ends fails the test (instead of hanging it); the collector's own bound is far below. */
const ended = () => AbortSignal.timeout(60_000)

beforeAll(async () => {
  server = await startPostgres()
  db = await server.createDatabase()
})
afterEach(() => {
  // A failing test never leaves a frozen server behind.
  server?.thaw()
})
afterAll(async () => {
  server?.thaw()
  await server?.destroy()
})

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: ended(),
  })

const postBatch = (url: string, texts: string[]) =>
  fetch(`${url}/track/batch?apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      records: texts.map((text) => ({
        platform: 'universal',
        type: 'incoming',
        v: '11.1.0-rest',
        idempotencyKey: `hang.${text.replaceAll(' ', '-')}`,
        body: { text, userId: 'batcher' },
      })),
    }),
    signal: ended(),
  })

/** Straight from the database (not through a collector): how many records hold each text. */
async function storedTexts(): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: db })
  await client.connect()
  try {
    const rows = (
      await client.query<{ text: string; n: string }>(
        "SELECT raw::json->>'text' AS text, count(*) AS n FROM convotrack_records WHERE bot = 'shop' GROUP BY 1",
      )
    ).rows
    return new Map(rows.map((r) => [r.text, Number(r.n)]))
  } finally {
    await client.end()
  }
}

/** Backend pids of the collectors' LISTEN sessions. */
async function listenSessions(): Promise<number[]> {
  const client = new pg.Client({ connectionString: db })
  await client.connect()
  try {
    return (
      await client.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'convotrack-collector-listen' ORDER BY pid",
      )
    ).rows.map((r) => r.pid)
  } finally {
    await client.end()
  }
}

const expect503 = async (res: Response, code = 'store_unavailable') => {
  expect(res.status).toBe(503)
  expect(await res.json()).toEqual({ error: { code, message: expect.any(String), path: '' } })
}

describe('PostgreSQL hangs (frozen server), default options', () => {
  let a: Collector
  let b: Collector
  beforeAll(async () => {
    a = await startCollector({ port: 0, db })
    b = await startCollector({ port: 0, db })
    for (const c of [a, b]) c.addBot({ name: 'shop', apiKey: 'shop-key' })
  })
  afterAll(async () => {
    server?.thaw()
    await a?.close()
    await b?.close()
  })

  it('503 + Retry-After while it hangs, /readyz not ready; after resume every record is stored once and the live feed catches up', async () => {
    const onB = await openStream<{ text?: string }>(`${b.url}/api/stream`)
    expect(onB.status).toBe(200)
    const tracker = createTracker({ apiKey: 'shop-key', baseUrl: a.url })
    const retries: TransportError[] = []
    tracker.on('retry', (e) => retries.push(e as TransportError))
    const messagesOnB = () => onB.events.filter((e) => e.event === 'message').map((e) => e.data.text)
    try {
      // Warm: the pools hold open connections and B's LISTEN session hears A — the freeze hits live sessions.
      expect((await post(a.url, { text: 'before', userId: 'cy' })).status).toBe(201)
      await poll(messagesOnB).toEqual(['before'])
      const listenersBefore = await listenSessions()
      expect(listenersBefore).toHaveLength(2)

      server.freeze()
      // Every kind of call ends with the "database away" answer instead of waiting forever.
      const [track, batch, stats, ready, transcript] = await Promise.all([
        post(a.url, { text: 'probe', userId: 'cy' }, { 'idempotency-key': 'probe.1' }),
        postBatch(b.url, ['batch 0', 'batch 1']),
        fetch(`${b.url}/api/stats`, { signal: ended() }),
        fetch(`${a.url}/readyz`, { signal: ended() }),
        fetch(`${a.url}/api/transcript?bot=shop&thread=cy`, { signal: ended() }),
      ])
      for (const res of [track, batch, stats, transcript])
        expect([res.url, res.status, res.headers.get('retry-after')]).toEqual([res.url, 503, '1'])
      await expect503(track)
      await expect503(batch)
      await expect503(stats)
      await expect503(transcript)
      await expect503(ready, 'not_ready')
      // Still frozen: a tracker with default options logs; its attempts get 503s and it holds the records.
      for (let i = 0; i < 20; i++) tracker.universal.logIncoming({ text: `held ${i}`, userId: 'cy' })
      await poll(() => retries.length).toBeGreaterThan(0)
      expect((await fetch(`${b.url}/readyz`, { signal: ended() })).status).toBe(503)
      // The LISTEN sessions check the server every 5 s (listenHeartbeatMs) and give up after 3 s
      // (queryTimeoutMs): the server stays frozen until both have noticed (each store dropped its
      // session: an event, not a delay; proven below by their new pids).
      const listening = (c: Collector) => (c.store as unknown as { listener?: unknown }).listener !== undefined
      await poll(() => [a, b].some(listening)).toBe(false)

      server.thaw()
      const flushed = await tracker.flush(60_000)
      expect(flushed).toMatchObject({ sent: 20, failed: 0 })
      expect(tracker.stats()).toMatchObject({ sent: 20, failed: 0, dropped: 0 })
      // The tracker saw the collector's answer, not its own request timeouts.
      expect(retries.length).toBeGreaterThan(0)
      expect(retries.map((e) => e.status)).toEqual(retries.map(() => 503))

      // Retries of what was refused while frozen carry the same keys: stored once, whatever the first attempt left.
      expect((await post(a.url, { text: 'probe', userId: 'cy' }, { 'idempotency-key': 'probe.1' })).status).toBe(201)
      expect((await postBatch(b.url, ['batch 0', 'batch 1'])).status).toBe(200)
      expect((await post(b.url, { text: 'probe', userId: 'cy' }, { 'idempotency-key': 'probe.1' })).status).toBe(201)
      const stored = await storedTexts()
      const expected = ['before', 'probe', 'batch 0', 'batch 1', ...Array.from({ length: 20 }, (_, i) => `held ${i}`)]
      expect(Object.fromEntries(stored)).toEqual(Object.fromEntries(expected.map((t) => [t, 1])))

      await poll(async () => (await fetch(`${a.url}/readyz`, { signal: ended() })).status).toBe(200)
      expect((await fetch(`${b.url}/api/stats`, { signal: ended() })).status).toBe(200)

      // Both LISTEN sessions were replaced: the hung ones dropped, new ones opened after the resume.
      await poll(async () => {
        const now = await listenSessions()
        return now.length === 2 && now.every((pid) => !listenersBefore.includes(pid))
      }).toBe(true)
      // Records logged after the resume reach the other instance's live feed; every message once.
      expect((await post(a.url, { text: 'after', userId: 'cy' })).status).toBe(201)
      await poll(() => messagesOnB().includes('after')).toBe(true)
      const seen = messagesOnB()
      const heldOnB = seen.filter((t) => t?.startsWith('held '))
      expect(heldOnB.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `held ${i}`).sort())
      expect(new Set(seen).size).toBe(seen.length)
      // Batch 0/1 went to B itself after the resume: B's own records, also once.
      expect(seen.filter((t) => t === 'batch 0')).toHaveLength(1)
    } finally {
      server.thaw()
      onB.close()
      await tracker.close()
    }
  }, 120_000)

  it('a statement that times out frees its connection: the store answers again once the server resumes', async () => {
    const store = await PgRecordStore.open(db, { listen: false })
    try {
      const before = await store.counts()
      // The pool itself (private): the connection whose statement timed out must leave it, not wait to be reused.
      const pool = (store as unknown as { pool: pg.Pool }).pool
      expect(pool.totalCount).toBe(1)
      server.freeze()
      await expect(store.counts()).rejects.toMatchObject({
        name: 'StoreUnavailableError',
        message: expect.stringMatching(/does not answer in time \(queryTimeoutMs\)/),
      })
      expect(pool.totalCount).toBe(0)
      await expect(store.ping()).rejects.toMatchObject({ name: 'StoreUnavailableError' })
      server.thaw()
      expect(await store.counts()).toEqual(before)
      await store.ping()
    } finally {
      server.thaw()
      await store.close()
    }
  }, 60_000)
})
