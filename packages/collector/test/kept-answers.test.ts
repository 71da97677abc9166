/**
 * The funnel and overview routes' answers computed off the request path (answer-cache.ts), through a real
 * collector on 127.0.0.1 port 0 over a real SQLite store whose funnel the test holds back: 202
 * `preparing` the first time, the answer once counted, kept while nothing changed, the previous
 * answer (`refreshing`, `asOf`) while a slow funnel is counted again after new messages, fresh
 * answers right after ingest and erasure for a funnel that counts fast, 503 for a store fault;
 * the overview's figures move with an audit entry (a handoff) as well as with messages.
 * And on PostgreSQL: a funnel off the request path runs under its own statement bound, not the
 * store's `queryTimeoutMs`.
 */
import {
  type Collector,
  PgRecordStore,
  SqliteRecordStore,
  StoreUnavailableError,
  startCollector,
} from '@convotrack/collector'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { periodStart } from '../src/reports/periods'
import { item } from './store-contract'
import { heldStore } from './support/held-reads'
import { type PostgresServer, startPostgres } from './support/postgres'

let collector: Collector | undefined
afterEach(async () => {
  await collector?.close()
  collector = undefined
})

const track = (c: Collector, userId: string, intent: string) =>
  fetch(`${c.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId, text: `${intent} from ${userId}`, intent: { name: intent } }),
  }).then((r) => expect(r.status).toBe(201))

const funnel = async (c: Collector, steps: string, extra = '') => {
  const res = await fetch(`${c.url}/api/reports/funnel?steps=${steps}&all=1${extra}`)
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() }
}
const json = (r: { body: string }) =>
  JSON.parse(r.body) as {
    steps: Array<{ step: string; users: number }>
    asOf?: number
    refreshing?: boolean
    preparing?: boolean
  }
const users = (r: { body: string }) => json(r).steps.map((s) => s.users)

/**
 * A collector over a held store holding ada's greeting; `fast`: with the default wait and counts
 * not held, else a wait of 50 ms and its counts held from now on.
 */
async function startHeld(fast = false) {
  const { store, state, release } = heldStore()
  collector = await startCollector({
    port: 0,
    log: false,
    store,
    ...(fast ? {} : { reportWaitMs: 50 }),
    bots: [{ name: 'shop', apiKey: 'shop-key' }],
  })
  const c = collector
  await track(c, 'ada', 'greet')
  state.held = !fast
  return { c, state, release }
}

describe('GET /api/reports/funnel, counted off the request path', () => {
  it('202 the first time past the wait, then the answer, kept; after new messages the previous answer while it is counted again', async () => {
    const { c, state, release } = await startHeld()
    const first = await funnel(c, 'intent:greet')
    expect(first.status).toBe(202)
    expect(first.retryAfter).toBe('2')
    expect(json(first)).toMatchObject({ steps: [], preparing: true })
    // The CSV of a funnel being counted: its header row, also 202; the same computation.
    const csv = await funnel(c, 'intent:greet', '&format=csv')
    expect(csv.status).toBe(202)
    expect(csv.body.trim()).toBe('step,users')
    expect(state.calls.funnel).toBe(1)
    // Off the request path, a funnel gets its own statement bound.
    expect(state.budgets).toEqual([60_000])

    const counted = Date.now()
    release()
    const ready = await funnel(c, 'intent:greet')
    expect(ready.status).toBe(200)
    expect(json(ready)).toMatchObject({ steps: [{ step: 'intent:greet', users: 1 }], refreshing: false })
    expect(json(ready).asOf).toBeLessThanOrEqual(counted)
    // Kept while nothing changed: no computation.
    expect(users(await funnel(c, 'intent:greet'))).toEqual([1])
    expect(state.calls.funnel).toBe(1)

    // New messages: this funnel was slow (held past the wait), so the previous answer at once…
    await track(c, 'bob', 'greet')
    const behind = await funnel(c, 'intent:greet')
    expect(behind.status).toBe(200)
    expect(json(behind)).toMatchObject({ steps: [{ users: 1 }], refreshing: true, asOf: json(ready).asOf })
    expect(state.calls.funnel).toBe(2)
    // …and the newer answer once counted.
    release()
    await expect
      .poll(async () => {
        const r = json(await funnel(c, 'intent:greet'))
        return [r.steps[0]?.users, r.refreshing]
      })
      .toEqual([2, false])
    expect(state.calls.funnel).toBe(2)
  })

  it('a funnel that counts within the wait answers fresh right after ingest and after an erasure', async () => {
    const { c, state } = await startHeld(true)
    await track(c, 'bob', 'greet')
    await track(c, 'bob', 'buy')
    expect(users(await funnel(c, 'intent:greet,intent:buy'))).toEqual([2, 1])
    await track(c, 'ada', 'buy')
    expect(users(await funnel(c, 'intent:greet,intent:buy'))).toEqual([2, 2])
    expect(users(await funnel(c, 'intent:greet,intent:buy'))).toEqual([2, 2])
    expect(state.calls.funnel).toBe(2)
    // Bob's messages are not the newest: the store's newest id does not move, the erasure is told by the feed.
    const erased = await fetch(`${c.url}/api/users/bob?bot=shop`, { method: 'DELETE' })
    expect(erased.status).toBe(200)
    const after = json(await funnel(c, 'intent:greet,intent:buy'))
    expect(after).toMatchObject({ steps: [{ users: 1 }, { users: 1 }], refreshing: false })
    expect(state.calls.funnel).toBe(3)
  })

  it('answers 503 with Retry-After when the store fails the computation, then counts again', async () => {
    const { c, state } = await startHeld(true)
    state.fault = new StoreUnavailableError('PostgreSQL does not answer in time')
    const down = await funnel(c, 'intent:greet')
    expect(down.status).toBe(503)
    expect(down.retryAfter).not.toBeNull()
    expect(down.body).toContain('store_unavailable')
    state.fault = undefined
    expect(users(await funnel(c, 'intent:greet'))).toEqual([1])
  })
})

describe('GET /api/reports/overview, counted off the request path', () => {
  const overview = async (c: Collector, extra = '') => {
    const res = await fetch(`${c.url}/api/reports/overview?all=1${extra}`)
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() }
  }
  type Overview = { users?: number; handoffs?: number; asOf?: number; refreshing?: boolean; preparing?: boolean }

  it('202 the first time past the wait, then the figures, kept; a handoff in the audit log counts at once', async () => {
    const { c, state, release } = await startHeld()
    const first = await overview(c)
    expect(first.status).toBe(202)
    expect(first.retryAfter).toBe('2')
    expect(JSON.parse(first.body)).toMatchObject({ preparing: true })
    const csv = await overview(c, '&format=csv')
    expect(csv.status).toBe(202)
    expect(csv.body.trim().split('\r\n')).toHaveLength(1)
    expect(csv.body).toMatch(/^from,to,users,/)
    expect(state.budgets).toEqual([60_000])
    state.held = false
    release()
    const ready = JSON.parse((await overview(c)).body) as Overview
    expect(ready).toMatchObject({ users: 1, handoffs: 0, refreshing: false })
    expect(JSON.parse((await overview(c)).body)).toMatchObject({ users: 1, asOf: ready.asOf })
    expect(state.calls.overview).toBe(1)

    // An operator paused ada's conversation: an audit entry, no message (the store's newest id stays).
    await c.store.addAudit({
      ts: Date.now(),
      actor: 'local',
      action: 'pause',
      bot: 'shop',
      target: 'ada',
      detail: null,
    })
    // That read was slow (held past the wait): the previous figures at once, then the new ones.
    const next = JSON.parse((await overview(c)).body) as Overview
    expect(next.handoffs === 1 || next.refreshing === true).toBe(true)
    await expect.poll(async () => (JSON.parse((await overview(c)).body) as Overview).handoffs).toBe(1)
    expect(state.calls.overview).toBe(2)
  })
})

describe('GET /api/reports/overview of whole local days in the past: the zone becomes kept', () => {
  it('a past range of Tokyo days makes Tokyo kept on demand, then its users are sums over its days; an open range, or Kolkata days, ask nothing', async () => {
    const store = new SqliteRecordStore(':memory:', { retentionZonesOnDemand: 1 })
    collector = await startCollector({ port: 0, log: false, store, bots: [{ name: 'shop', apiKey: 'shop-key' }] })
    const c = collector
    const DAY = 86_400_000
    const tokyo = periodStart('Asia/Tokyo', Date.now(), 'day')
    // ada on three of the last five Tokyo days, bo on one, cy only today (after the range).
    for (const [user, back] of [
      ['ada', 4],
      ['ada', 2],
      ['ada', 0],
      ['bo', 3],
      ['cy', 0],
    ] as const) {
      const i = item(
        'shop',
        'universal',
        'incoming',
        { userId: user, text: 'hi' },
        { at: tokyo - back * DAY + 3_600_000 },
      )
      await store.add(i.record, i.messages)
    }
    const get = (q: string) =>
      fetch(`${c.url}/api/reports/overview?${q}`).then((r) => r.json() as Promise<{ users?: number }>)
    // An open range in Paris (the dashboard's presets end tonight): no zone asked for. Nor past
    // Kolkata days: they start at :30, and the overview reads whole hours.
    await get(`from=${new Date(tokyo - 5 * DAY).toISOString()}&tz=Europe%2FParis`)
    const kolkata = periodStart('Asia/Kolkata', Date.now(), 'day')
    await get(
      `from=${new Date(kolkata - 3 * DAY).toISOString()}&to=${new Date(kolkata - DAY).toISOString()}&tz=Asia%2FKolkata`,
    )
    const past = `from=${new Date(tokyo - 3 * DAY).toISOString()}&to=${new Date(tokyo - DAY).toISOString()}&tz=Asia%2FTokyo`
    await get(past)
    // The one zone allowed on demand is taken (asking for Paris now would take it else) — by Tokyo.
    expect(await store.retentionZone('Europe/Paris')).toMatchObject({ kept: null })
    await store.retentionZoneReady('Asia/Tokyo')
    expect(await store.retentionZone('Asia/Tokyo')).toMatchObject({ kept: 'demand', ready: true })
    // ada (day −2) and bo (day −3): from the previous-day rows of Tokyo's days.
    expect((await store.overview({ from: tokyo - 3 * DAY, to: tokyo - DAY, tz: 'Asia/Tokyo' })).users).toBe(2)
    await expect.poll(async () => (await get(past)).users).toBe(2)
  })
})

describe('PostgreSQL: a funnel off the request path has its own statement bound', () => {
  let server: PostgresServer | undefined
  const opened: Array<{ close(): Promise<void> }> = []
  afterAll(async () => {
    for (const s of opened.splice(0)) await s.close()
    await server?.destroy()
  })
  const steps = [
    { kind: 'intent', name: 'greet' },
    { kind: 'intent', name: 'buy' },
  ] as const

  /** A store whose funnel answers [1, 1], and a session that can hold the funnel's tables. */
  async function lockedFunnel(queryTimeoutMs: number) {
    server ??= await startPostgres()
    const url = await server.createDatabase()
    const store = await PgRecordStore.open(url, { queryTimeoutMs })
    opened.push(store)
    const now = Date.now()
    const said = (text: string, intent: string, at: number) =>
      item('shop', 'universal', 'incoming', { userId: 'ada', text, intent: { name: intent } }, { at })
    for (const i of [said('hi', 'greet', now - 60_000), said('buy', 'buy', now - 1_000)])
      await store.add(i.record, i.messages)
    expect((await store.funnel({ steps })).map((l) => l.users)).toEqual([1, 1])
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    opened.push({ close: () => locker.end() })
    const tables = await locker.query<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE tablename LIKE '%rollup_user_steps' OR tablename LIKE '%rollup_spans'`,
    )
    expect(tables.rows.length).toBe(2)
    /** Holds the funnel's tables (ACCESS EXCLUSIVE) in an open transaction: the funnel waits for the lock. */
    const lock = async () => {
      await locker.query('BEGIN')
      await locker.query(`LOCK TABLE ${tables.rows.map((r) => r.t).join(', ')} IN ACCESS EXCLUSIVE MODE`)
    }
    /**
     * How many other sessions wait on a lock for longer than `ms`, as the server sees it now (the
     * activity view is read afresh each time: inside a transaction it is a snapshot).
     */
    const waitingLonger = async (ms: number) => {
      await locker.query('SELECT pg_stat_clear_snapshot()')
      const waiting = await locker.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid()
           AND wait_event_type = 'Lock' AND clock_timestamp() - query_start > make_interval(secs => $1::float8 / 1000)`,
        [ms],
      )
      return waiting.rows[0]?.n
    }
    return { store, locker, lock, waitingLonger }
  }

  it('a funnel held past queryTimeoutMs is a store fault; with budgetMs it waits and answers', async () => {
    const { store, locker, lock, waitingLonger } = await lockedFunnel(300)
    await lock()
    await expect(store.funnel({ steps })).rejects.toBeInstanceOf(StoreUnavailableError)
    const within = store.funnel({ steps, budgetMs: 30_000 })
    // The funnel's statement waits on the lock past the store's own bound (300 ms); then the lock
    // goes and the answer comes.
    await expect.poll(() => waitingLonger(600), { timeout: 20_000, interval: 50 }).toBe(1)
    await locker.query('ROLLBACK')
    expect((await within).map((l) => l.users)).toEqual([1, 1])
  })

  it('closing the store cancels a count running off the request path instead of waiting out its minute', async () => {
    const { store, locker, lock, waitingLonger } = await lockedFunnel(3_000)
    await lock()
    try {
      const within = store.funnel({ steps, budgetMs: 60_000 })
      within.catch(() => {})
      await expect.poll(() => waitingLonger(0), { timeout: 20_000, interval: 50 }).toBe(1)
      // close() settles while the lock is still held: it did not wait for the count (which would
      // wait on the lock for a minute); the count ends with a store fault, its statement gone.
      await store.close()
      await expect(within).rejects.toThrow(/closed while this read ran/)
      await expect.poll(() => waitingLonger(0), { timeout: 20_000, interval: 50 }).toBe(0)
      // A count asked after close is refused at once.
      await expect(store.funnel({ steps, budgetMs: 60_000 })).rejects.toThrow()
    } finally {
      await locker.query('ROLLBACK')
    }
  })
})
