/**
 * The analytics reports (overview, retention), defined once for both databases like
 * report-queries.ts: each reads summary tables only (the report summaries and
 * analytics-tables.ts), within the range widened to whole hours.
 */
import type { ReadFilter } from '../store/store'
import { FEEDBACK, PATH_DEPTH_MAX, SESSION_HOURS, SESSIONS, USER_HOURS, USER_STEPS } from './analytics-tables'
import type { FunnelLine, FunnelStep, OverviewDay, OverviewReport, PathLine, RetentionReport } from './analytics-types'
import type { Dialect } from './dialect'
import { scopeSql } from './message-queries'
import { type Period, periodIndex, periodStart } from './periods'
import { DAY_MS, dayStart, hourRange } from './range'
import type { Exec, Row } from './report-queries'
import { CONVERSATIONS, HOURLY, NOT_HANDLED, USER_DAYS, USERS } from './rollup-tables'

export type {
  FunnelLine,
  FunnelStep,
  OverviewDay,
  OverviewReport,
  PathLine,
  RetentionCohort,
  RetentionReport,
} from './analytics-types'

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** Audit actions that make a session a handoff: an operator paused the bot or wrote in it. */
export const HANDOFF_ACTIONS: readonly string[] = ['pause', 'operator-message', 'claim']

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

/**
 * Distinct users active in the range: whole UTC days from the users-per-day summary, the
 * partial days at the edges from the users-per-hour one (exact to the hour).
 */
async function activeUsers(d: Dialect, exec: Exec, filter: ReadFilter): Promise<number> {
  const r = hourRange(filter)
  const firstDay = Math.ceil(r.from / DAY_MS) * DAY_MS
  const lastDay = r.to === null ? null : Math.floor(r.to / DAY_MS) * DAY_MS
  const params: unknown[] = []
  const parts: string[] = []
  const edges: Array<[number, number | null]> = []
  if (lastDay !== null && lastDay <= firstDay) edges.push([r.from, r.to])
  else {
    let days = `SELECT DISTINCT bot, user_id FROM ${d.table(USER_DAYS.name)} WHERE day >= ?`
    params.push(firstDay)
    if (lastDay !== null) {
      days += ' AND day < ?'
      params.push(lastDay)
    }
    parts.push(days + scopeSql(d, filter, params))
    if (r.from < firstDay) edges.push([r.from, firstDay])
    if (lastDay !== null && r.to !== null && lastDay < r.to) edges.push([lastDay, r.to])
  }
  for (const [a, b] of edges) {
    params.push(a)
    let edge = `SELECT DISTINCT bot, user_id FROM ${d.table(USER_HOURS.name)} WHERE hour >= ?`
    if (b !== null) {
      edge += ' AND hour < ?'
      params.push(b)
    }
    parts.push(edge + scopeSql(d, filter, params))
  }
  const rows = await exec({ sql: `SELECT count(*) AS n FROM (${parts.join(' UNION ')}) u`, params })
  return num(rows[0]?.n)
}

/** The overview: every figure from summaries; `gapMs` is the session gap (a pause after a session's last message within it belongs to the session). */
export async function overviewReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter,
  gapMs: number,
): Promise<OverviewReport> {
  const r = hourRange(filter)
  // Open end: the latest instant a Date can hold.
  const to = r.to ?? 8.64e15
  const newParams: unknown[] = [r.from, to]
  const convParams: unknown[] = []
  let convAnd = scopeSql(d, filter, convParams)
  if (filter.from !== undefined && filter.from > 0) {
    convAnd += ' AND last_ts >= ?'
    convParams.push(filter.from)
  }
  if (filter.to !== undefined && filter.to !== null) {
    convAnd += ' AND first_ts < ?'
    convParams.push(filter.to)
  }
  // Parameters in the order of the text: the gap (JOIN), the actions, the times, the scope.
  const handoffParams: unknown[] = [gapMs]
  const actions = d.inList('a.action', HANDOFF_ACTIONS, handoffParams)
  handoffParams.push(r.from, to + gapMs, r.from, to)
  const handoffScope = scopeSql(d, filter, handoffParams, 'a.bot')
  const intentParams: unknown[] = []
  const intentWhere = `WHERE 1 = 1${scopeSql(d, filter, intentParams)}${hours(filter, intentParams)}`
  const [users, fresh, conversations, handoffs, traffic, sessions, nh, feedback, rated] = await Promise.all([
    activeUsers(d, exec, filter),
    exec({
      sql: `SELECT count(*) AS n FROM ${d.table(USERS.name)} WHERE first_ts >= ? AND first_ts < ?${scopeSql(d, filter, newParams)}`,
      params: newParams,
    }),
    exec({
      sql: `SELECT count(*) AS n FROM ${d.table(CONVERSATIONS.name)} WHERE messages > 0${convAnd}`,
      params: convParams,
    }),
    exec({
      sql: `SELECT count(*) AS n FROM (SELECT DISTINCT s.bot, s.user_id, s.sid, s.start_ts
          FROM ${d.table('audit')} a
          JOIN ${d.table(CONVERSATIONS.name)} c ON c.bot = a.bot AND c.thread = a.target
          JOIN ${d.table(SESSIONS.name)} s ON s.bot = c.bot AND s.user_id = c.in_user
            AND s.start_ts <= a.ts AND s.end_ts + ? >= a.ts
          WHERE ${actions} AND a.ts >= ? AND a.ts < ? AND s.start_ts >= ? AND s.start_ts < ?${handoffScope}) x`,
      params: handoffParams,
    }),
    hourly(d, exec, filter, HOURLY.name, { messages: 'messages', incoming: 'incoming', outgoing: 'outgoing' }),
    hourly(d, exec, filter, SESSION_HOURS.name, { sessions: 'sessions' }),
    hourly(d, exec, filter, NOT_HANDLED.name, { n: 'n' }),
    hourly(d, exec, filter, FEEDBACK.name, { n: 'n', score_sum: 'score_sum' }),
    exec({
      sql: `SELECT intent, sum(n) AS n, sum(score_sum) AS score_sum FROM ${d.table(FEEDBACK.name)} ${intentWhere}
        GROUP BY intent HAVING sum(n) > 0 ORDER BY n DESC, intent LIMIT 100`,
      params: intentParams,
    }),
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
  const handoffCount = num(handoffs[0]?.n)
  const newUsers = num(fresh[0]?.n)
  const feedbackCount = total(feedback, 'n')
  return {
    users,
    newUsers,
    returningUsers: Math.max(0, users - newUsers),
    sessions: sessionCount,
    conversations: num(conversations[0]?.n),
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
 * Cohorts by the period (in `tz`) of each user's first message inside the range; activity from
 * the users-per-day summary (a UTC day counts in the period its noon falls in, so in a zone
 * other than UTC a period's edges are a day's width apart at most).
 */
export async function retentionReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { period: Period; now: number },
): Promise<RetentionReport> {
  const r = hourRange(filter)
  const end = r.to ?? filter.now
  // The last cohort column: the period holding the range's last instant (not its widened hour).
  const last = periodStart(filter.tz ?? 'UTC', (filter.to ?? filter.now) - 1, filter.period)
  const tz = filter.tz ?? 'UTC'
  const params: unknown[] = [r.from, end]
  const scope = scopeSql(d, filter, params, 'p.bot')
  params.push(Math.floor(r.from / DAY_MS) * DAY_MS, end)
  const rows = await exec({
    sql: `SELECT p.bot, p.user_id, p.first_ts, u.day FROM ${d.table(USERS.name)} p
      JOIN ${d.table(USER_DAYS.name)} u ON u.bot = p.bot AND u.user_id = p.user_id
      WHERE p.first_ts >= ? AND p.first_ts < ?${scope} AND u.day >= ? AND u.day < ?`,
    params,
  })
  const cohorts = new Map<number, { users: Set<string>; active: Array<Set<string>> }>()
  for (const row of rows) {
    const first = num(row.first_ts)
    const start = periodStart(tz, first, filter.period)
    let c = cohorts.get(start)
    if (!c) {
      const n = periodIndex(tz, start, last, filter.period) + 1
      c = { users: new Set(), active: Array.from({ length: Math.max(1, n) }, () => new Set<string>()) }
      cohorts.set(start, c)
    }
    const user = `${String(row.bot)}\u0000${String(row.user_id)}`
    c.users.add(user)
    ;(c.active[0] as Set<string>).add(user)
    const k = periodIndex(tz, start, Math.max(first, num(row.day) + DAY_MS / 2), filter.period)
    if (k > 0 && k < c.active.length) (c.active[k] as Set<string>).add(user)
  }
  return {
    period: filter.period,
    cohorts: [...cohorts.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([start, c]) => ({ start, users: c.users.size, active: c.active.map((s) => s.size) })),
  }
}

/** Deepest `depth` the paths report takes. */
export const PATH_DEPTH_LIMIT = PATH_DEPTH_MAX

/**
 * The most common sequences of the first `depth` incoming intents of sessions that started in
 * the range (a session with fewer intents gives its shorter path), most sessions first (at most
 * `limit`). Reads the sessions summary by its start-time index.
 */
export async function pathsReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { depth: number; limit: number },
): Promise<PathLine[]> {
  const params: unknown[] = []
  const rows = await exec({
    sql: `SELECT intents FROM ${d.table(SESSIONS.name)} WHERE 1 = 1${hours(filter, params, 'start_ts')}${scopeSql(d, filter, params)}`,
    params,
  })
  const counts = new Map<string, PathLine>()
  for (const r of rows) {
    let intents: Array<[number, string]>
    try {
      intents = JSON.parse(String(r.intents ?? '[]'))
    } catch {
      continue
    }
    const path = intents.slice(0, filter.depth).map((x) => x[1])
    if (path.length === 0) continue
    const key = JSON.stringify(path)
    const line = counts.get(key)
    if (line) line.sessions++
    else counts.set(key, { intents: path, sessions: 1 })
  }
  return [...counts.values()]
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

/**
 * Users who did step 1 in the range, then step 2 after it, then step 3 after that… Each user's
 * earliest way through is followed: the first time of each step after the previous step's time,
 * from the funnel-steps summary (one row per user × step × hour: exact across hours; within an
 * hour a step after the previous one is taken at its latest time in that hour).
 */
export async function funnelReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { steps: readonly FunnelStep[] },
): Promise<FunnelLine[]> {
  const distinct = [...new Map(filter.steps.map((s) => [`${s.kind}:${s.name}`, s])).values()]
  const params: unknown[] = []
  const pairs = distinct
    .map((s) => {
      params.push(s.kind, s.name)
      return '(kind = ? AND name = ?)'
    })
    .join(' OR ')
  const rows = await exec({
    sql: `SELECT bot, user_id, kind, name, first_ts, last_ts FROM ${d.table(USER_STEPS.name)}
      WHERE (${pairs})${hours(filter, params)}${scopeSql(d, filter, params)}`,
    params,
  })
  const byUser = new Map<string, Map<string, Array<[number, number]>>>()
  for (const r of rows) {
    const user = `${String(r.bot)}\u0000${String(r.user_id)}`
    const step = `${String(r.kind)}:${String(r.name)}`
    let steps = byUser.get(user)
    if (!steps) {
      steps = new Map()
      byUser.set(user, steps)
    }
    steps.set(step, [...(steps.get(step) ?? []), [num(r.first_ts), num(r.last_ts)]])
  }
  const reached = filter.steps.map(() => 0)
  for (const steps of byUser.values()) {
    let t = Number.NEGATIVE_INFINITY
    for (const [i, s] of filter.steps.entries()) {
      let next = Number.POSITIVE_INFINITY
      for (const [first, last] of steps.get(`${s.kind}:${s.name}`) ?? [])
        next = Math.min(next, first > t ? first : last > t ? last : Number.POSITIVE_INFINITY)
      if (next === Number.POSITIVE_INFINITY) break
      reached[i] = (reached[i] as number) + 1
      t = next
    }
  }
  return filter.steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: reached[i] as number }))
}
