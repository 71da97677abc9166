/**
 * The funnel read: users who did step 1 in the range, then step 2 after it, then step 3 after
 * that… Each user's earliest way through is followed (the first time of each step after the
 * previous step's time), with the hourly step rows' meaning: exact across hours; within one hour
 * a step after the previous one is taken at its latest time in that hour.
 *
 * One statement, a materialised CTE per step, only the counts come back:
 * - step 1 over all time (the range starts at 0): one row per user from the step spans
 *   (funnel-spans.ts: each user's first time of the step), not one per user-hour; from a later
 *   start, the range's hourly rows of the step grouped per user (the index on step and hour).
 * - each next step: those users' rows of that step from the previous step's hour on (the index
 *   on step, bot, user and hour: only that step's rows, not all of the user's).
 * So the read grows with the users who did step 1 in the range and their hours of the funnel's
 * steps in it, never with the history before the range.
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
  const params: unknown[] = [first.kind, first.name]
  const scope = scopeSql(d, filter, params, 's.bot')
  // Step 1 over all time (a range from 0): each user's first time of it, one span row per user.
  // From a later start: the range's rows of the step, grouped per user (the index on step and hour).
  // SQLite: the range's hours, not every hour of the step in user order (which spares the sort).
  const rangeIndex = d.name === 'sqlite' ? ` INDEXED BY ${hours}_kind_name_hour` : ''
  const ctes = [
    r.from === 0
      ? `f0 AS MATERIALIZED (SELECT s.bot, s.user_id, s.first_ts AS t FROM ${spans} s
        WHERE s.kind = ? AND s.name = ?${scope}${r.to === null ? '' : ` AND s.first_ts < ${Number(r.to)}`})`
      : `f0 AS MATERIALIZED (SELECT s.bot, s.user_id, min(s.first_ts) AS t FROM ${hours} s${rangeIndex}
        WHERE s.kind = ? AND s.name = ?${scope} AND s.hour >= ${Number(r.from)}${r.to === null ? '' : ` AND s.hour < ${Number(r.to)}`}
        GROUP BY s.bot, s.user_id)`,
  ]
  // Each next step: those users' earliest time of it after the previous step's, from their rows of
  // that step from the previous step's hour on (the index on step, user and hour: only that step's
  // rows); the grouping happens in the database. CROSS JOIN: SQLite takes the previous step's users
  // first (it read every row of the step otherwise); PostgreSQL still picks its join.
  for (const [i, step] of rest.entries()) {
    params.push(step.kind, step.name)
    const within = r.to === null ? '' : ` AND s.hour < ${Number(r.to)}`
    ctes.push(
      `f${i + 1} AS MATERIALIZED (SELECT p.bot, p.user_id,
        min(CASE WHEN s.first_ts > p.t THEN s.first_ts ELSE s.last_ts END) AS t
      FROM f${i} p CROSS JOIN ${hours} s WHERE s.kind = ? AND s.name = ? AND s.bot = p.bot AND s.user_id = p.user_id
        AND s.hour >= p.t - (p.t % ${HOUR_MS})${within} AND s.last_ts > p.t
      GROUP BY p.bot, p.user_id)`,
    )
  }
  const counts = filter.steps.map((_, i) => `(SELECT count(*) FROM f${i}) AS n${i}`).join(', ')
  const [row] = await exec({ sql: `WITH ${ctes.join(',\n')}\nSELECT ${counts}`, params })
  return filter.steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: num(row?.[`n${i}`]) }))
}
