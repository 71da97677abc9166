/**
 * The funnel's per-user summary beside the hourly step rows (`rollup_user_steps`): one row per
 * bot × step × user with the first and last time of that step ever. A funnel over all time takes
 * its first step's users and their first times from it: one row per user, not one per user-hour.
 *
 * Kept at ingest from the hourly rows' changes (first and last merge as least and greatest);
 * after records go (erasure, retention) a first or last time cannot be subtracted, so each
 * touched user's rows are counted again from their hourly rows.
 */
import { USER_STEPS } from './analytics-tables'
import type { Dialect, Query } from './dialect'
import type { Deltas } from './rollup-delta'
import { addRow } from './rollup-delta'
import { type RollupRow, type RollupSpec, rollupDdl, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'

/**
 * Funnel steps per bot × step × user: how many times, the first and the last time ever. The index
 * on (step, bot, user) gives a step's users in user order with their first and last times
 * (covering: the all-time funnel reads no table page, and takes the next step's spans in the
 * order of step 1's users: SQLite seeks them, PostgreSQL merge-joins them).
 */
export const STEP_SPANS: RollupSpec = {
  name: 'rollup_spans',
  // The hourly step rows' columns and merges, without the hour.
  columns: Object.fromEntries(Object.entries(USER_STEPS.columns).filter(([c]) => c !== 'hour')),
  keys: USER_STEPS.keys.filter((c) => c !== 'hour'),
  sums: USER_STEPS.sums,
  mins: USER_STEPS.mins,
  maxes: USER_STEPS.maxes,
  indexes: [{ cols: ['kind', 'name', 'bot', 'user_id'], include: ['first_ts', 'last_ts'] }],
}

/** Adds the spans of the hourly step rows' changes in `deltas`. */
export function addSpans(deltas: Deltas): void {
  for (const r of deltas.get(USER_STEPS)?.values() ?? []) {
    const row: RollupRow = {}
    for (const c of Object.keys(STEP_SPANS.columns)) row[c] = r[c] ?? null
    addRow(deltas, STEP_SPANS, row)
  }
}

/** The upserts of the spans in `deltas` (keys sorted: the same lock order for every writer). */
export function spanUpserts(d: Dialect, deltas: Deltas): Query[] {
  return upsertQueries(d, STEP_SPANS, [...(deltas.get(STEP_SPANS)?.values() ?? [])])
}

const spanSelect = (d: Dialect, where: string) =>
  `INSERT INTO ${d.table(STEP_SPANS.name)} (bot, kind, name, user_id, n, first_ts, last_ts)
    SELECT bot, kind, name, user_id, sum(n), min(first_ts), max(last_ts) FROM ${d.table(USER_STEPS.name)}
    ${where} GROUP BY bot, kind, name, user_id`

/** Counts the spans of these users again from their hourly step rows (after records of theirs went). */
export function* recountSpans(d: Dialect, users: ReadonlyArray<{ bot: string; userId: string }>): Steps {
  const sorted = [...users].sort((a, b) =>
    a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0,
  )
  for (const u of sorted) {
    yield { sql: `DELETE FROM ${d.table(STEP_SPANS.name)} WHERE bot = ? AND user_id = ?`, params: [u.bot, u.userId] }
    yield { sql: spanSelect(d, 'WHERE bot = ? AND user_id = ?'), params: [u.bot, u.userId] }
  }
}

/** Derives every span from the hourly step rows (the migration that adds them, a rebuild of the steps). */
export function* rebuildSpans(d: Dialect): Steps {
  yield { sql: `DELETE FROM ${d.table(STEP_SPANS.name)}`, params: [] }
  yield { sql: spanSelect(d, ''), params: [] }
}

/**
 * The spans' index as it is now, in place of the earlier ones: on (step, first time), then with the
 * last time in it (PostgreSQL migration 19, SQLite step 17), now on (step, bot, user) with both
 * times (PostgreSQL migration 22, SQLite step 21).
 */
export function spansIndexDdl(d: Dialect): string {
  const t = d.table(STEP_SPANS.name)
  return [
    `DROP INDEX IF EXISTS ${t}_kind_name_first_ts_bot_user_id;`,
    `DROP INDEX IF EXISTS ${t}_kind_name_first_ts_bot_user_id_last_ts;`,
    rollupDdl(d, [STEP_SPANS]),
  ].join('\n')
}

/** The spans table, and the hourly step rows' index on (step, user, hour) (the funnel's next steps). */
export function spansDdl(d: Dialect): string {
  // The step rows' indexes as they are now (IF NOT EXISTS: the table and its older indexes are there).
  return [rollupDdl(d, [STEP_SPANS]), rollupDdl(d, [USER_STEPS])].join('\n')
}
