/**
 * Derives one zone's retention summaries (each user's active periods, their share of the cohort
 * table) from the stored messages in a few set-based statements: for every user at once (a
 * start whose `retentionZones` add a zone, the benches' seeds) or for one chunk of users (a zone
 * kept on demand, prepared in the background: retention-zone-demand.ts).
 *
 * The database cannot place an instant in a zone's calendar by itself (SQLite has no zones, and
 * PostgreSQL's rules for a local midnight that does not exist differ from the report's), so the
 * zone's calendar comes from here, as two small lists the statements join: the zone's offset
 * segments (its offset is constant between two transitions) and, per local day, the starts of
 * its day, week and month (periods.ts, the same function the reports and ingest use). A message's
 * local day is then plain arithmetic, `(ts + offset) / day`, and the database groups and counts.
 */
import type { Dialect, Query } from './dialect'
import { PERIODS, periodStart } from './periods'
import { DAY_MS, HOUR_MS, tzOffset } from './range'
import type { Row } from './report-queries'
import { addRow, type Deltas } from './rollup-delta'
import { dropEmptyQueries, type RollupRow, type RollupSpec, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'

/** The previous-day summary's `prev_day` of a user's first active day (the earliest instant a Date can hold). */
export const NO_PREV_DAY = -8.64e15

/** The day links' `next_day` of a user's last active day (the latest instant a Date can hold). */
export const NO_NEXT_DAY = 8.64e15

/** Users whose summaries a derivation replaces: all, or these (sorted by bot, then user). */
export type DeriveScope = 'all' | ReadonlyArray<{ bot: string; userId: string }>

/** Far enough from any message that the first and last offset segments hold everything. */
const EDGE = 2 ** 52

/** The zone's offset segments over [lo, hi]: `[start, end, offset]`, the first and last open-ended. */
export function offsetSegments(zone: string, lo: number, hi: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = []
  let start = -EDGE
  let off = tzOffset(zone, lo)
  // Transitions are months apart: a daily probe finds each, a bisection its second.
  for (let t = lo; t < hi + DAY_MS; t += DAY_MS) {
    const next = tzOffset(zone, t + DAY_MS)
    if (next === off) continue
    let a = t
    let b = t + DAY_MS
    while (b - a > 1000) {
      const mid = Math.floor((a + b) / 2000) * 1000
      if (mid <= a || mid >= b) break
      if (tzOffset(zone, mid) === off) a = mid
      else b = mid
    }
    out.push([start, b, off])
    start = b
    off = next
  }
  out.push([start, EDGE, off])
  return out
}

const dayCache = new Map<string, [number, number, number]>()

/** Starts (epoch ms) of the day, week and month holding local day `day` (days since 1970-01-01) in `zone`. */
function dayRow(zone: string, day: number): [number, number, number] {
  const key = `${zone}\u0000${day}`
  let row = dayCache.get(key)
  if (!row) {
    const utcNoon = day * DAY_MS + 12 * HOUR_MS
    const noon = utcNoon - tzOffset(zone, utcNoon)
    row = [periodStart(zone, noon, 'day'), periodStart(zone, noon, 'week'), periodStart(zone, noon, 'month')]
    if (dayCache.size > 200_000) dayCache.clear()
    dayCache.set(key, row)
  }
  return row
}

/** The `FROM … WHERE` of `table` (alias `a`) limited to the scope's users; pushes its parameters. */
export function scoped(d: Dialect, scope: DeriveScope, table: string, a: string, params: unknown[]): string {
  if (scope === 'all') return `${table} ${a} WHERE 1 = 1`
  if (d.multiRow) {
    // From the users to their rows by the (bot, user_id, …) index, never a scan of the table.
    params.push(
      scope.map((u) => u.bot),
      scope.map((u) => u.userId),
    )
    return `unnest(?::text[], ?::text[]) AS cu (bot, user_id) JOIN ${table} ${a} ON ${a}.bot = cu.bot AND ${a}.user_id = cu.user_id WHERE 1 = 1`
  }
  // SQLite has one writer: the key range between the first and last user is exactly these users.
  const first = scope[0]
  const last = scope[scope.length - 1]
  params.push(first?.bot, first?.userId, last?.bot, last?.userId)
  return `${table} ${a} WHERE (${a}.bot, ${a}.user_id) >= (?, ?) AND (${a}.bot, ${a}.user_id) <= (?, ?)`
}

/** A list of number tuples as a relation with these columns (PostgreSQL arrays, SQLite JSON). */
function relation(
  d: Dialect,
  cols: readonly string[],
  rows: ReadonlyArray<readonly number[]>,
  params: unknown[],
): string {
  if (d.multiRow) {
    for (const [i] of cols.entries()) params.push(rows.map((r) => r[i]))
    return `SELECT * FROM unnest(${cols.map(() => '?::bigint[]').join(', ')}) AS x (${cols.join(', ')})`
  }
  params.push(JSON.stringify(rows))
  return `SELECT ${cols.map((c, i) => `json_extract(value, '$[${i}]') AS ${c}`).join(', ')} FROM json_each(?)`
}

/** Each cohort row's users among the scope's stored periods of `zone` (cohort = a user's earliest period). */
function* shares(d: Dialect, userPeriods: string, zone: string, scope: DeriveScope): Steps<Row[]> {
  const params: unknown[] = []
  const from = scoped(d, scope, userPeriods, 'p', params)
  params.push(zone)
  return yield {
    sql: `SELECT kind, cohort_start, active_start, bot, count(*) AS users FROM (
        SELECT p.bot, p.kind, p.period_start AS active_start,
          min(p.period_start) OVER (PARTITION BY p.bot, p.user_id, p.kind) AS cohort_start
        FROM ${from} AND p.zone = ?) s
      GROUP BY kind, cohort_start, active_start, bot`,
    params,
  }
}

/** Each row of the previous-day summary among the scope's stored days of `zone` (a user's days in order). */
function* prevDays(d: Dialect, userPeriods: string, zone: string, scope: DeriveScope): Steps<Row[]> {
  const params: unknown[] = [NO_PREV_DAY]
  const from = scoped(d, scope, userPeriods, 'p', params)
  params.push(zone)
  return yield {
    sql: `SELECT active_day, prev_day, bot, count(*) AS users FROM (
        SELECT p.bot, p.period_start AS active_day,
          coalesce(lag(p.period_start) OVER (PARTITION BY p.bot, p.user_id ORDER BY p.period_start), ?) AS prev_day
        FROM ${from} AND p.zone = ? AND p.kind = 'day') s
      GROUP BY active_day, prev_day, bot`,
    params,
  }
}

/**
 * Replaces the scope's users' periods of `zone` by the ones their stored messages give, and moves
 * their share of the cohort table from what it was to what it is. Callers hold the users' locks
 * (a chunk) or the tables' (everyone).
 */
export function* deriveZone(
  d: Dialect,
  tables: {
    userPeriods: RollupSpec
    cohorts: RollupSpec
    prevDays: RollupSpec
    /** With the zone of the day links (`LINKS_ZONE`): their rows, and the statement that derives them. */
    dayLinks?: { zone: string; spec: RollupSpec; insert: (d: Dialect, scope: DeriveScope) => Query }
  },
  zone: string,
  scope: DeriveScope,
): Steps {
  if (scope !== 'all' && scope.length === 0) return
  const periods = d.table(tables.userPeriods.name)
  const messages = d.table('messages')
  const deltas: Deltas = new Map()
  // The users of each counted row (`times`: its instant columns), taken out (-1) or put back (1).
  const add = (spec: RollupSpec, times: readonly string[], rows: Row[], sign: 1 | -1) => {
    for (const r of rows) {
      const row: RollupRow = { zone, bot: String(r.bot), users: sign * Number(r.users) }
      if (r.kind !== undefined) row.kind = String(r.kind)
      for (const t of times) row[t] = Number(r[t])
      addRow(deltas, spec, row)
    }
  }
  const cohortTimes = ['cohort_start', 'active_start']
  const prevTimes = ['active_day', 'prev_day']
  add(tables.cohorts, cohortTimes, yield* shares(d, periods, zone, scope), -1)
  add(tables.prevDays, prevTimes, yield* prevDays(d, periods, zone, scope), -1)
  const links = tables.dayLinks?.zone === zone ? tables.dayLinks : null
  if (links) {
    // The scope's links, by their keys from the day periods (the links are keyed by day first).
    const params: unknown[] = []
    const from = scoped(d, scope, periods, 'p', params)
    params.push(zone)
    yield scope === 'all'
      ? { sql: `DELETE FROM ${d.table(links.spec.name)}`, params: [] }
      : {
          sql: `DELETE FROM ${d.table(links.spec.name)} WHERE (day, bot, user_id) IN
            (SELECT p.period_start, p.bot, p.user_id FROM ${from} AND p.zone = ? AND p.kind = 'day')`,
          params,
        }
  }
  if (scope === 'all') yield { sql: `DELETE FROM ${periods} WHERE zone = ?`, params: [zone] }
  else if (d.multiRow)
    yield {
      sql: `DELETE FROM ${periods} p USING unnest(?::text[], ?::text[]) AS cu (bot, user_id)
        WHERE p.bot = cu.bot AND p.user_id = cu.user_id AND p.zone = ?`,
      params: [scope.map((u) => u.bot), scope.map((u) => u.userId), zone],
    }
  else {
    const first = scope[0]
    const last = scope[scope.length - 1]
    yield {
      sql: `DELETE FROM ${periods} WHERE zone = ? AND (bot, user_id) >= (?, ?) AND (bot, user_id) <= (?, ?)`,
      params: [zone, first?.bot, first?.userId, last?.bot, last?.userId],
    }
  }
  // The zone's calendar over the scope's messages.
  const rangeParams: unknown[] = []
  const [span] = yield {
    sql: `SELECT min(m.ts) AS lo, max(m.ts) AS hi FROM ${scoped(d, scope, messages, 'm', rangeParams)}`,
    params: rangeParams,
  }
  if (span?.lo !== null && span?.lo !== undefined) {
    const lo = Number(span.lo)
    const hi = Number(span.hi)
    const segments = offsetSegments(zone, lo, hi)
    const offs = segments.map((s) => s[2])
    const firstDay = Math.floor((lo + Math.min(...offs)) / DAY_MS)
    const lastDay = Math.floor((hi + Math.max(...offs)) / DAY_MS)
    const days: Array<[number, number, number, number]> = []
    for (let day = firstDay; day <= lastDay; day++) days.push([day, ...dayRow(zone, day)])
    const params: unknown[] = []
    const sg = relation(d, ['lo', 'hi', 'off'], segments, params)
    const dm = relation(d, ['day', 'd_start', 'w_start', 'm_start'], days, params)
    const from = scoped(d, scope, messages, 'm', params)
    params.push(zone)
    const kinds = PERIODS.map((k) => `SELECT '${k}' AS kind`).join(' UNION ALL ')
    // Distinct user-days first (a user's messages of a day are one row), then their three periods.
    yield {
      sql: `WITH sg AS MATERIALIZED (${sg}), dm AS MATERIALIZED (${dm}),
        ud AS (SELECT DISTINCT m.bot, m.user_id, (m.ts + sg.off) / ${DAY_MS} AS day
          FROM sg, ${from} AND m.user_id IS NOT NULL AND m.user_id <> '' AND m.ts >= sg.lo AND m.ts < sg.hi)
        INSERT INTO ${periods} (bot, user_id, zone, kind, period_start, messages)
        SELECT DISTINCT ud.bot, ud.user_id, ?, k.kind,
          CASE k.kind WHEN 'day' THEN dm.d_start WHEN 'week' THEN dm.w_start ELSE dm.m_start END, 1
        FROM ud JOIN dm ON dm.day = ud.day CROSS JOIN (${kinds}) k`,
      params,
    }
  }
  add(tables.cohorts, cohortTimes, yield* shares(d, periods, zone, scope), 1)
  add(tables.prevDays, prevTimes, yield* prevDays(d, periods, zone, scope), 1)
  if (links) yield links.insert(d, scope)
  for (const spec of [tables.cohorts, tables.prevDays]) {
    const rows = [...(deltas.get(spec)?.values() ?? [])].filter((r) => r.users !== 0)
    yield* upsertQueries(d, spec, rows)
    yield* dropEmptyQueries(d, spec, rows)
  }
}
