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
import { dropEmptyQueries, type RollupRow, type RollupSpec, rollupDdl, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'

/** Zones whose cohort tables are kept when the collector's `retentionZones` is not set. */
export const DEFAULT_RETENTION_ZONES: readonly string[] = ['UTC']

/** Messages of a user per retention zone × period kind × period (its start, epoch ms). */
export const USER_PERIODS: RollupSpec = {
  name: 'retention_user_periods',
  columns: { bot: 'text', user_id: 'text', zone: 'text', kind: 'text', period_start: 'int', messages: 'int' },
  keys: ['bot', 'user_id', 'zone', 'kind', 'period_start'],
  sums: ['messages'],
  live: ['messages'],
}

/** Users of each cohort (first active period) active in each period, per bot, zone and kind. */
export const COHORTS: RollupSpec = {
  name: 'rollup_cohorts',
  columns: { zone: 'text', kind: 'text', cohort_start: 'int', active_start: 'int', bot: 'text', users: 'int' },
  keys: ['zone', 'kind', 'cohort_start', 'active_start', 'bot'],
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

/** A message's share of the retention summaries: ±1 message of a user at `ts`. */
export interface UserChange {
  bot: string
  userId: string
  ts: number
  sign: 1 | -1
}

const sep = '\u0000'

/** The cohort rows of one user's live periods of one zone × kind: cohort = the earliest. */
function shareOf(starts: readonly number[]): Array<[cohort: number, active: number]> {
  if (starts.length === 0) return []
  const cohort = Math.min(...starts)
  return starts.map((s) => [cohort, s])
}

/**
 * The statements that apply `changes` to the retention summaries of `zones`: reads each touched
 * user's periods (callers hold the users' locks), adds the changes, and moves the user's share of
 * the cohort table from what it was to what it is.
 */
export function* applyRetention(d: Dialect, changes: readonly UserChange[], zones: readonly string[]): Steps {
  const byUser = new Map<string, { bot: string; userId: string; delta: Map<string, number> }>()
  for (const c of changes) {
    if (c.userId === '') continue
    const k = `${c.bot}${sep}${c.userId}`
    let u = byUser.get(k)
    if (!u) {
      u = { bot: c.bot, userId: c.userId, delta: new Map() }
      byUser.set(k, u)
    }
    for (const zone of zones)
      for (const kind of PERIODS) {
        const pk = `${zone}${sep}${kind}${sep}${periodStart(zone, c.ts, kind)}`
        u.delta.set(pk, (u.delta.get(pk) ?? 0) + c.sign)
      }
  }
  if (byUser.size === 0) return
  const users = [...byUser.values()].sort((a, b) =>
    a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0,
  )
  const table = d.table(USER_PERIODS.name)
  // Row lists may be long (a rebuild's page of users): no spreading them into a call.
  let stored: Row[] = []
  if (d.multiRow)
    stored = yield {
      sql: `SELECT p.bot, p.user_id, p.zone, p.kind, p.period_start, p.messages
          FROM unnest(?::text[], ?::text[]) AS u (bot, user_id) JOIN ${table} p ON p.bot = u.bot AND p.user_id = u.user_id`,
      params: [users.map((u) => u.bot), users.map((u) => u.userId)],
    }
  else
    for (const u of users) {
      const rows: Row[] = yield {
        sql: `SELECT bot, user_id, zone, kind, period_start, messages FROM ${table} WHERE bot = ? AND user_id = ?`,
        params: [u.bot, u.userId],
      }
      for (const r of rows) stored.push(r)
    }
  const before = new Map<string, Map<string, number>>()
  for (const r of stored) {
    const k = `${String(r.bot)}${sep}${String(r.user_id)}`
    let m = before.get(k)
    if (!m) {
      m = new Map()
      before.set(k, m)
    }
    m.set(`${String(r.zone)}${sep}${String(r.kind)}${sep}${Number(r.period_start)}`, Number(r.messages))
  }
  const deltas: Deltas = new Map()
  const touched: RollupRow[] = []
  for (const u of users) {
    const had = before.get(`${u.bot}${sep}${u.userId}`) ?? new Map<string, number>()
    const now = new Map(had)
    for (const [pk, n] of u.delta) {
      now.set(pk, (now.get(pk) ?? 0) + n)
      const [zone, kind, start] = pk.split(sep)
      const row = { bot: u.bot, user_id: u.userId, zone, kind, period_start: Number(start), messages: n }
      addRow(deltas, USER_PERIODS, row as RollupRow)
      touched.push(row as RollupRow)
    }
    for (const zone of zones)
      for (const kind of PERIODS) {
        const live = (m: Map<string, number>) => {
          const prefix = `${zone}${sep}${kind}${sep}`
          const out: number[] = []
          for (const [pk, n] of m) if (n > 0 && pk.startsWith(prefix)) out.push(Number(pk.slice(prefix.length)))
          return out
        }
        const add = (share: Array<[number, number]>, sign: number) => {
          for (const [cohort, active] of share)
            addRow(deltas, COHORTS, { zone, kind, cohort_start: cohort, active_start: active, bot: u.bot, users: sign })
        }
        add(shareOf(live(had)), -1)
        add(shareOf(live(now)), 1)
      }
  }
  const periods = [...(deltas.get(USER_PERIODS)?.values() ?? [])].filter((r) => r.messages !== 0)
  yield* upsertQueries(d, USER_PERIODS, periods)
  yield* dropEmptyQueries(d, USER_PERIODS, periods)
  const cohorts = [...(deltas.get(COHORTS)?.values() ?? [])].filter((r) => r.users !== 0)
  yield* upsertQueries(d, COHORTS, cohorts)
  yield* dropEmptyQueries(d, COHORTS, cohorts)
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
      page.map((r) => ({ bot: String(r.bot), userId: String(r.user_id ?? ''), ts: Number(r.ts), sign: 1 as const })),
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
