/**
 * Several collectors on one real PostgreSQL: migrations once, records and pause state shared,
 * each instance's live feed showing what the others stored, and the database going away (503 +
 * Retry-After, reconnect, nothing acknowledged lost).
 */
import { createHmac } from 'node:crypto'
import { type Collector, normalizeRecord, PgRecordStore, startCollector } from '@convotrack/collector'
import { createTracker } from '@convotrack/core'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, PG_MIGRATIONS } from '../src/store/postgres/pg-migrations'
import { type ChatBot, startChatBot } from './support/chat-bot'
import { type PostgresServer, startPostgres } from './support/postgres'
import { openStream } from './support/team'

let server: PostgresServer
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000, interval: 50 })

beforeAll(async () => {
  server = await startPostgres()
})
afterAll(async () => {
  await server?.destroy()
})

/** An SSE client on `url/api/stream` collecting events. */
async function stream(url: string) {
  const live = await openStream<Record<string, unknown>>(`${url}/api/stream`)
  if (live.status !== 200) throw new Error(`no stream: ${live.status}`)
  return live
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })

describe('several collectors on one PostgreSQL', () => {
  it('migrations: instances starting together apply them once; reopening applies nothing', async () => {
    const url = await server.createDatabase()
    const stores = await Promise.all([PgRecordStore.open(url), PgRecordStore.open(url), PgRecordStore.open(url)])
    await Promise.all(stores.map((s) => s.close()))
    await (await PgRecordStore.open(url)).close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const rows = (await client.query('SELECT version FROM convotrack_migrations ORDER BY version')).rows
    await client.end()
    expect(rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version })))
  })

  it('migrations are versioned: a later one is applied once, on top of what is there', async () => {
    const url = await server.createDatabase()
    await (await PgRecordStore.open(url)).close()
    const pool = new pg.Pool({ connectionString: url })
    const client = await pool.connect()
    try {
      const latest = Math.max(...PG_MIGRATIONS.map((m) => m.version))
      const next = [
        ...PG_MIGRATIONS,
        { version: latest + 1, name: 'test column', sql: 'ALTER TABLE convotrack_records ADD COLUMN note text' },
      ]
      expect(await migrate(client, next)).toEqual([latest + 1])
      expect(await migrate(client, next)).toEqual([])
      expect(await migrate(client)).toEqual([]) // an older collector on a newer schema starts too
      expect((await client.query('SELECT version, name FROM convotrack_migrations ORDER BY version')).rows).toEqual([
        ...PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
        { version: latest + 1, name: 'test column' },
      ])
      await expect(
        migrate(client, [...next, { version: latest + 2, name: 'broken', sql: 'ALTER TABLE nope ADD x int' }]),
      ).rejects.toThrow(new RegExp(`migration ${latest + 2} \\(broken\\) failed`))
      expect((await client.query('SELECT max(version) AS v FROM convotrack_migrations')).rows[0].v).toBe(latest + 1)
    } finally {
      client.release()
      await pool.end()
    }
  })

  describe('two collectors', () => {
    let a: Collector
    let b: Collector
    let bot: ChatBot
    beforeAll(async () => {
      const db = await server.createDatabase()
      a = await startCollector({ port: 0, db, webhookRetry: { attempts: 2, baseDelayMs: 20 } })
      b = await startCollector({ port: 0, db, webhookRetry: { attempts: 2, baseDelayMs: 20 } })
      bot = await startChatBot({
        trackingUrl: a.url,
        apiKey: 'shop-key',
        webhookSecret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=',
      })
      for (const c of [a, b])
        c.addBot({
          name: 'shop',
          apiKey: 'shop-key',
          pauseWebhookUrl: bot.pauseWebhookUrl,
          webhookSecret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=',
          operatorMessageUrl: bot.operatorMessageUrl,
        })
    })
    afterAll(async () => {
      await bot?.close()
      await a?.close()
      await b?.close()
    })

    it("what one instance stores appears in the other's API and live stream, once", async () => {
      const onB = await stream(b.url)
      const onA = await stream(a.url)
      try {
        const res = await post(a.url, { text: 'stored by A', userId: 'ada' })
        expect(res.status).toBe(201)
        const { id } = (await res.json()) as { id: number }
        await poll(() => onB.events.filter((e) => e.event === 'message').map((e) => e.data.text)).toEqual([
          'stored by A',
        ])
        // The message event itself (the handoff queue's event for the thread may come before it).
        expect(onB.events.find((e) => e.event === 'message')?.data).toMatchObject({
          recordId: id,
          bot: 'shop',
          thread: 'ada',
        })
        expect((await (await fetch(`${b.url}/api/records/${id}`)).json()).raw).toEqual({
          text: 'stored by A',
          userId: 'ada',
        })
        expect(await (await fetch(`${b.url}/api/stats`)).json()).toMatchObject({ records: 1, messages: 1 })
        expect((await post(b.url, { text: 'stored by B', userId: 'bob' })).status).toBe(201)
        await poll(() => onA.events.filter((e) => e.event === 'message').map((e) => e.data.text)).toEqual([
          'stored by A',
          'stored by B',
        ])
        // Each instance shows each message once (its own ones locally, the other's through NOTIFY).
        // Checked after an event, not a delay: one more message through each instance, notified
        // after the first two, has reached both streams, so a second copy of those would have too.
        expect((await post(a.url, { text: 'last by A', userId: 'ada' })).status).toBe(201)
        expect((await post(b.url, { text: 'last by B', userId: 'bob' })).status).toBe(201)
        const texts = (s: typeof onA) => s.events.filter((e) => e.event === 'message').map((e) => e.data.text)
        for (const s of [onA, onB]) await poll(() => texts(s).length >= 4 && texts(s).includes('last by B')).toBe(true)
        for (const s of [onA, onB])
          expect(texts(s).sort()).toEqual(['last by A', 'last by B', 'stored by A', 'stored by B'])
      } finally {
        onA.close()
        onB.close()
      }
    })

    it("a retention sweep on one instance refreshes the other's dashboards once, per bot, not once per step", async () => {
      const old = Date.now() - 10 * 86_400_000
      for (let i = 0; i < 6; i++) {
        const body = { text: `old ${i}`, userId: 'gone' }
        await a.store.add(
          {
            bot: i < 5 ? 'shop' : 'marker',
            platform: 'universal',
            type: 'incoming',
            v: '11.1.0-rest',
            raw: JSON.stringify(body),
            receivedAt: old,
          },
          normalizeRecord('universal', 'incoming', body),
        )
      }
      const onB = await stream(b.url)
      try {
        const before = Date.now() - 86_400_000
        // Three steps of a sweep (2 + 2 + 1 records), as startRetention drains.
        for (const n of [2, 2, 1]) expect(await a.store.deleteOlderThan({ before, bot: 'shop', limit: 2 })).toBe(n)
        await poll(() => onB.events.filter((e) => e.event === 'expire').map((e) => e.data)).toEqual([
          { bot: 'shop', before },
        ])
        // Nothing more for shop, checked by an event instead of a delay: a sweep of another bot
        // notified after shop's steps reaches B through the same channel and the same gathering,
        // so a second notice for shop would be on the stream no later than this one.
        expect(await a.store.deleteOlderThan({ before, bot: 'marker', limit: 2 })).toBe(1)
        await poll(() => onB.events.filter((e) => e.event === 'expire').map((e) => e.data.bot)).toContain('marker')
        expect(onB.events.filter((e) => e.event === 'expire').map((e) => e.data)).toEqual([
          { bot: 'shop', before },
          { bot: 'marker', before },
        ])
        expect(await b.store.transcript('shop', 'gone')).toEqual([])
      } finally {
        onB.close()
      }
    })

    it('pause through one instance: the bot is told, the other instance streams and reports the state', async () => {
      const onB = await stream(b.url)
      try {
        const res = await fetch(`${a.url}/api/pause`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ bot: 'shop', thread: 'ada', paused: true }),
        })
        expect(res.status).toBe(200)
        expect(await bot.tracker.isPaused('ada')).toBe(true)
        await poll(() => onB.events.find((e) => e.event === 'pause')?.data).toMatchObject({
          bot: 'shop',
          thread: 'ada',
          paused: true,
        })
        const t = await (await fetch(`${b.url}/api/transcript?bot=shop&thread=ada`)).json()
        expect(t.paused).toBe(true)
        // Unpause from the other instance.
        const back = await fetch(`${b.url}/api/pause`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ bot: 'shop', thread: 'ada', paused: false }),
        })
        expect(back.status).toBe(200)
        expect(await bot.tracker.isPaused('ada')).toBe(false)
        expect((await (await fetch(`${a.url}/api/transcript?bot=shop&thread=ada`)).json()).paused).toBe(false)
      } finally {
        onB.close()
      }
    })

    it('a Messenger page connected on one instance is served by the other', async () => {
      const res = await fetch(`${a.url}/api/messenger-pages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pageId: 'PAGE-9', appSecret: 'page-9-secret', verifyToken: 'tok-9', bot: 'fb-9' }),
      })
      expect(res.status).toBe(201)
      await poll(async () => (await (await fetch(`${b.url}/api/messenger-pages`)).json()).pages).toEqual([
        { pageId: 'PAGE-9', bot: 'fb-9' },
      ])
      const challenge = await fetch(
        `${b.url}/messenger/webhook?hub.mode=subscribe&hub.verify_token=tok-9&hub.challenge=77`,
      )
      expect(await challenge.text()).toBe('77')
      const raw = JSON.stringify({
        object: 'page',
        entry: [
          {
            id: 'PAGE-9',
            time: Date.now(),
            messaging: [
              {
                sender: { id: 'PSID-9' },
                recipient: { id: 'PAGE-9' },
                timestamp: Date.now(),
                message: { mid: 'm9', text: 'via B' },
              },
            ],
          },
        ],
      })
      const signature = `sha256=${createHmac('sha256', 'page-9-secret').update(raw).digest('hex')}`
      const hook = await fetch(`${b.url}/messenger/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
        body: raw,
      })
      expect(hook.status).toBe(200)
      expect((await a.store.transcript('fb-9', 'PSID-9')).map((m) => m.text)).toEqual(['via B'])
    })

    it('a record or batch retried through the other instance with the same keys is stored once', async () => {
      const before = await a.store.counts()
      const key = { 'idempotency-key': 'retry.1' }
      const [first, again] = await Promise.all([
        post(a.url, { text: 'sent twice', userId: 'dup' }, key),
        post(b.url, { text: 'sent twice', userId: 'dup' }, key),
      ])
      const answers = [await first.json(), await again.json()] as Array<{ id: number; duplicate?: boolean }>
      expect([first.status, again.status]).toEqual([201, 201])
      expect(answers[0]?.id).toBe(answers[1]?.id)
      expect(answers.filter((x) => x.duplicate === true)).toHaveLength(1)
      const batch = JSON.stringify({
        records: [0, 1, 2].map((i) => ({
          platform: 'universal',
          type: 'incoming',
          v: '11.1.0-rest',
          idempotencyKey: `batch.${i}`,
          body: { text: `batched ${i}`, userId: 'dup' },
        })),
      })
      const postBatch = (url: string) =>
        fetch(`${url}/track/batch?apiKey=shop-key`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: batch,
        })
      const one = (await (await postBatch(a.url)).json()) as { results: Array<{ status: string; id: number }> }
      const two = (await (await postBatch(b.url)).json()) as { results: Array<{ status: string; id: number }> }
      expect(one.results.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted'])
      expect(two.results.map((r) => r.status)).toEqual(['duplicate', 'duplicate', 'duplicate'])
      expect(two.results.map((r) => r.id)).toEqual(one.results.map((r) => r.id))
      expect(await b.store.counts()).toEqual({ records: before.records + 4, messages: before.messages + 4 })
    })

    it('the same Idempotency-Key through both instances is stored once', async () => {
      const before = await a.store.counts()
      // The same record with the same key, retried through the other instance at the same time.
      const retried = () => [
        {
          record: {
            bot: 'shop',
            platform: 'universal' as const,
            type: 'incoming' as const,
            v: '11.1.0-rest',
            raw: '{"text":"k","userId":"kay"}',
            receivedAt: Date.now(),
            idempotencyKey: 'same.1',
          },
          messages: [],
        },
      ]
      const [r1, r2] = await Promise.all([a.store.addMany(retried()), b.store.addMany(retried())])
      expect(r1[0]?.id).toBe(r2[0]?.id)
      expect([r1[0]?.duplicate, r2[0]?.duplicate].sort()).toEqual([false, true])
      expect((await b.store.counts()).records).toBe(before.records + 1)
    })

    it('the database going away: 503 + Retry-After, then reconnects; a tracker holds, retries, loses nothing', async () => {
      const onB = await stream(b.url)
      const tracker = createTracker({
        apiKey: 'shop-key',
        baseUrl: a.url,
        retry: { minDelayMs: 100, maxDelayMs: 500, maxAttempts: 1000 },
      })
      try {
        const before = (await a.store.counts()).records
        await server.stop()
        const down = await post(a.url, { text: 'while down', userId: 'cy' })
        expect(down.status).toBe(503)
        expect(down.headers.get('retry-after')).toBe('1')
        expect(await down.json()).toEqual({
          error: { code: 'store_unavailable', message: expect.any(String), path: '' },
        })
        expect((await fetch(`${b.url}/api/stats`)).status).toBe(503)
        // Still serving: the dashboard page itself does not need the database.
        expect((await fetch(`${b.url}/`)).status).toBe(200)
        const metOutage = new Promise((r) => tracker.once('retry', r))
        for (let i = 0; i < 20; i++) tracker.universal.logIncoming({ text: `held ${i}`, userId: 'cy' })
        await metOutage // the tracker's attempts met the outage (an event, not a delay)
        await server.start()
        await tracker.flush(20_000)
        expect(tracker.stats()).toMatchObject({ sent: 20, failed: 0 })
        expect((await a.store.counts()).records).toBe(before + 20)
        const texts = (await b.store.transcript('shop', 'cy')).map((m) => m.text)
        expect(texts.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `held ${i}`).sort())
        // B's LISTEN session came back on its own: A's records reach B's stream, each once. Only
        // this thread's messages are counted: a notice of an earlier test's records (the batch
        // stored through A) can reach B's LISTEN session after this stream opened (CI, Node 26).
        const onThread = () =>
          onB.events
            .filter((e) => e.event === 'message' && e.data.thread === 'cy')
            .map((e) => String(e.data.text))
            .sort()
        await poll(onThread).toEqual(texts)
        expect((await post(a.url, { text: 'after', userId: 'cy' })).status).toBe(201)
        await poll(onThread).toEqual([...texts, 'after'].sort())
      } finally {
        onB.close()
        await tracker.close()
      }
    })
  })
})
