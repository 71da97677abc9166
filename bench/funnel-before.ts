/**
 * The funnel statement before the step spans (the collector at e3ec105), kept for the benches'
 * side-by-side timings: every step-1 row of the range grouped per user, then each next step's
 * hourly rows from the previous step's hour on. Time it on a file without the spans' migration
 * (it would read the index that migration adds).
 */
import { USER_STEPS } from '../packages/collector/src/reports/analytics-tables'
import type { FunnelStep } from '../packages/collector/src/reports/analytics-types'
import type { Dialect } from '../packages/collector/src/reports/dialect'
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
