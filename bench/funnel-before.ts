/**
 * The funnel statement before the step spans (the collector at e3ec105), kept for the benches'
 * side-by-side timings: every step-1 row of the range grouped per user, then each next step's
 * hourly rows from the previous step's hour on. Time it on a file without the spans' migration
 * (it would read the index that migration adds).
 */
import { USER_STEPS } from '../packages/collector/src/reports/analytics-tables'
import type { FunnelStep } from '../packages/collector/src/reports/analytics-types'
import type { Dialect } from '../packages/collector/src/reports/dialect'
import { STEP_SPANS } from '../packages/collector/src/reports/funnel-spans'
import { HOUR_MS, hourRange } from '../packages/collector/src/reports/range'
import type { Exec } from '../packages/collector/src/reports/report-queries'

export type Funnel = { from?: number; to?: number | null; steps: readonly FunnelStep[] }

/** The statement before the spans (the collector at e3ec105), as it was. */
export async function funnelBefore(d: Dialect, exec: Exec, filter: Funnel): Promise<number[]> {
  const steps = d.table(USER_STEPS.name)
  const r = hourRange(filter)
  const hours = (params: unknown[], col = 'hour') => {
    params.push(r.from)
    if (r.to === null) return ` AND ${col} >= ?`
    params.push(r.to)
    return ` AND ${col} >= ? AND ${col} < ?`
  }
  const [first, ...rest] = filter.steps as [FunnelStep, ...FunnelStep[]]
  const params: unknown[] = [first.kind, first.name]
  const ctes = [
    `f0 AS MATERIALIZED (SELECT bot, user_id, min(first_ts) AS t FROM ${steps}
      WHERE kind = ? AND name = ?${hours(params)} GROUP BY bot, user_id)`,
  ]
  for (const [i, step] of rest.entries()) {
    const within = hours(params, 's.hour')
    params.push(step.kind, step.name)
    ctes.push(
      `f${i + 1} AS MATERIALIZED (SELECT p.bot, p.user_id,
        min(CASE WHEN s.first_ts > p.t THEN s.first_ts ELSE s.last_ts END) AS t
      FROM f${i} p JOIN ${steps} s ON s.bot = p.bot AND s.user_id = p.user_id
        AND s.hour >= p.t - (p.t % ${HOUR_MS})${within} AND s.kind = ? AND s.name = ? AND s.last_ts > p.t
      GROUP BY p.bot, p.user_id)`,
    )
  }
  const counts = filter.steps.map((_, i) => `(SELECT count(*) FROM f${i}) AS n${i}`).join(', ')
  const [row] = await exec({ sql: `WITH ${ctes.join(',\n')}\nSELECT ${counts}`, params })
  return filter.steps.map((_, i) => Number(row?.[`n${i}`]))
}

/**
 * The statement after the spans and before the spans join (the collector at 368f885): step 1
 * over all time from the spans, each next step a walk through each user's hourly rows of it
 * (materialised CTEs). Any file with the spans' migration (unscoped: every bot).
 */
export async function funnelWalk(d: Dialect, exec: Exec, filter: Funnel): Promise<number[]> {
  const hours = d.table(USER_STEPS.name)
  const spans = d.table(STEP_SPANS.name)
  const r = hourRange(filter)
  const [first, ...rest] = filter.steps as [FunnelStep, ...FunnelStep[]]
  // Parameters in the order of the text.
  const params: unknown[] = [first.kind, first.name]
  // Step 1 over all time (a range from 0): each user's first time of it, one span row per user.
  // From a later start: the range's rows of the step, grouped per user (the index on step and hour).
  // SQLite: the range's hours, not every hour of the step in user order (which spares the sort).
  const rangeIndex = d.name === 'sqlite' ? ` INDEXED BY ${hours}_kind_name_hour` : ''
  const ctes = [
    r.from === 0
      ? `f0 AS MATERIALIZED (SELECT s.bot, s.user_id, s.first_ts AS t FROM ${spans} s
        WHERE s.kind = ? AND s.name = ?${r.to === null ? '' : ` AND s.first_ts < ${Number(r.to)}`})`
      : `f0 AS MATERIALIZED (SELECT s.bot, s.user_id, min(s.first_ts) AS t FROM ${hours} s${rangeIndex}
        WHERE s.kind = ? AND s.name = ? AND s.hour >= ${Number(r.from)}${r.to === null ? '' : ` AND s.hour < ${Number(r.to)}`}
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
  return filter.steps.map((_, i) => Number(row?.[`n${i}`]))
}
