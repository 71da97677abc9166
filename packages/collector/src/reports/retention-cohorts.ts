/**
 * The retention report's summaries: for each retention zone (the collector's `retentionZones`)
 * and period kind (day, week, month in that zone), the periods each user was active in
 * (`retention_user_periods`, per user: read and written only under the user's lock) and the
 * cohort table (`rollup_cohorts`: bot × zone × kind × cohort period × active period → users).
 * A user's cohort is their earliest active period, so when an imported past record moves it
 * earlier, or erasure or retention takes periods away, the user's whole share is taken out and
 * put in again: the cohort table stays a plain sum that any number of writers add to.
 */
import type { Dialect } from './dialect'
import { PERIODS, type Period, periodIndex, periodStart } from './periods'
import type { Exec, Row } from './report-queries'
import { addRow, type Deltas } from './rollup-delta'
import {
  deleteKeysQueries,
  dropEmptyQueries,
  type RollupRow,
  type RollupSpec,
  rollupDdl,
  upsertQueries,
} from './rollup-tables'
import type { Steps } from './rollup-writes'

/** Zones whose cohort tables are kept when the collector's `retentionZones` is not set. */
export const DEFAULT_RETENTION_ZONES: readonly string[] = ['UTC']

/** The periods a user was active in, per retention zone × period kind (its start, epoch ms); `messages` is 1. */
export const USER_PERIODS: RollupSpec = {
  name: 'retention_user_periods',
  columns: { bot: 'text', user_id: 'text', zone: 'text', kind: 'text', period_start: 'int', messages: 'int' },
  keys: ['bot', 'user_id', 'zone', 'kind', 'period_start'],
  withoutRowid: true,
  sums: ['messages'],
  live: ['messages'],
}

/** Users of each cohort (first active period) active in each period, per bot, zone and kind. */
export const COHORTS: RollupSpec = {
  name: 'rollup_cohorts',
  columns: { zone: 'text', kind: 'text', cohort_start: 'int', active_start: 'int', bot: 'text', users: 'int' },
  keys: ['zone', 'kind', 'cohort_start', 'active_start', 'bot'],
  withoutRowid: true,
  sums: ['users'],
  live: ['users'],
}

/** The zones the tables above hold (a changed `retentionZones` derives them again at start). */
export const RETENTION_ZONES_TABLE = 'retention_zones'

/** CREATE TABLE / INDEX of the retention summaries. */
export function retentionDdl(d: Dialect): string {
  return [
    rollupDdl(d, [USER_PERIODS, COHORTS]),
    `CREATE TABLE IF NOT EXISTS ${d.table(RETENTION_ZONES_TABLE)} (zone ${d.columnType('text')} PRIMARY KEY);`,
  ].join('\n')
}

/** Checks `retentionZones` (IANA names); throws a TypeError naming the option and the bad zone. */
export function retentionZones(zones: readonly string[] | undefined): readonly string[] {
  if (zones === undefined) return DEFAULT_RETENTION_ZONES
  if (!Array.isArray(zones) || zones.length === 0)
    throw new TypeError('retentionZones must be a non-empty array of IANA time zone names')
  for (const z of zones) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: z })
    } catch {
      throw new TypeError(`retentionZones: "${String(z)}" is not an IANA time zone name`)
    }
  }
  return [...new Set(zones)].sort()
}

/** A message's share of the retention summaries: a user's message at `ts`. */
export interface UserChange {
  bot: string
  userId: string
  ts: number
}

const sep = '\u0000'

/** The cohort rows of one user's periods of one zone × kind: cohort = the earliest. */
function shareOf(starts: readonly number[]): Array<[cohort: number, active: number]> {
  if (starts.length === 0) return []
  const cohort = Math.min(...starts)
  return starts.map((s) => [cohort, s])
}

/** `zone␀kind␀start` of each period `ts` falls in, for every kept zone and kind. */
function periodKeys(ts: number, zones: readonly string[], into: Set<string>): void {
  for (const zone of zones)
    for (const kind of PERIODS) into.add(`${zone}${sep}${kind}${sep}${periodStart(zone, ts, kind)}`)
}

type User = { bot: string; userId: string }
const userKey = (u: User) => `${u.bot}${sep}${u.userId}`
const byKey = (a: User, b: User) =>
  a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0

/** The stored periods of these users (callers hold their locks), by user key. */
function* storedPeriods(d: Dialect, users: readonly User[]): Steps<Map<string, Set<string>>> {
  const table = d.table(USER_PERIODS.name)
  // Row lists may be long (a rebuild's page of users): no spreading them into a call.
  let stored: Row[] = []
  if (d.multiRow)
    stored = yield {
      sql: `SELECT p.bot, p.user_id, p.zone, p.kind, p.period_start
          FROM unnest(?::text[], ?::text[]) AS u (bot, user_id) JOIN ${table} p ON p.bot = u.bot AND p.user_id = u.user_id`,
      params: [users.map((u) => u.bot), users.map((u) => u.userId)],
    }
  else
    for (const u of users) {
      const rows: Row[] = yield {
        sql: `SELECT bot, user_id, zone, kind, period_start FROM ${table} WHERE bot = ? AND user_id = ?`,
        params: [u.bot, u.userId],
      }
      for (const r of rows) stored.push(r)
    }
  const out = new Map<string, Set<string>>()
  for (const r of stored) {
    const k = `${String(r.bot)}${sep}${String(r.user_id)}`
    let set = out.get(k)
    if (!set) {
      set = new Set()
      out.set(k, set)
    }
    set.add(`${String(r.zone)}${sep}${String(r.kind)}${sep}${Number(r.period_start)}`)
  }
  return out
}

/**
 * Writes each user's periods going from `had` to `now` (a row per period the user was active
 * in, inserted or deleted — a message in a period already there writes nothing) and moves their
 * share of the cohort table from what it was to what it is.
 */
function* moveShares(
  d: Dialect,
  users: ReadonlyArray<User & { had: Set<string>; now: Set<string> }>,
  zones: readonly string[],
): Steps {
  const added: RollupRow[] = []
  const gone: RollupRow[] = []
  const deltas: Deltas = new Map()
  for (const u of users) {
    const row = (pk: string): RollupRow => {
      const [zone, kind, start] = pk.split(sep)
      return {
        bot: u.bot,
        user_id: u.userId,
        zone: zone ?? '',
        kind: kind ?? '',
        period_start: Number(start),
        messages: 1,
      }
    }
    let changed = false
    for (const pk of u.now)
      if (!u.had.has(pk)) {
        added.push(row(pk))
        changed = true
      }
    for (const pk of u.had)
      if (!u.now.has(pk)) {
        gone.push(row(pk))
        changed = true
      }
    if (!changed) continue
    for (const zone of zones)
      for (const kind of PERIODS) {
        const prefix = `${zone}${sep}${kind}${sep}`
        const starts = (set: Set<string>) =>
          [...set].filter((pk) => pk.startsWith(prefix)).map((pk) => Number(pk.slice(prefix.length)))
        for (const [sign, set] of [
          [-1, u.had],
          [1, u.now],
        ] as const)
          for (const [cohort, active] of shareOf(starts(set)))
            addRow(deltas, COHORTS, { zone, kind, cohort_start: cohort, active_start: active, bot: u.bot, users: sign })
      }
  }
  yield* deleteKeysQueries(d, USER_PERIODS, gone)
  yield* upsertQueries(d, USER_PERIODS, added)
  const cohorts = [...(deltas.get(COHORTS)?.values() ?? [])].filter((r) => r.users !== 0)
  yield* upsertQueries(d, COHORTS, cohorts)
  yield* dropEmptyQueries(d, COHORTS, cohorts)
}

/**
 * After messages were stored: adds the periods they fall in to their users' (callers hold the
 * users' locks) and moves each user whose periods changed in the cohort table.
 */
export function* applyRetention(d: Dialect, changes: readonly UserChange[], zones: readonly string[]): Steps {
  const fresh = new Map<string, User & { keys: Set<string> }>()
  for (const c of changes) {
    if (c.userId === '') continue
    const k = `${c.bot}${sep}${c.userId}`
    let u = fresh.get(k)
    if (!u) {
      u = { bot: c.bot, userId: c.userId, keys: new Set() }
      fresh.set(k, u)
    }
    periodKeys(c.ts, zones, u.keys)
  }
  if (fresh.size === 0) return
  const users = [...fresh.values()].sort(byKey)
  const stored = yield* storedPeriods(d, users)
  yield* moveShares(
    d,
    users.map((u) => {
      const had = stored.get(userKey(u)) ?? new Set<string>()
      return { ...u, had, now: new Set([...had, ...u.keys]) }
    }),
    zones,
  )
}

/**
 * After messages were deleted (erasure, retention): each touched user's periods are derived
 * again from their remaining messages.
 */
export function* takeBackRetention(d: Dialect, doomed: readonly UserChange[], zones: readonly string[]): Steps {
  const touched = new Map<string, User>()
  for (const c of doomed) if (c.userId !== '') touched.set(userKey(c), { bot: c.bot, userId: c.userId })
  if (touched.size === 0) return
  const users = [...touched.values()].sort(byKey)
  const stored = yield* storedPeriods(d, users)
  const moved: Array<User & { had: Set<string>; now: Set<string> }> = []
  for (const u of users) {
    const rows: Row[] = yield {
      sql: `SELECT DISTINCT ts FROM ${d.table('messages')} WHERE bot = ? AND user_id = ?`,
      params: [u.bot, u.userId],
    }
    const now = new Set<string>()
    for (const r of rows) periodKeys(Number(r.ts), zones, now)
    moved.push({ ...u, had: stored.get(userKey(u)) ?? new Set(), now })
  }
  yield* moveShares(d, moved, zones)
}

/** Messages read per step of a rebuild. */
const REBUILD_PAGE = 5_000

/**
 * Derives the retention summaries of `zones` from the stored messages (the migration, and a start
 * whose `retentionZones` differ from the ones the tables hold); records the zones.
 */
export function* rebuildRetention(d: Dialect, zones: readonly string[]): Steps {
  for (const t of [USER_PERIODS.name, COHORTS.name, RETENTION_ZONES_TABLE])
    yield { sql: `DELETE FROM ${d.table(t)}`, params: [] }
  // In arrival order, a page at a time: a user's share is moved exactly whatever the order.
  for (let after = 0; ; ) {
    const page = yield {
      sql: `SELECT id, bot, user_id, ts FROM ${d.table('messages')} WHERE id > ? ORDER BY id LIMIT ${REBUILD_PAGE}`,
      params: [after],
    }
    if (page.length === 0) break
    after = Number(page[page.length - 1]?.id)
    yield* applyRetention(
      d,
      page.map((r) => ({ bot: String(r.bot), userId: String(r.user_id ?? ''), ts: Number(r.ts) })),
      zones,
    )
  }
  for (const zone of zones)
    yield { sql: `INSERT INTO ${d.table(RETENTION_ZONES_TABLE)} (zone) VALUES (?)`, params: [zone] }
}

/** Whether the tables hold exactly `zones` (else a start derives them again). */
export function* retentionZonesMatch(d: Dialect, zones: readonly string[]): Steps<boolean> {
  const rows = yield { sql: `SELECT zone FROM ${d.table(RETENTION_ZONES_TABLE)} ORDER BY zone`, params: [] }
  const held = rows.map((r) => String(r.zone)).sort()
  return held.length === zones.length && held.every((z, i) => z === zones[i])
}

/**
 * The cohorts of `period` in `zone` (one of the kept zones) whose period starts in the range (the
 * period holding `from` included), with activity up to `to`: reads the cohort table, which grows
 * with bots × periods², never with users.
 */
export async function cohortRows(
  d: Dialect,
  exec: Exec,
  q: { zone: string; period: Period; from: number; to: number; scope: (params: unknown[]) => string },
): Promise<Map<number, Map<number, number>>> {
  const params: unknown[] = [q.zone, q.period, periodStart(q.zone, q.from, q.period), q.to, q.to]
  const rows = await exec({
    sql: `SELECT cohort_start, active_start, sum(users) AS users FROM ${d.table(COHORTS.name)}
      WHERE zone = ? AND kind = ? AND cohort_start >= ? AND cohort_start < ? AND active_start < ?${q.scope(params)}
      GROUP BY cohort_start, active_start`,
    params,
  })
  const out = new Map<number, Map<number, number>>()
  for (const r of rows) {
    const c = Number(r.cohort_start)
    let m = out.get(c)
    if (!m) {
      m = new Map()
      out.set(c, m)
    }
    m.set(periodIndex(q.zone, c, Number(r.active_start), q.period), Number(r.users))
  }
  return out
}
