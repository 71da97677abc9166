/**
 * The funnel read: users who did step 1 in the range, then step 2 after it, then step 3 after
 * that… Each user's earliest way through is followed (the first time of each step after the
 * previous step's time), with the hourly step rows' meaning: exact across hours; within one hour
 * a step after the previous one is taken at its latest time in that hour.
 *
 * One statement, a chain of CTEs (one per step), only the counts come back:
 * - step 1 over all time (the range starts at 0): one row per user from the step spans
 *   (funnel-spans.ts: each user's first time of the step), not one per user-hour; from a later
 *   start, the range's hourly rows of the step grouped per user (the index on step and hour).
 * - each next step over all time: those users' spans of that step, joined by user (first and last
 *   time decide most users); only a user who did the step both before and after the previous
 *   step's time reads their rows of that step from that hour on (the index on step, bot, user and
 *   hour); only the users who reached the step before are joined, and only those whose span of
 *   the step ends after that time are kept. In a range from a later start: the users'
 *   rows of the step inside the range, joined; a user without one drops out, so each step joins
 *   only the users who reached the one before.
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
  const to = r.to === null ? null : Number(r.to)
  const [first, ...rest] = filter.steps as [FunnelStep, ...FunnelStep[]]
  // Parameters in the order of the text.
  const params: unknown[] = [first.kind, first.name]
  const scope = scopeSql(d, filter, params, 's.bot')
  // Each step's time is computed once per user: both databases would otherwise flatten a step into
  // the next one and copy its expression (and any subquery in it) into every use of it. PostgreSQL:
  // OFFSET 0 keeps the step a subquery of its own (its joins still planned with the rest, with the
  // row estimates a materialised CTE loses); SQLite: the step is materialised. The steps are one
  // chain of CTEs; only the counts come back.
  const fence = d.name === 'postgres' ? ' OFFSET 0' : ''
  const as = d.name === 'sqlite' ? 'AS MATERIALIZED' : 'AS'
  // A range from a later start: users who miss a step drop out of the chain; the counts come
  // from each step's CTE.
  const dropOut = r.from !== 0
  // Step 1 over all time (a range from 0): each user's first time of it, one span row per user.
  // From a later start: the range's rows of the step, grouped per user (the index on step and hour).
  // SQLite: the range's hours, not every hour of the step in user order (which spares the sort).
  const rangeIndex = d.name === 'sqlite' ? ` INDEXED BY ${hours}_kind_name_hour` : ''
  // All time: step 1's users read in place from the spans' index on (step, bot, user), in user
  // order (NOT MATERIALIZED: the count and the step-2 join take them from the index, no copy of them
  // made first): SQLite seeks the next step's spans in that order, not at random (92 → 65 ms for a
  // first step of 44 679 users at 1 M records); PostgreSQL merge-joins them with the next step's
  // spans in the same order (no hash of 400 000 users spilled to disk: 1.0–1.1 s → 0.55–0.66 s at
  // 10 M records, README "The spans' index in user order").
  const ctes = [
    r.from === 0
      ? `f0 AS NOT MATERIALIZED (SELECT s.bot, s.user_id, s.first_ts AS t0 FROM ${spans} s
        WHERE s.kind = ? AND s.name = ?${scope}${to === null ? '' : ` AND s.first_ts < ${to}`})`
      : `f0 ${as} (SELECT s.bot, s.user_id, min(s.first_ts) AS t0 FROM ${hours} s${rangeIndex}
        WHERE s.kind = ? AND s.name = ?${scope} AND s.hour >= ${Number(r.from)}${to === null ? '' : ` AND s.hour < ${to}`}
        GROUP BY s.bot, s.user_id)`,
  ]
  let cols = 'a.bot, a.user_id, a.t0'
  for (const [i, step] of rest.entries()) {
    const k = i + 1
    const t = `a.t${i}`
    const within = to === null ? '' : ` AND s.hour < ${to}`
    // The earliest time of the step after t among the user's hourly rows of it from t's hour on.
    const after = `min(CASE WHEN s.first_ts > ${t} THEN s.first_ts ELSE s.last_ts END)`
    const rows = `s.kind = ? AND s.name = ? AND s.bot = a.bot AND s.user_id = a.user_id
            AND s.hour >= ${t} - (${t} % ${HOUR_MS})${within} AND s.last_ts > ${t}`
    if (r.from === 0) {
      // All time: from the step's span (the user's first and last time of it ever, one row per
      // user, joined — not a walk through their hours):
      // - no span, or its last time at or before t: the step never came after t — the user is not
      //   joined (an inner join: their time of the step would be NULL anyway), so each next step
      //   joins the users who may have gone on, not every user of step 1, and a step read by the
      //   next one (materialised) holds those users only;
      // - its first time after t: that is the earliest after t (kept if inside the range);
      // - first at or before t and last after it (done both before and after t): that user's
      //   hourly rows of the step from t's hour on (the index on step, bot, user and hour), a
      //   subquery that runs for those users only.
      // PostgreSQL carried every user of step 1 down one chain of outer joins before (its hashes of
      // 400 000 users spilled to disk at 10 M records: 1.0–1.1 s against 0.55–0.66 s now).
      params.push(step.kind, step.name, step.kind, step.name)
      const join = `JOIN ${spans} x ON x.kind = ? AND x.name = ? AND x.bot = a.bot AND x.user_id = a.user_id AND x.last_ts > ${t}`
      ctes.push(
        `f${k} ${as} (SELECT ${cols}, CASE
        WHEN x.first_ts > ${t} THEN ${to === null ? 'x.first_ts' : `CASE WHEN x.first_ts < ${to} THEN x.first_ts END`}
        ELSE (SELECT ${after} FROM ${hours} s WHERE ${rows})
      END AS t${k}
      FROM f${i} a ${join}${fence})`,
      )
    } else {
      // A range from a later start: each user's hourly rows of the step inside the range from t's
      // hour on; a user who never took it drops out, so the next step joins only those who
      // reached this one and the counts are each step's CTE (joined and grouped by user with all
      // of step 1's users kept instead, PostgreSQL spent 2–3× longer: 513 against 226 ms for
      // greeting → order.status → purchase over the last 30 days at 10 M records). SQLite seeks
      // the index on step, bot, user and hour per user (CROSS JOIN: it takes the users first; it
      // read every row of the step otherwise); PostgreSQL hash-joins the range's rows of the step
      // (the index on step and hour: `s.hour >= from`) or, for few users, seeks per user.
      params.push(step.kind, step.name)
      const range = d.name === 'postgres' ? ` AND s.hour >= ${Number(r.from)}` : ''
      ctes.push(
        `f${k} AS MATERIALIZED (SELECT a.bot, a.user_id, ${after} AS t${k}
      FROM f${i} a CROSS JOIN ${hours} s WHERE ${rows}${range} GROUP BY a.bot, a.user_id)`,
      )
    }
    cols += `, a.t${k}`
  }
  // Each step's users: a range from a later start keeps only them in its CTE; all time keeps those
  // whose span of the step ends after the step before, with a NULL time for those who did not go
  // on inside the range.
  const counts = filter.steps
    .map((_, i) =>
      dropOut || i === 0 ? `(SELECT count(*) FROM f${i}) AS n${i}` : `(SELECT count(t${i}) FROM f${i}) AS n${i}`,
    )
    .join(', ')
  const [row] = await exec({ sql: `WITH ${ctes.join(',\n')}\nSELECT ${counts}`, params })
  return filter.steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: num(row?.[`n${i}`]) }))
}
