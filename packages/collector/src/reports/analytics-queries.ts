/**
 * The analytics reports (overview, retention), defined once for both databases like
 * report-queries.ts: each reads summary tables only (the report summaries and
 * analytics-tables.ts), within the range widened to whole hours.
 */
import type { ReadFilter } from '../store/store'
import { FEEDBACK, FEEDBACK_DAYS, FEEDBACK_HOURS, PATH_DEPTH_MAX, SESSION_HOURS, USER_HOURS } from './analytics-tables'
import type { FunnelStep, OverviewDay, OverviewReport, PathLine, RetentionReport } from './analytics-types'
import { CONVERSATION_STARTS } from './conversation-starts'
import type { Dialect } from './dialect'
import { HANDOFF_HOURS } from './handoff-summary'
import { scopeSql } from './message-queries'
import { NH_HOURS } from './nh-phrase-days'
import { pathCounts } from './path-prefixes'
import { nextPeriod, type Period, periodIndex, periodStart } from './periods'
import { DAY_MS, dayStart, daysAndEdgeHours, floorHour, hourRange, rangeSql } from './range'
import { USER_SEEN } from './read-summary-tables'
import type { Exec, Row } from './report-queries'
import { cohortRows, DAY_LINKS, DEFAULT_RETENTION_ZONES, LINKS_ZONE, PREV_DAYS } from './retention-cohorts'
import { HOURLY, USER_DAYS, USERS } from './rollup-tables'

export type {
  FunnelLine,
  FunnelStep,
  OverviewDay,
  OverviewReport,
  PathLine,
  RetentionCohort,
  RetentionReport,
  RetentionZoneState,
} from './analytics-types'
export { funnelReport } from './funnel-report'

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

export { HANDOFF_ACTIONS } from './handoff-summary'

/** ` AND col >= ? AND col < ?` over the hour-widened range. */
function hours(filter: ReadFilter, params: unknown[], col = 'hour'): string {
  const r = hourRange(filter)
  params.push(r.from)
  if (r.to === null) return ` AND ${col} >= ?`
  params.push(r.to)
  return ` AND ${col} >= ? AND ${col} < ?`
}

/** Sum of columns of one hourly summary over the range, and per hour for the sparklines. */
async function hourly(d: Dialect, exec: Exec, filter: ReadFilter, table: string, sums: Record<string, string>) {
  const params: unknown[] = []
  const cols = Object.entries(sums)
    .map(([as, expr]) => `sum(${expr}) AS ${as}`)
    .join(', ')
  return exec({
    sql: `SELECT hour, ${cols} FROM ${d.table(table)} WHERE 1 = 1${scopeSql(d, filter, params)}${hours(filter, params)}
      GROUP BY hour`,
    params,
  })
}

/** Is any message in scope stored at or after `hour`? (The bot-hours from there, until one is found.) */
async function messagesFrom(d: Dialect, exec: Exec, filter: ReadFilter, hour: number): Promise<boolean> {
  const params: unknown[] = [hour]
  const rows = await exec({
    sql: `SELECT 1 AS found FROM ${d.table(HOURLY.name)} WHERE hour >= ? AND messages > 0${scopeSql(d, filter, params)} LIMIT 1`,
    params,
  })
  return rows.length > 0
}

/** Of the zones whose day summaries are complete, one whose local days the range starts and ends on: `tz` first. */
function dayZone(zones: readonly string[], tz: string | undefined, r: { from: number; to: number }): string | null {
  const aligned = (zone: string, t: number) => periodStart(zone, t, 'day') === t
  return (
    [...zones].sort((a, b) => (a === tz ? -1 : b === tz ? 1 : 0)).find((z) => aligned(z, r.from) && aligned(z, r.to)) ??
    null
  )
}

/**
 * Users of a past range of whole hours `[from, to)` whose edges fall inside UTC days: its whole UTC
 * days `[s, e)` are a sum of the previous-day rows (each user once, on their first day there);
 * the users of the partial first day `[from, s)` and last day `[e, to)` are added only when not
 * counted there, which their day links tell (each row with the user's first and last hour of the
 * day and their active day before and after):
 * - first-day users active from `from` on (last hour ≥ `from`) whose next active day is `e` or later
 *   (one range of the links' index by day and next day: about a third of the day's users);
 * - last-day users active before `to` (first hour < `to`) whose previous active day is before `s`
 *   (one range of the index by day and previous day), less those among them whose previous day is
 *   the first day and who were active in its part of the range (counted with it): the last day's
 *   users whose previous day is exactly that one (one key of the same index; users back after a gap
 *   of the range's length, few), each joined with their first-day row by its key.
 * A range that starts (ends) at a midnight has no first (last) partial day: no hour of the day
 * before `s` is at or after `s`, no hour of day `e` is before `e`.
 */
async function linkedUsers(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter,
  r: { from: number; to: number; s: number; e: number },
): Promise<number> {
  const links = d.table(DAY_LINKS.name)
  const firstDay = r.s - DAY_MS
  // Parameters in the order of the text.
  const params: unknown[] = [LINKS_ZONE, r.s, r.e, r.s]
  const whole = `SELECT sum(users) FROM ${d.table(PREV_DAYS.name)}
    WHERE zone = ? AND active_day >= ? AND active_day < ? AND prev_day < ?${scopeSql(d, filter, params)}`
  params.push(firstDay, r.e, r.from)
  const first = `SELECT count(*) FROM ${links} WHERE day = ? AND next_day >= ? AND last_hour >= ?${scopeSql(d, filter, params)}`
  params.push(r.e, r.s, r.to)
  const last = `SELECT count(*) FROM ${links} WHERE day = ? AND prev_day < ? AND first_hour < ?${scopeSql(d, filter, params)}`
  params.push(r.e, firstDay, r.to)
  const bothScope = scopeSql(d, filter, params, 'l.bot')
  params.push(r.from)
  const both = `SELECT count(*) FROM ${links} l
    JOIN ${links} f ON f.day = l.prev_day AND f.bot = l.bot AND f.user_id = l.user_id
    WHERE l.day = ? AND l.prev_day = ? AND l.first_hour < ?${bothScope} AND f.last_hour >= ?`
  const [row] = await exec({
    sql: `SELECT (${whole}) AS whole, (${first}) AS first_day, (${last}) AS last_day, (${both}) AS both_days`,
    params,
  })
  return num(row?.whole) + num(row?.first_day) + num(row?.last_day) - num(row?.both_days)
}

/**
 * Distinct users active in the range. A range with nothing stored after it (open, or ending in
 * the future: the dashboard's presets end tonight) counts users by their last message. One that
 * ends in the past: when it is whole local days of a kept retention zone (a dashboard range in
 * the zone of its browser, or UTC), each of its users is the one row of the previous-day summary
 * whose day is in the range and whose previous active day is before it, a sum over pairs of days;
 * edges inside days (an API caller's hours, a zone whose days start inside an hour or is not
 * prepared): the same sum over its whole UTC days and its partial first and last days' users not
 * counted there ({@link linkedUsers}; UTC kept). Without UTC kept, it reads whole UTC days from the
 * users-per-day summary, the partial days at the edges from the users-per-hour one (exact to the
 * hour); a range inside one day reads that day's hours.
 */
async function activeUsers(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter,
  zones: () => Promise<readonly string[]>,
): Promise<number> {
  const r = hourRange(filter)
  if (r.to === null || !(await messagesFrom(d, exec, filter, r.to))) {
    // Nothing after the range: a user has a message in it exactly when their last message is in
    // it — the users last seen in each hour from the range's first, one row per hour.
    const params: unknown[] = [r.from]
    const rows = await exec({
      sql: `SELECT sum(lasts) AS n FROM ${d.table(USER_SEEN.name)} WHERE hour >= ?${scopeSql(d, filter, params)}`,
      params,
    })
    return num(rows[0]?.n)
  }
  const ready = await zones()
  const zone = dayZone(ready, filter.tz, { from: r.from, to: r.to })
  if (zone !== null) {
    const params: unknown[] = [zone, r.from, r.to, r.from]
    const rows = await exec({
      sql: `SELECT sum(users) AS n FROM ${d.table(PREV_DAYS.name)}
        WHERE zone = ? AND active_day >= ? AND active_day < ? AND prev_day < ?${scopeSql(d, filter, params)}`,
      params,
    })
    return num(rows[0]?.n)
  }
  const s = Math.ceil(r.from / DAY_MS) * DAY_MS
  const e = Math.floor(r.to / DAY_MS) * DAY_MS
  if (s <= e && ready.includes(LINKS_ZONE)) return linkedUsers(d, exec, filter, { from: r.from, to: r.to, s, e })
  // Without UTC kept: whole UTC days from the users per day, the partial days from the users per hour.
  const params: unknown[] = []
  const parts: string[] = []
  const edges: Array<[number, number]> = []
  if (e <= s) edges.push([r.from, r.to])
  else {
    params.push(s, e)
    parts.push(
      `SELECT bot, user_id FROM ${d.table(USER_DAYS.name)} WHERE day >= ? AND day < ?${scopeSql(d, filter, params)}`,
    )
    if (r.from < s) edges.push([r.from, s])
    if (e < r.to) edges.push([e, r.to])
  }
  for (const [a, b] of edges) {
    params.push(a, b)
    parts.push(
      `SELECT bot, user_id FROM ${d.table(USER_HOURS.name)} WHERE hour >= ? AND hour < ?${scopeSql(d, filter, params)}`,
    )
  }
  // One UNION removes the repeats of all parts at once (a DISTINCT per part first cost twice as much).
  const users = parts.length === 1 ? `SELECT DISTINCT bot, user_id FROM (${parts[0]}) p` : parts.join(' UNION ')
  const rows = await exec({ sql: `SELECT count(*) AS n FROM (${users}) u`, params })
  return num(rows[0]?.n)
}

/**
 * Feedback per rated intent over the range (widened to whole hours), the 100 most rated: its
 * whole UTC days from the day rows, the hours of its partial first and last days from the hour rows.
 */
function ratedIntents(d: Dialect, exec: Exec, filter: ReadFilter): Promise<Row[]> {
  const r = hourRange(filter)
  const params: unknown[] = []
  const parts = daysAndEdgeHours(r, (grain, from, to) => {
    const [table, col] = grain === 'hour' ? [FEEDBACK.name, 'hour'] : [FEEDBACK_DAYS.name, 'day']
    return `SELECT intent, n, score_sum FROM ${d.table(table)} WHERE 1 = 1${rangeSql(col, from, to, params)}${scopeSql(d, filter, params)}`
  })
  return exec({
    sql: `SELECT intent, sum(n) AS n, sum(score_sum) AS score_sum FROM (${parts.join(' UNION ALL ')}) fb
      GROUP BY intent HAVING sum(n) > 0 ORDER BY n DESC, intent LIMIT 100`,
    params,
  })
}

/**
 * The overview: every figure from summaries; `zones`: the retention zones whose summaries are
 * complete, asked only for a range that ends in the past.
 */
export async function overviewReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter,
  zones: () => Promise<readonly string[]> = async () => DEFAULT_RETENTION_ZONES,
): Promise<OverviewReport> {
  const r = hourRange(filter)
  // Open end: the latest instant a Date can hold.
  const to = r.to ?? 8.64e15
  const newParams: unknown[] = [r.from, to]
  const [users, fresh, conversations, handoffs, traffic, sessions, nh, feedback, rated] = await Promise.all([
    activeUsers(d, exec, filter, zones),
    // First seen in the range: the users first seen in each of its hours.
    exec({
      sql: `SELECT sum(firsts) AS n FROM ${d.table(USER_SEEN.name)} WHERE hour >= ? AND hour < ?${scopeSql(d, filter, newParams)}`,
      params: newParams,
    }),
    hourly(d, exec, filter, CONVERSATION_STARTS.name, { n: 'conversations' }),
    // Sessions handed off, by the hour they started in (handoff-summary.ts).
    hourly(d, exec, filter, HANDOFF_HOURS.name, { n: 'sessions' }),
    hourly(d, exec, filter, HOURLY.name, { messages: 'messages', incoming: 'incoming', outgoing: 'outgoing' }),
    hourly(d, exec, filter, SESSION_HOURS.name, { sessions: 'sessions' }),
    hourly(d, exec, filter, NH_HOURS.name, { n: 'n' }),
    hourly(d, exec, filter, FEEDBACK_HOURS.name, { n: 'n', score_sum: 'score_sum' }),
    ratedIntents(d, exec, filter),
  ])
  const tz = filter.tz ?? 'UTC'
  const days = new Map<number, OverviewDay>()
  const day = (hour: unknown): OverviewDay => {
    const t = dayStart(tz, num(hour))
    let row = days.get(t)
    if (!row) {
      row = { t, sessions: 0, messages: 0, incoming: 0, outgoing: 0, notHandled: 0, feedback: 0 }
      days.set(t, row)
    }
    return row
  }
  const total = (rows: Row[], col: string) => rows.reduce((s, x) => s + num(x[col]), 0)
  for (const x of traffic) {
    const row = day(x.hour)
    row.messages += num(x.messages)
    row.incoming += num(x.incoming)
    row.outgoing += num(x.outgoing)
  }
  for (const x of sessions) day(x.hour).sessions += num(x.sessions)
  for (const x of nh) day(x.hour).notHandled += num(x.n)
  for (const x of feedback) day(x.hour).feedback += num(x.n)
  const incoming = total(traffic, 'incoming')
  const notHandled = total(nh, 'n')
  const sessionCount = total(sessions, 'sessions')
  const handoffCount = total(handoffs, 'n')
  const newUsers = num(fresh[0]?.n)
  const feedbackCount = total(feedback, 'n')
  return {
    users,
    newUsers,
    returningUsers: Math.max(0, users - newUsers),
    sessions: sessionCount,
    conversations: total(conversations, 'n'),
    messages: total(traffic, 'messages'),
    incoming,
    outgoing: total(traffic, 'outgoing'),
    notHandled,
    notHandledRate: incoming > 0 ? notHandled / incoming : 0,
    handoffs: handoffCount,
    containmentRate: sessionCount > 0 ? (sessionCount - handoffCount) / sessionCount : 1,
    feedback: {
      count: feedbackCount,
      average: feedbackCount > 0 ? total(feedback, 'score_sum') / feedbackCount : null,
      byIntent: rated.map((x) => ({ intent: String(x.intent), count: num(x.n), average: num(x.score_sum) / num(x.n) })),
    },
    days: [...days.values()].filter((x) => x.messages > 0 || x.sessions > 0).sort((a, b) => a.t - b.t),
  }
}

/**
 * Cohorts: users first seen in each period (day, week from Monday, month, in `tz`) whose start
 * lies in the range (the period holding `from` whole), and how many of them were active k periods
 * later, up to `to`. In one of the kept `zones`, from the cohort table (grows with periods², not
 * users); in another zone, from each cohort user's active hours (exact to the hour).
 */
export async function retentionReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { period: Period; now: number },
  zones: readonly string[] = DEFAULT_RETENTION_ZONES,
): Promise<RetentionReport> {
  const tz = filter.tz ?? 'UTC'
  const to = filter.to ?? filter.now
  const from = periodStart(tz, filter.from ?? 0, filter.period)
  // The last cohort column: the period holding the range's last instant.
  const last = periodStart(tz, to - 1, filter.period)
  const table = zones.includes(tz)
    ? await cohortRows(d, exec, {
        zone: tz,
        period: filter.period,
        from,
        to,
        scope: (params) => scopeSql(d, filter, params),
      })
    : await cohortsFromHours(d, exec, { ...filter, tz, from, to: nextPeriod(tz, last, filter.period) })
  return {
    period: filter.period,
    cohorts: [...table.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([start, active]) => {
        const n = Math.max(1, periodIndex(tz, start, last, filter.period) + 1)
        return { start, users: active.get(0) ?? 0, active: Array.from({ length: n }, (_, k) => active.get(k) ?? 0) }
      }),
  }
}

/** The cohort table of a zone whose cohorts are not kept: each cohort user's active hours. */
async function cohortsFromHours(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { period: Period; tz: string; from: number; to: number },
): Promise<Map<number, Map<number, number>>> {
  const params: unknown[] = [filter.from, filter.to]
  const scope = scopeSql(d, filter, params, 'p.bot')
  params.push(floorHour(filter.from), filter.to)
  const rows = await exec({
    sql: `SELECT p.bot, p.user_id, p.first_ts, u.hour FROM ${d.table(USERS.name)} p
      JOIN ${d.table(USER_HOURS.name)} u ON u.bot = p.bot AND u.user_id = p.user_id
      WHERE p.first_ts >= ? AND p.first_ts < ?${scope} AND u.hour >= ? AND u.hour < ?`,
    params,
  })
  // Every zone's offset is a multiple of 15 minutes, so a period's edges are too: its start and
  // index are memoised per 15-minute slot (a zone's rules cost microseconds per call).
  const slot = 15 * 60_000
  const starts = new Map<number, number>()
  const startOf = (t: number): number => {
    const q = Math.floor(t / slot) * slot
    let v = starts.get(q)
    if (v === undefined) {
      v = periodStart(filter.tz, q, filter.period)
      starts.set(q, v)
    }
    return v
  }
  const indexes = new Map<string, number>()
  const indexOf = (start: number, t: number): number => {
    const p = startOf(t)
    const key = `${start}:${p}`
    let v = indexes.get(key)
    if (v === undefined) {
      v = periodIndex(filter.tz, start, p, filter.period)
      indexes.set(key, v)
    }
    return v
  }
  const seen = new Map<number, Map<number, Set<string>>>()
  for (const row of rows) {
    const first = num(row.first_ts)
    const start = startOf(first)
    const k = indexOf(start, Math.max(first, num(row.hour)))
    const user = `${String(row.bot)}\u0000${String(row.user_id)}`
    let c = seen.get(start)
    if (!c) {
      c = new Map()
      seen.set(start, c)
    }
    for (const i of k === 0 ? [0] : [0, k]) {
      let s = c.get(i)
      if (!s) {
        s = new Set()
        c.set(i, s)
      }
      s.add(user)
    }
  }
  return new Map([...seen].map(([start, c]) => [start, new Map([...c].map(([k, s]) => [k, s.size]))]))
}

/** Deepest `depth` the paths report takes. */
export const PATH_DEPTH_LIMIT = PATH_DEPTH_MAX

/**
 * The most common sequences of the first `depth` incoming intents of sessions that started in
 * the range (a session with fewer intents gives its shorter path), most sessions first (at most
 * `limit`). Reads the path-prefix summary: hours × distinct paths, never one row per session.
 */
export async function pathsReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { depth: number; limit: number },
): Promise<PathLine[]> {
  const counts = await pathCounts(d, exec, {
    depth: filter.depth,
    range: (params) => hours(filter, params),
    scope: (params) => scopeSql(d, filter, params),
  })
  return counts
    .map((c) => ({ intents: c.path, sessions: c.sessions }))
    .sort((a, b) => b.sessions - a.sessions || (a.intents.join('\u0000') < b.intents.join('\u0000') ? -1 : 1))
    .slice(0, filter.limit)
}

/** Most steps a funnel takes. */
export const FUNNEL_STEPS_MAX = 8

/** Why a funnel's `steps` was refused. */
export class FunnelStepsError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FunnelStepsError'
  }
}

/**
 * `intent:greet,intent:order.status,event:purchase` → the steps. Names may hold any character but
 * the comma; throws {@link FunnelStepsError} naming the bad step.
 */
export function parseFunnelSteps(text: string): FunnelStep[] {
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts[0] === '')
    throw new FunnelStepsError('query `steps` is required: intent:NAME,event:NAME,…')
  if (parts.length > FUNNEL_STEPS_MAX)
    throw new FunnelStepsError(`query \`steps\` takes at most ${FUNNEL_STEPS_MAX} steps`)
  return parts.map((p) => {
    const m = /^(intent|event):(.+)$/.exec(p)
    if (!m) throw new FunnelStepsError(`query \`steps\`: "${p}" must be intent:NAME or event:NAME`)
    return { kind: m[1] as FunnelStep['kind'], name: m[2] as string }
  })
}
