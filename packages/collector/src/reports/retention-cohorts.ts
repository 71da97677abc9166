/**
 * The retention report's summaries: for each retention zone (the collector's `retentionZones`)
 * and period kind (day, week, month in that zone), the periods each user was active in
 * (`retention_user_periods`, per user: read and written only under the user's lock) and the
 * cohort table (`rollup_cohorts`: bot × zone × kind × cohort period × active period → users).
 * A user's cohort is their earliest active period, so when an imported past record moves it
 * earlier, or erasure or retention takes periods away, the user's whole share is taken out and
 * put in again: the cohort table stays a plain sum that any number of writers add to. The same
 * move keeps the previous-day summary (`rollup_prev_days`: zone × day × the user's previous active
 * day × bot → users), which the overview of a range of whole past days sums, and, in UTC, each
 * user's day links (`retention_day_links`: their first and last hour of each active day and the
 * active days around it), from which the overview of a past range with edges inside days takes
 * the users of its two partial days.
 */
import { USER_HOURS } from './analytics-tables'
import type { Dialect, Query } from './dialect'
import { PERIODS, type Period, periodIndex, periodStart } from './periods'
import { DAY_MS, HOUR_MS } from './range'
import type { Exec, Row } from './report-queries'
import { type DeriveScope, deriveZone, NO_NEXT_DAY, NO_PREV_DAY, scoped } from './retention-derive'
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

/**
 * Users per bot × zone × local day they were active in × the day they were last active before
 * it (`NO_PREV_DAY` on their first). A user active in the days `[from, to)` has exactly one
 * active day there whose previous one is before `from` (their first of the range), so the users
 * of a range of whole local days are `Σ users (from ≤ active_day < to, prev_day < from)`: rows per
 * pair of days, never per user. Kept from the `day` periods of {@link USER_PERIODS}, with them.
 */
export const PREV_DAYS: RollupSpec = {
  name: 'rollup_prev_days',
  columns: { zone: 'text', active_day: 'int', prev_day: 'int', bot: 'text', users: 'int' },
  keys: ['zone', 'active_day', 'prev_day', 'bot'],
  withoutRowid: true,
  sums: ['users'],
  live: ['users'],
}

/** The zone whose days {@link DAY_LINKS} holds: any range of whole hours starts and ends inside one of its days. */
export const LINKS_ZONE = 'UTC'

/**
 * Each user's active days in {@link LINKS_ZONE} with the active day before and after it
 * (`NO_PREV_DAY` / `NO_NEXT_DAY` at either end) and the first and last hour they were active in
 * it, keyed by day first: one day's users are one range of the key. The overview of a past range
 * whose edges fall inside days counts its partial first and last days' users here (those active
 * in the range's part of the day and not on the whole days between), never the users of every
 * day of the range. Kept with the UTC `day` periods of {@link USER_PERIODS}, under the user's
 * lock, when UTC is a kept zone.
 */
export const DAY_LINKS: RollupSpec = {
  name: 'retention_day_links',
  columns: {
    day: 'int',
    bot: 'text',
    user_id: 'text',
    prev_day: 'int',
    next_day: 'int',
    first_hour: 'int',
    last_hour: 'int',
  },
  keys: ['day', 'bot', 'user_id'],
  withoutRowid: true,
  replace: ['prev_day', 'next_day'],
  mins: ['first_hour'],
  maxes: ['last_hour'],
  // Each batch merges its users' hours: a row it does not move keeps its version.
  skipUnchanged: true,
  // A day's rows lie all over a PostgreSQL heap (written whenever each user's days changed): the
  // reads take them from indexes alone (the key's: one user's row).
  include: ['prev_day', 'next_day', 'first_hour', 'last_hour'],
  // The overview's partial days (analytics-queries.ts): of the first, the users whose next active
  // day is after the range's whole days; of the last, those whose previous one is before them —
  // a third of a day's users (the rest came the day before or after), read as one range of these.
  indexes: [
    { cols: ['day', 'next_day'], include: ['last_hour', 'bot'] },
    { cols: ['day', 'prev_day'], include: ['first_hour', 'bot', 'user_id'] },
  ],
}

/** Each UTC day's first and last active hour among `times` (epoch ms): day start → [first, last]. */
export function dayHours(times: Iterable<number>): Map<number, [first: number, last: number]> {
  const out = new Map<number, [number, number]>()
  for (const t of times) {
    const hour = t - (t % HOUR_MS)
    const day = t - (t % DAY_MS)
    const had = out.get(day)
    out.set(day, had ? [Math.min(had[0], hour), Math.max(had[1], hour)] : [hour, hour])
  }
  return out
}

/** One user's rows of {@link DAY_LINKS} for their active days' starts (any order): day → [prev, next]. */
export function dayLinksOf(starts: readonly number[]): Map<number, [prev: number, next: number]> {
  const sorted = [...starts].sort((a, b) => a - b)
  return new Map(
    sorted.map((s, i) => [s, [i === 0 ? NO_PREV_DAY : (sorted[i - 1] as number), sorted[i + 1] ?? NO_NEXT_DAY]]),
  )
}

/** One user's rows of {@link PREV_DAYS} for their active days' starts (any order). */
export function prevDaysOf(starts: readonly number[]): Array<[active: number, prev: number]> {
  const sorted = [...starts].sort((a, b) => a - b)
  return sorted.map((s, i) => [s, i === 0 ? NO_PREV_DAY : (sorted[i - 1] as number)])
}

/**
 * The zones the tables above hold: the option's (a changed `retentionZones` syncs them at start)
 * and those kept on demand (retention-zone-demand.ts). Every writer maintains every zone listed.
 */
export const RETENTION_ZONES_TABLE = 'retention_zones'

/**
 * Advisory lock key (PostgreSQL) guarding the zone list: ingest and erasure hold it shared from
 * before they lock their users until they commit; adding a zone takes it exclusively, so no
 * writer that read the list without the new zone is still running when the zone's chunks begin.
 */
export const ZONE_LIST_LOCK = 0x637a6f6e // "czon"

/** CREATE TABLE / INDEX of the retention summaries. */
export function retentionDdl(d: Dialect): string {
  return [
    rollupDdl(d, [USER_PERIODS, COHORTS, PREV_DAYS, DAY_LINKS]),
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

/** Every zone's offset is a multiple of 15 minutes, so its periods' edges are too. */
const SLOT_MS = 15 * 60_000
const slotKeys = new Map<string, string[]>()

/**
 * `zone␀kind␀start` of each period `ts` falls in, for every kept zone and kind. Memoised per zone
 * and 15-minute slot: a zone's rules cost microseconds per call, and a batch's messages share slots.
 */
function periodKeys(ts: number, zones: readonly string[], into: Set<string>): void {
  const slot = Math.floor(ts / SLOT_MS) * SLOT_MS
  for (const zone of zones) {
    const memo = `${zone}${sep}${slot}`
    let keys = slotKeys.get(memo)
    if (!keys) {
      keys = PERIODS.map((kind) => `${zone}${sep}${kind}${sep}${periodStart(zone, slot, kind)}`)
      if (slotKeys.size > 100_000) slotKeys.clear()
      slotKeys.set(memo, keys)
    }
    for (const k of keys) into.add(k)
  }
}

type User = { bot: string; userId: string }
const userKey = (u: User) => `${u.bot}${sep}${u.userId}`
const byKey = (a: User, b: User) =>
  a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0

/**
 * The stored periods of these users (callers hold their locks), by user key, and every zone kept
 * (`option`, and those in the zones table: kept on demand, read in the writer's transaction).
 */
function* storedPeriods(
  d: Dialect,
  users: readonly User[],
  option: readonly string[],
): Steps<{ periods: Map<string, Set<string>>; zones: readonly string[] }> {
  const table = d.table(USER_PERIODS.name)
  const listed = `SELECT NULL AS bot, NULL AS user_id, zone, NULL AS kind, NULL AS period_start FROM ${d.table(RETENTION_ZONES_TABLE)}`
  // Row lists may be long (a rebuild's page of users): no spreading them into a call.
  let stored: Row[] = []
  if (d.multiRow)
    // One round trip: the zones listed come as rows without a user.
    stored = yield {
      sql: `SELECT p.bot, p.user_id, p.zone, p.kind, p.period_start
          FROM unnest(?::text[], ?::text[]) AS u (bot, user_id) JOIN ${table} p ON p.bot = u.bot AND p.user_id = u.user_id
          UNION ALL ${listed}`,
      params: [users.map((u) => u.bot), users.map((u) => u.userId)],
    }
  else {
    stored = yield { sql: listed, params: [] }
    for (const u of users) {
      const rows: Row[] = yield {
        sql: `SELECT bot, user_id, zone, kind, period_start FROM ${table} WHERE bot = ? AND user_id = ?`,
        params: [u.bot, u.userId],
      }
      for (const r of rows) stored.push(r)
    }
  }
  const periods = new Map<string, Set<string>>()
  const zones = new Set(option)
  for (const r of stored) {
    if (r.bot === null || r.bot === undefined) {
      zones.add(String(r.zone))
      continue
    }
    const k = `${String(r.bot)}${sep}${String(r.user_id)}`
    let set = periods.get(k)
    if (!set) {
      set = new Set()
      periods.set(k, set)
    }
    set.add(`${String(r.zone)}${sep}${String(r.kind)}${sep}${Number(r.period_start)}`)
  }
  return { periods, zones: [...zones].sort() }
}

/**
 * One user's rows of {@link DAY_LINKS}: each day whose neighbours changed or that `hours` (their
 * first and last hour of the messages at hand, by UTC day) holds; a day no longer active goes.
 * `exact` (after messages went: `hours` are all their remaining messages'): every row is written
 * again, the old ones deleted first.
 */
function linkRows(
  u: User & { had: Set<string>; now: Set<string>; hours: Map<number, [number, number]> },
  exact: boolean,
  links: RollupRow[],
  unlinked: RollupRow[],
): void {
  const prefix = `${LINKS_ZONE}${sep}day${sep}`
  const days = (set: Set<string>) =>
    [...set].filter((pk) => pk.startsWith(prefix)).map((pk) => Number(pk.slice(prefix.length)))
  const had = dayLinksOf(days(u.had))
  const now = dayLinksOf(days(u.now))
  for (const [day, [prev, next]] of now) {
    const hours = u.hours.get(day)
    const was = had.get(day)
    if (exact || hours || !was || was[0] !== prev || was[1] !== next)
      links.push({
        day,
        bot: u.bot,
        user_id: u.userId,
        prev_day: prev,
        next_day: next,
        first_hour: hours?.[0] ?? null,
        last_hour: hours?.[1] ?? null,
      })
  }
  for (const day of had.keys()) if (exact || !now.has(day)) unlinked.push({ day, bot: u.bot, user_id: u.userId })
}

/**
 * Writes each user's periods going from `had` to `now` (a row per period the user was active
 * in, inserted or deleted — a message in a period already there writes nothing) and moves their
 * share of the cohort table from what it was to what it is.
 */
function* moveShares(
  d: Dialect,
  users: ReadonlyArray<User & { had: Set<string>; now: Set<string>; hours: Map<number, [number, number]> }>,
  zones: readonly string[],
  exact = false,
): Steps {
  const added: RollupRow[] = []
  const gone: RollupRow[] = []
  const links: RollupRow[] = []
  const unlinked: RollupRow[] = []
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
    if (zones.includes(LINKS_ZONE)) linkRows(u, exact, links, unlinked)
    if (!changed) continue
    for (const zone of zones)
      for (const kind of PERIODS) {
        const prefix = `${zone}${sep}${kind}${sep}`
        const starts = (set: Set<string>) =>
          [...set].filter((pk) => pk.startsWith(prefix)).map((pk) => Number(pk.slice(prefix.length)))
        for (const [sign, set] of [
          [-1, u.had],
          [1, u.now],
        ] as const) {
          const list = starts(set)
          for (const [cohort, active] of shareOf(list))
            addRow(deltas, COHORTS, { zone, kind, cohort_start: cohort, active_start: active, bot: u.bot, users: sign })
          if (kind === 'day')
            for (const [active, prev] of prevDaysOf(list))
              addRow(deltas, PREV_DAYS, { zone, active_day: active, prev_day: prev, bot: u.bot, users: sign })
        }
      }
  }
  yield* deleteKeysQueries(d, USER_PERIODS, gone)
  yield* upsertQueries(d, USER_PERIODS, added)
  const cohorts = [...(deltas.get(COHORTS)?.values() ?? [])].filter((r) => r.users !== 0)
  yield* upsertQueries(d, COHORTS, cohorts)
  yield* dropEmptyQueries(d, COHORTS, cohorts)
  const prevs = [...(deltas.get(PREV_DAYS)?.values() ?? [])].filter((r) => r.users !== 0)
  yield* upsertQueries(d, PREV_DAYS, prevs)
  yield* dropEmptyQueries(d, PREV_DAYS, prevs)
  yield* deleteKeysQueries(d, DAY_LINKS, unlinked)
  yield* upsertQueries(d, DAY_LINKS, links)
}

/**
 * After messages were stored: adds the periods they fall in to their users' (callers hold the
 * users' locks) and moves each user whose periods changed in the cohort table, in every kept zone.
 */
export function* applyRetention(d: Dialect, changes: readonly UserChange[], zones: readonly string[]): Steps {
  const fresh = new Map<string, User & { times: number[] }>()
  for (const c of changes) {
    if (c.userId === '') continue
    const k = `${c.bot}${sep}${c.userId}`
    let u = fresh.get(k)
    if (!u) {
      u = { bot: c.bot, userId: c.userId, times: [] }
      fresh.set(k, u)
    }
    u.times.push(c.ts)
  }
  if (fresh.size === 0) return
  const users = [...fresh.values()].sort(byKey)
  const stored = yield* storedPeriods(d, users, zones)
  yield* moveShares(
    d,
    users.map((u) => {
      const had = stored.periods.get(userKey(u)) ?? new Set<string>()
      const now = new Set(had)
      for (const t of u.times) periodKeys(t, stored.zones, now)
      return { bot: u.bot, userId: u.userId, had, now, hours: dayHours(u.times) }
    }),
    stored.zones,
  )
}

/**
 * After messages were deleted (erasure, retention): each touched user's periods are derived
 * again from their remaining messages, in every kept zone.
 */
export function* takeBackRetention(d: Dialect, doomed: readonly UserChange[], zones: readonly string[]): Steps {
  const touched = new Map<string, User>()
  for (const c of doomed) if (c.userId !== '') touched.set(userKey(c), { bot: c.bot, userId: c.userId })
  if (touched.size === 0) return
  const users = [...touched.values()].sort(byKey)
  const stored = yield* storedPeriods(d, users, zones)
  const moved: Array<User & { had: Set<string>; now: Set<string>; hours: Map<number, [number, number]> }> = []
  for (const u of users) {
    const rows: Row[] = yield {
      sql: `SELECT DISTINCT ts FROM ${d.table('messages')} WHERE bot = ? AND user_id = ?`,
      params: [u.bot, u.userId],
    }
    const now = new Set<string>()
    for (const r of rows) periodKeys(Number(r.ts), stored.zones, now)
    const hours = dayHours(rows.map((r) => Number(r.ts)))
    moved.push({ ...u, had: stored.periods.get(userKey(u)) ?? new Set(), now, hours })
  }
  yield* moveShares(d, moved, stored.zones, true)
}

/**
 * Derives the retention summaries of `zones` from the stored messages, set-based (a statement per
 * zone and table: retention-derive.ts, the same code that prepares a zone kept on demand chunk by
 * chunk); records the zones as the option's.
 */
export function* rebuildRetention(d: Dialect, zones: readonly string[]): Steps {
  for (const t of [USER_PERIODS.name, COHORTS.name, PREV_DAYS.name, DAY_LINKS.name, RETENTION_ZONES_TABLE])
    yield { sql: `DELETE FROM ${d.table(t)}`, params: [] }
  for (const zone of zones) {
    yield* deriveZone(d, RETENTION_TABLES, zone, 'all')
    yield { sql: `INSERT INTO ${d.table(RETENTION_ZONES_TABLE)} (zone) VALUES (?)`, params: [zone] }
  }
}

/**
 * Derives the previous-day summary of every zone from the stored day periods, in one statement
 * (PostgreSQL migration 18, SQLite step 16: the periods were kept at ingest all along).
 */
export function* rebuildPrevDays(d: Dialect): Steps {
  const t = d.table(PREV_DAYS.name)
  yield { sql: `DELETE FROM ${t}`, params: [] }
  yield {
    sql: `INSERT INTO ${t} (zone, active_day, prev_day, bot, users)
      SELECT zone, active_day, prev_day, bot, count(*) FROM (
        SELECT p.zone, p.bot, p.period_start AS active_day,
          coalesce(lag(p.period_start) OVER (PARTITION BY p.zone, p.bot, p.user_id ORDER BY p.period_start), ?) AS prev_day
        FROM ${d.table(USER_PERIODS.name)} p WHERE p.kind = 'day') s
      GROUP BY zone, active_day, prev_day, bot`,
    params: [NO_PREV_DAY],
  }
}

/**
 * Derives the day links from the users' active hours, in one statement (PostgreSQL migration 20,
 * SQLite step 18: the hours were kept at ingest all along; nothing when UTC is not kept).
 */
export function* rebuildDayLinks(d: Dialect): Steps {
  yield { sql: `DELETE FROM ${d.table(DAY_LINKS.name)}`, params: [] }
  const [kept] = yield {
    sql: `SELECT 1 AS kept FROM ${d.table(RETENTION_ZONES_TABLE)} WHERE zone = ?`,
    params: [LINKS_ZONE],
  }
  if (!kept) return
  const days = `SELECT bot, user_id, hour / ${DAY_MS} * ${DAY_MS} AS day, min(hour) AS first_hour, max(hour) AS last_hour
    FROM ${d.table(USER_HOURS.name)} GROUP BY bot, user_id, hour / ${DAY_MS} * ${DAY_MS}`
  yield { sql: linksInsert(d, days), params: [NO_PREV_DAY, NO_NEXT_DAY] }
}

/** The day links of the scope's users, from their messages (a derivation of the zone). */
function linksOf(d: Dialect, scope: DeriveScope): Query {
  const params: unknown[] = [NO_PREV_DAY, NO_NEXT_DAY]
  const messages = scoped(d, scope, d.table('messages'), 'm', params)
  // A UTC day period is a day a user has a message in: the same days as the periods'.
  const days = `SELECT m.bot, m.user_id, m.ts / ${DAY_MS} * ${DAY_MS} AS day,
      min(m.ts) / ${HOUR_MS} * ${HOUR_MS} AS first_hour, max(m.ts) / ${HOUR_MS} * ${HOUR_MS} AS last_hour
    FROM ${messages} AND m.user_id IS NOT NULL AND m.user_id <> '' GROUP BY m.bot, m.user_id, m.ts / ${DAY_MS} * ${DAY_MS}`
  return { sql: linksInsert(d, days), params }
}

/**
 * `INSERT INTO` the day links `SELECT` each user's active days from `days` (bot, user_id, day,
 * first_hour, last_hour: one row per user and day), each with the day before and after it.
 * Parameters: the two ends' days, then `days`'.
 */
function linksInsert(d: Dialect, days: string): string {
  return `INSERT INTO ${d.table(DAY_LINKS.name)} (day, bot, user_id, prev_day, next_day, first_hour, last_hour)
    SELECT h.day, h.bot, h.user_id, coalesce(lag(h.day) OVER w, ?), coalesce(lead(h.day) OVER w, ?), h.first_hour, h.last_hour
    FROM (${days}) h
    WINDOW w AS (PARTITION BY h.bot, h.user_id ORDER BY h.day)`
}

/** The retention summaries, as the derivation takes them. */
export const RETENTION_TABLES = {
  userPeriods: USER_PERIODS,
  cohorts: COHORTS,
  prevDays: PREV_DAYS,
  dayLinks: { zone: LINKS_ZONE, spec: DAY_LINKS, insert: linksOf },
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
