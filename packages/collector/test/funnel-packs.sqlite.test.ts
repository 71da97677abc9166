/**
 * Funnel step packs kept in a SQLite store's process (funnel-packs-memory.ts): the funnel read from
 * them equals the recount from the stored messages after every kind of write — a record dated in
 * a past day, an erasure, the retention sweep, another process writing the same file — and a day
 * is read from the database again only after a write to it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import { afterAll, describe, expect, it } from 'vitest'
import type { FunnelStep } from '../src/reports/analytics-types'
import { sqliteDialect as d, type Query, type Row } from '../src/reports/dialect'
import { FunnelPackCache } from '../src/reports/funnel-packs-memory'
import { DAY_MS, HOUR_MS } from '../src/reports/range'
import type { RollupMessage } from '../src/reports/rollup-delta'
import { busiestWalk, expectFunnelRecount, FUNNELS, funnelOf, stepItem as step, trafficOn } from './funnel-recount'
import { allMessages, load } from './rollup-contract'
import { openKeptSqlite } from './support/kept-sqlite'

const BASE = Date.UTC(2026, 2, 1)
const dir = mkdtempSync(join(tmpdir(), 'convotrack-funnel-packs-'))
const opened: Array<{ close(): unknown }> = []
afterAll(async () => {
  for (const s of opened) await s.close()
  rmSync(dir, { recursive: true, force: true })
})

let files = 0
/** A store on a new file, and a cache of the test's own over a second connection, its statements listed. */
function fresh() {
  const file = join(dir, `store-${++files}.db`)
  const store = new SqliteRecordStore(file)
  opened.push(store)
  const db = openKeptSqlite(file)
  opened.push(db)
  const statements: string[] = []
  const prepared = new Map<string, ReturnType<typeof db.prepare>>()
  const run = (q: Query): Row[] => {
    statements.push(q.sql)
    const s = prepared.get(q.sql) ?? db.prepare(q.sql)
    prepared.set(q.sql, s)
    return s.all(...(q.params as unknown[])) as Row[]
  }
  const cache = new FunnelPackCache(d, run)
  /** The statements that read a day's rows of a step since the last call. */
  const dayReads = (): number => {
    const n = statements.filter((s) => s.includes('first_ts, last_ts')).length
    statements.length = 0
    return n
  }
  return { file, store, cache, dayReads }
}

const RANGES = [
  { from: BASE + 5 * HOUR_MS, to: BASE + 30 * HOUR_MS },
  { from: BASE + DAY_MS, to: BASE + 7 * DAY_MS },
  { from: BASE + 6 * DAY_MS + 3 * HOUR_MS, to: BASE + 40 * DAY_MS },
]

describe('funnel step packs kept in the process: SQLite', () => {
  it('equal the recount after a record dated in a past day, an erasure and the retention sweep; a day is read again only after a write to it', async () => {
    const { store, cache, dayReads } = fresh()
    await load(store, [...trafficOn(0, 500, 31), ...trafficOn(5, 500, 32)])
    let all = await allMessages(store)
    const walk = busiestWalk(all)
    // Before the warm-up: the store counts by the statement; the cache declines (too many days to make).
    await expectFunnelRecount(store, all, RANGES)
    expect(cache.count({ steps: walk })).toBeNull()
    await store.repackFunnels()
    await expectFunnelRecount(store, all, RANGES)

    // Made once: a second count reads no day of a step from the database.
    await cache.warm()
    expect(dayReads()).toBeGreaterThan(walk.length)
    for (const steps of [...FUNNELS, walk]) expect(cache.count({ steps })).toEqual(funnelOf(all, {}, steps))
    expect(dayReads()).toBe(0)

    // A record dated in a past day: the store's own packs of that day are made again.
    const late = BASE + DAY_MS + 10 * HOUR_MS
    for (const [i, s] of walk.entries()) {
      const item = step('shop', 'late-user', late + i * 60_000, s)
      await store.add(item.record, item.messages)
    }
    all = await allMessages(store)
    expect(await store.funnel({ steps: walk })).toEqual(funnelOf(all, {}, walk))
    await expectFunnelRecount(store, all, RANGES)
    // The test's cache, on another connection: the store's commits change its data_version, every
    // day is made again.
    expect(cache.count({ steps: walk })).toBeNull()
    await cache.warm()
    expect(cache.count({ steps: walk })).toEqual(funnelOf(all, {}, walk))

    // Erasure, then the retention sweep of the first days (packs let go, made again).
    await store.eraseUser('shop', 'late-user')
    all = await allMessages(store)
    await expectFunnelRecount(store, all, RANGES)
    await store.repackFunnels()
    await expectFunnelRecount(store, all, RANGES)
    while ((await store.deleteOlderThan({ before: BASE + 10 * DAY_MS + 200_000, limit: 50 })) > 0) {}
    all = await allMessages(store)
    await store.repackFunnels()
    await expectFunnelRecount(store, all, RANGES)
    await cache.warm()
    expect(cache.count({ steps: walk })).toEqual(funnelOf(all, {}, walk))
  })

  it("the store's own write to a past day is counted, and a write by another process on the same file makes every day again", async () => {
    const { file, store, cache, dayReads } = fresh()
    await load(store, trafficOn(0, 400, 41))
    let all = await allMessages(store)
    const walk = busiestWalk(all)
    // The store's own cache: its count after its own write to one day.
    await store.repackFunnels()
    expect(await store.funnel({ steps: walk })).toEqual(funnelOf(all, {}, walk))
    const item = step('shop', 'one-day-user', BASE + 2 * DAY_MS + HOUR_MS, walk[0] as FunnelStep)
    await store.add(item.record, item.messages)
    all = await allMessages(store)
    expect(await store.funnel({ steps: walk })).toEqual(funnelOf(all, {}, walk))

    // Another process on the same file (a second store): the first store's packs are all made again.
    await cache.warm()
    expect(cache.count({ steps: walk })).toEqual(funnelOf(all, {}, walk))
    dayReads()
    const before = funnelOf(all, {}, walk)
    const other = new SqliteRecordStore(file)
    opened.push(other)
    for (const [i, s] of walk.entries()) {
      const late = step('support', 'other-process-user', BASE + 3 * DAY_MS + i * 60_000, s)
      await other.add(late.record, late.messages)
    }
    all = await allMessages(store)
    // That user went through every step: each count is one more.
    expect(funnelOf(all, {}, walk).map((l) => l.users)).toEqual(before.map((l) => l.users + 1))
    expect(await store.funnel({ steps: walk })).toEqual(funnelOf(all, {}, walk))
    await store.repackFunnels()
    expect(await store.funnel({ steps: walk })).toEqual(funnelOf(all, {}, walk))
    expect(cache.count({ steps: walk })).toBeNull()
    await cache.warm()
    expect(dayReads()).toBeGreaterThan(walk.length)
    expect(cache.count({ steps: walk })).toEqual(funnelOf(all, {}, walk))
  })

  it('packs every step ahead: after the warm-up a funnel over any steps reads no step row', async () => {
    const { store, cache, dayReads } = fresh()
    await load(store, [...trafficOn(0, 300, 51), ...trafficOn(4, 300, 52)])
    const all = await allMessages(store)
    await cache.warm()
    expect(dayReads()).toBeGreaterThan(10)
    for (const walk of [...FUNNELS, busiestWalk(all)]) {
      for (const q of [{}, ...RANGES, { bot: 'shop' }]) {
        expect(cache.count({ ...q, steps: walk }), JSON.stringify(q)).toEqual(funnelOf(all, q, walk))
      }
      // A sign-in's bots.
      expect(cache.count({ bots: ['support'], steps: walk })).toEqual(funnelOf(all, { bot: 'support' }, walk))
    }
    expect(dayReads()).toBe(0)
    // A take-back of no step (a retention sweep that found nothing, an outgoing message) keeps the
    // packs; one of a step lets them all go.
    const incoming = all.find((m) => m.direction === 'incoming' && m.intent !== null) as (typeof all)[number]
    // As the store takes it back (the fields a step is read from).
    const taken = (direction: string) =>
      ({
        bot: incoming.bot,
        userId: incoming.userId,
        ts: incoming.ts,
        direction,
        intent: incoming.intent,
        eventType: null,
        eventKey: null,
      }) as unknown as RollupMessage
    cache.takenBack([])
    cache.takenBack([taken('outgoing')])
    expect(cache.count({ steps: busiestWalk(all) })).toEqual(funnelOf(all, {}, busiestWalk(all)))
    expect(dayReads()).toBe(0)
    cache.takenBack([taken('incoming')])
    expect(cache.count({ steps: busiestWalk(all) })).toBeNull()
    // A warm-up stopped (the store closing) resolves at once.
    const stopped = cache.warm(60_000)
    cache.stop()
    await stopped
  })
})
