/**
 * The analytics summaries whose reads must not grow with history (retention cohorts, path
 * prefixes) against a full recount of the stored messages, after what moves them: records
 * arriving out of event-time order (a user's first-seen moving earlier), duplicates, erasure,
 * retention in small steps, two writers at once, and a start with other retention zones. Run by
 * the SQLite and PostgreSQL contract files.
 */
import type { RecordStore, RetentionZoneState, StoredMessage, StoreOptions } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { type Period, periodIndex, periodStart } from '../src/reports/periods'
import { joinSessions, type SessionPoint } from '../src/reports/sessions'
import { expectFunnelRecount } from './funnel-recount'
import { allMessages, expectOverviewRecount, load, traffic } from './rollup-contract'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const BASE = Date.UTC(2026, 2, 1)
const GAP = 30 * 60_000
/** Kept in the tests' stores: the cohort table answers them. Others are answered from active hours. */
export const KEPT_ZONES = ['Asia/Kolkata', 'Europe/Berlin', 'UTC']

/** Makes a store keeping `zones`' cohorts (and `options`); `reopen` opens the same database again (a second writer, a restart). */
export type RecountFactory = (
  zones?: readonly string[],
  options?: StoreOptions,
) => Promise<{
  store: RecordStore
  reopen?: (zones?: readonly string[], options?: StoreOptions) => Promise<RecordStore>
}>

/**
 * Zones the tests make kept on demand: Kolkata under its other name (answered from hours until
 * then), and a half-hour zone with a DST change in the data's March.
 */
const ON_DEMAND = ['Asia/Calcutta', 'America/St_Johns']

/** traffic() spread over seven weeks and two month ends (event time, out of arrival order). */
function spread(n: number, seed: number, keyPrefix = 'k', threadPrefix = '') {
  return traffic(n, seed, keyPrefix, threadPrefix).map((item, i) => {
    const shift = [-20, 0, 9, 30, -3][i % 5] as number
    const eventTs = (item.record.eventTs as number) + shift * DAY
    return { ...item, record: { ...item.record, eventTs } }
  })
}

/** The retention report, recounted: whole periods, cohort = the period of a user's first message. */
function retentionOf(all: StoredMessage[], q: { from: number; to: number; tz: string; period: Period }) {
  const users = new Map<string, number[]>()
  for (const m of all)
    if (m.userId !== '')
      users.set(`${m.bot}\u0000${m.userId}`, [...(users.get(`${m.bot}\u0000${m.userId}`) ?? []), m.ts])
  const from = periodStart(q.tz, q.from, q.period)
  const last = periodStart(q.tz, q.to - 1, q.period)
  const cohorts = new Map<number, Array<Set<string>>>()
  for (const [user, times] of users) {
    const start = periodStart(q.tz, Math.min(...times), q.period)
    if (start < from || start >= q.to) continue
    let c = cohorts.get(start)
    if (!c) {
      c = Array.from({ length: periodIndex(q.tz, start, last, q.period) + 1 }, () => new Set<string>())
      cohorts.set(start, c)
    }
    for (const t of times) {
      const p = periodStart(q.tz, t, q.period)
      if (p < q.to) c[periodIndex(q.tz, start, p, q.period)]?.add(user)
    }
  }
  return {
    period: q.period,
    cohorts: [...cohorts]
      .sort((a, b) => a[0] - b[0])
      .map(([start, c]) => ({ start, users: c[0]?.size ?? 0, active: c.map((s) => s.size) })),
  }
}

/** The paths report, recounted from sessions joined again from the messages (start in the hour-widened range). */
function pathsOf(all: StoredMessage[], q: { from: number; to: number; depth: number }) {
  const groups = new Map<string, { bot: string; userId: string; sid: string; points: SessionPoint[] }>()
  for (const m of all) {
    if (m.userId === '' || m.direction === 'event') continue
    const sid = m.sessionId ?? ''
    const k = [m.bot, m.userId, sid].join('\u0000')
    const g = groups.get(k) ?? { bot: m.bot, userId: m.userId, sid, points: [] }
    groups.set(k, g)
    g.points.push({
      ts: m.ts,
      incoming: m.direction === 'incoming',
      intent: m.direction === 'incoming' ? m.intent : null,
    })
  }
  const lo = Math.floor(q.from / HOUR) * HOUR
  const hi = Math.ceil(q.to / HOUR) * HOUR
  const counts = new Map<string, number>()
  for (const g of groups.values())
    for (const s of joinSessions(g, [], g.points, GAP)) {
      const path = s.intents.slice(0, q.depth).map((x) => x[1])
      if (s.start < lo || s.start >= hi || path.length === 0) continue
      counts.set(JSON.stringify(path), (counts.get(JSON.stringify(path)) ?? 0) + 1)
    }
  return [...counts]
    .map(([p, sessions]) => ({ intents: JSON.parse(p) as string[], sessions }))
    .sort((a, b) => b.sessions - a.sessions || (a.intents.join('\u0000') < b.intents.join('\u0000') ? -1 : 1))
}

const RANGES = [
  { from: BASE - 30 * DAY, to: BASE + 50 * DAY },
  // Cut inside periods: the periods holding `from` and `to` count whole.
  { from: BASE + 2 * DAY + 5 * HOUR, to: BASE + 12 * DAY + 7 * HOUR },
]

/**
 * Ranges of hours from BASE (a UTC midnight) over the data's busy days (spread(): BASE − 20 … − 17,
 * − 3 … + 3, + 9 … + 12, + 30 … + 33 days): partial first and last days around busy and quiet
 * whole days, two adjacent partial days, one edge at a midnight, a range inside one day, most of
 * the data.
 */
const EDGE_HOURS: ReadonlyArray<[number, number]> = [
  [-3 * 24 + 5, 2 * 24 + 7],
  [24 + 5, 2 * 24 + 7],
  [9 * 24 + 13, 10 * 24 + 11],
  // Partial days around quiet whole days: each partial day's users are counted for it alone.
  [2 * 24 + 14, 9 * 24 + 10],
  [0, 2 * 24 + 7],
  [-2 * 24 + 5, 10 * 24],
  [24 + 3, 24 + 9],
  [-19 * 24 + 4, 31 * 24 + 2],
]

/**
 * Every retention (kept zones, one that is not, and `onDemand`: zones kept on demand, prepared),
 * paths and funnel answer equals the recount.
 */
export async function expectAnalyticsRecount(
  store: RecordStore,
  ranges: ReadonlyArray<{ from: number; to: number }> = RANGES,
  onDemand: readonly string[] = [],
) {
  const all = await allMessages(store)
  for (const range of ranges) {
    // Asia/Calcutta is Kolkata under another name: not kept, answered from active hours.
    for (const tz of new Set(['UTC', 'Europe/Berlin', 'Asia/Calcutta', ...onDemand]))
      for (const period of ['day', 'week', 'month'] as const) {
        const q = { ...range, tz, period }
        // Kolkata's half-hour offset against hour rows: the hours answer is exact to the hour only.
        if (tz === 'Asia/Calcutta' && period === 'day' && !onDemand.includes(tz)) continue
        expect(await store.retention({ ...q, now: range.to }), `${tz} ${period}`).toEqual(retentionOf(all, q))
      }
    await expectOverviewRecount(store, all, { ...range, tz: 'UTC' })
    // Whole local days, as the dashboard asks (a range and its first day): in a kept zone the
    // users of a range with messages after it are sums of the previous-day rows.
    for (const tz of new Set(['UTC', 'Europe/Berlin', 'Asia/Calcutta', 'America/New_York', ...onDemand])) {
      const from = periodStart(tz, range.from, 'day')
      for (const to of [periodStart(tz, range.to, 'day'), periodStart(tz, from + 36 * HOUR, 'day')]) {
        const q = { from, to, tz }
        await expectOverviewRecount(
          store,
          all,
          q,
          `overview ${tz} ${new Date(from).toISOString()} ${new Date(to).toISOString()}`,
        )
      }
    }
    for (const depth of [1, 2, 4])
      expect(await store.paths({ ...range, depth, limit: 1000 }), `depth ${depth}`).toEqual(
        pathsOf(all, { ...range, depth }),
      )
  }
  // Edges inside UTC days (an API caller's hours, a half-hour zone's days widened to hours): the
  // whole UTC days summed, the partial first and last days' users from their day links (without
  // UTC kept: the user-days and the edges' user-hours).
  for (const [a, b] of EDGE_HOURS)
    for (const bot of [undefined, 'shop']) {
      const q = { from: BASE + a * HOUR, to: BASE + b * HOUR, tz: 'UTC', ...(bot ? { bot } : {}) }
      await expectOverviewRecount(store, all, q, `overview ${bot ?? ''} hours ${a} … ${b}`)
    }
  await expectFunnelRecount(store, all, ranges)
}

/**
 * False on the other Node lines (scripts/test-node-lines.sh sets `CONVOTRACK_NODE_LINE`): the
 * recount proves what the summaries' SQL answers, and every line's better-sqlite3 build carries the
 * same SQLite amalgamation, so it runs on the system Node only; the store, rollup, analytics and
 * search contracts (the binding itself) run on every line.
 */
export const RECOUNT_HERE = process.env.CONVOTRACK_NODE_LINE === undefined

export function runAnalyticsRecount(name: string, factory: RecountFactory): void {
  describe.skipIf(!RECOUNT_HERE)(`analytics summaries equal a recount: ${name}`, () => {
    const open: RecordStore[] = []
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close()
    })
    const fresh = async (zones: readonly string[] = KEPT_ZONES, options?: StoreOptions) => {
      const made = await factory(zones, options)
      open.push(made.store)
      return made
    }

    it('after ingest out of event-time order, with duplicates', async () => {
      const { store } = await fresh()
      const items = spread(500, 11)
      await load(store, items)
      await load(
        store,
        items.filter((i) => i.record.idempotencyKey !== undefined),
        40,
      )
      await expectAnalyticsRecount(store)
    })

    it('after erasure and retention in small steps', async () => {
      const { store } = await fresh()
      await load(store, spread(500, 12))
      await store.eraseUser('shop', 'u3')
      await store.eraseUser('help', 'u5')
      await expectAnalyticsRecount(store)
      while ((await store.deleteOlderThan({ before: BASE + 10 * DAY + 200_000, limit: 40 })) > 0) {}
      await expectAnalyticsRecount(store)
    })

    it('zones kept on demand: prepared chunk by chunk while ingest goes on, then through erasure and retention', async () => {
      const items = spread(600, 15)
      const later = items.splice(300)
      const states: RetentionZoneState[] = []
      // Between chunks (awaited before the next), a batch arrives: users whose chunk is done,
      // users still to come, and, in the first batches, users new to the store.
      // UTC too: its day links are derived chunk by chunk with its cohorts.
      const demand = [...ON_DEMAND, 'UTC']
      const { store } = await fresh(
        KEPT_ZONES.filter((z) => z !== 'UTC'),
        {
          retentionChunkUsers: 3,
          onRetentionChunk: async (state) => {
            states.push(state)
            await load(store, later.splice(0, 25))
          },
        },
      )
      await load(store, items)
      for (const zone of demand)
        expect(await store.retentionZone?.(zone)).toEqual({ zone, kept: 'demand', ready: false, progress: 0 })
      await Promise.all(demand.map((zone) => store.retentionZoneReady?.(zone)))
      for (const zone of demand) {
        const steps = states.filter((s) => s.zone === zone)
        expect(steps.length, zone).toBeGreaterThan(3)
        expect(steps.at(-1)).toEqual({ zone, kept: 'demand', ready: true, progress: 1 })
        expect(await store.retentionZone?.(zone)).toEqual({ zone, kept: 'demand', ready: true, progress: 1 })
      }
      await load(store, later.splice(0))
      await expectAnalyticsRecount(store, RANGES, demand)
      await store.eraseUser('shop', 'u3')
      await store.eraseUser('help', 'u5')
      while ((await store.deleteOlderThan({ before: BASE + 10 * DAY + 200_000, limit: 40 })) > 0) {}
      await expectAnalyticsRecount(store, RANGES, demand)
    })

    it('zones kept on demand are in the database: a second collector and a restart agree, the limit holds', async () => {
      const { store, reopen } = await fresh(KEPT_ZONES, { retentionZonesOnDemand: 1, retentionChunkUsers: 2 })
      if (!reopen) return // an in-memory database has no second collector
      await load(store, spread(300, 16))
      const other = await reopen(KEPT_ZONES, { retentionZonesOnDemand: 1 })
      open.push(other)
      // The second collector stores while the first adds and prepares the zone: whatever the
      // interleaving, the cohorts come out exact (the second maintains the zone once it is listed).
      await Promise.all([store.retentionZoneReady?.('Asia/Tokyo'), load(other, spread(200, 17, 'second', 'w2-'), 10)])
      expect(await other.retentionZone?.('Asia/Tokyo')).toEqual({
        zone: 'Asia/Tokyo',
        kept: 'demand',
        ready: true,
        progress: 1,
      })
      // The limit is one zone: another is not kept (answered from active hours), on either collector.
      for (const s of [store, other]) expect(await s.retentionZone?.('America/St_Johns')).toMatchObject({ kept: null })
      await load(other, spread(100, 18, 'third', 'w3-'))
      await expectAnalyticsRecount(store, RANGES, ['Asia/Tokyo'])
      for (const s of [other, store]) {
        await s.close()
        open.splice(open.indexOf(s), 1)
      }
      // A zone kept on demand that the option now names becomes the option's, without a derivation.
      const again = await reopen(['Asia/Tokyo', 'UTC'])
      open.push(again)
      expect(await again.retentionZone?.('Asia/Tokyo')).toEqual({
        zone: 'Asia/Tokyo',
        kept: 'option',
        ready: true,
        progress: 1,
      })
      await expectAnalyticsRecount(again, RANGES, ['Asia/Tokyo'])
    })

    it('after two writers stored at once, and after a start with other retention zones', async () => {
      const { store, reopen } = await fresh()
      if (!reopen) return // an in-memory database has no second writer
      const other = await reopen(KEPT_ZONES)
      open.push(other)
      await Promise.all([load(store, spread(400, 13, 'shared'), 20), load(other, spread(400, 14, 'shared', 'w2-'), 20)])
      await expectAnalyticsRecount(store)
      await other.close()
      open.splice(open.indexOf(other), 1)
      await store.close()
      open.splice(open.indexOf(store), 1)
      // Without UTC: its summaries and day links go; a past range's users come from the user-days.
      const withoutUtc = await reopen(['Asia/Calcutta'])
      open.push(withoutUtc)
      await expectAnalyticsRecount(withoutUtc)
      await withoutUtc.close()
      open.splice(open.indexOf(withoutUtc), 1)
      // Berlin no longer kept (answered from hours), Kolkata kept under its other name, UTC again:
      // derived at start, its day links with it.
      const again = await reopen(['Asia/Calcutta', 'UTC'])
      open.push(again)
      await expectAnalyticsRecount(again)
    })
  })
}
