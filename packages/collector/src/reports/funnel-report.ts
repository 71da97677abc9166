/**
 * The funnel read: users who did step 1 in the range, then step 2 after it, then step 3 after
 * that… Each user's earliest way through is followed (the first time of each step after the
 * previous step's time), with the hourly step rows' meaning: exact across hours; within one hour
 * a step after the previous one is taken at its latest time in that hour.
 *
 * One statement, a materialised CTE per step, only the counts come back. Each step reads one row
 * per user from the step spans (funnel-spans.ts: a user's first and last time of the step ever),
 * which decide most users alone:
 * - step 1: a user whose last time is before the range did not take it in the range; one whose
 *   first time is in the range took it first then. Only a user who took it both before and in
 *   the range needs the hourly rows: their first hour of the step from the range's start (one
 *   seek on the index on step, user and hour).
 * - each next step, after the previous step's time `t`: a user whose last time is not after `t`
 *   never took it after; one whose first time is after `t` took it first then; only a user with
 *   times on both sides of `t` reads their first hourly row of the step with a time after `t`
 *   (the same seek; at most two rows: `t`'s own hour and the next).
 * So the read grows with the users who did step 1 in the range (one span row each, an index seek
 * per later step), never with their hours or the history outside the range.
 */
import type { ReadFilter } from '../store/store'
import { USER_STEPS } from './analytics-tables'
import type { FunnelLine, FunnelStep } from './analytics-types'
import type { Dialect } from './dialect'
import { STEP_SPANS } from './funnel-spans'
import { scopeSql } from './message-queries'
import { HOUR_MS, hourRange } from './range'
import type { Exec } from './report-queries'

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

export async function funnelReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { steps: readonly FunnelStep[] },
): Promise<FunnelLine[]> {
  const hours = d.table(USER_STEPS.name)
  const spans = d.table(STEP_SPANS.name)
  const r = hourRange(filter)
  const [first, ...rest] = filter.steps as [FunnelStep, ...FunnelStep[]]
  // Parameters in the order of the text.
  const params: unknown[] = [r.from]
  // Step 1's first hour in the range, for a user who also took it before the range.
  let inRange = `(SELECT h.first_ts FROM ${hours} h
      WHERE h.kind = ? AND h.name = ? AND h.bot = s.bot AND h.user_id = s.user_id AND h.hour >= ?`
  params.push(first.kind, first.name, r.from)
  if (r.to !== null) {
    inRange += ' AND h.hour < ?'
    params.push(r.to)
  }
  inRange += ' ORDER BY h.hour LIMIT 1)'
  params.push(first.kind, first.name, r.from)
  let step1Where = 'WHERE s.kind = ? AND s.name = ? AND s.last_ts >= ?'
  if (r.to !== null) {
    step1Where += ' AND s.first_ts < ?'
    params.push(r.to)
  }
  step1Where += scopeSql(d, filter, params, 's.bot')
  // A step's rows keep the users it could not take on (t NULL, or past the range's end): a filter
  // on the CASE in the same statement evaluated its look-up twice (SQLite copies the expression).
  const reached = (a: string) => `${a}.t IS NOT NULL${r.to === null ? '' : ` AND ${a}.t < ${Number(r.to)}`}`
  const ctes = [
    `f0 AS MATERIALIZED (SELECT s.bot, s.user_id, CASE WHEN s.first_ts >= ? THEN s.first_ts ELSE ${inRange} END AS t
      FROM ${spans} s ${step1Where})`,
  ]
  for (const [i, step] of rest.entries()) {
    params.push(step.kind, step.name, step.kind, step.name)
    // The first hourly row of the step from the hour of `p.t` on that ends after it. CROSS JOIN:
    // SQLite takes the previous step's users first (not every user who ever took this step).
    ctes.push(
      `f${i + 1} AS MATERIALIZED (SELECT p.bot, p.user_id, CASE WHEN s.first_ts > p.t THEN s.first_ts ELSE
          (SELECT CASE WHEN h.first_ts > p.t THEN h.first_ts ELSE h.last_ts END FROM ${hours} h
            WHERE h.kind = ? AND h.name = ? AND h.bot = p.bot AND h.user_id = p.user_id
              AND h.hour >= p.t - (p.t % ${HOUR_MS}) AND h.last_ts > p.t
            ORDER BY h.hour LIMIT 1) END AS t
        FROM f${i} p CROSS JOIN ${spans} s
        WHERE ${reached('p')} AND s.bot = p.bot AND s.kind = ? AND s.name = ? AND s.user_id = p.user_id AND s.last_ts > p.t)`,
    )
  }
  const counts = filter.steps.map((_, i) => `(SELECT count(*) FROM f${i} x WHERE ${reached('x')}) AS n${i}`).join(', ')
  const [row] = await exec({ sql: `WITH ${ctes.join(',\n')}\nSELECT ${counts}`, params })
  return filter.steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: num(row?.[`n${i}`]) }))
}
