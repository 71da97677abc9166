/**
 * The one entry to the summaries' writes at ingest and when records go (erasure, retention): the
 * report rollups (rollup-writes.ts) and the analytics (analytics-writes.ts) in one fixed order,
 * with the hot tables written last.
 *
 * Every batch adds to the same few rows of the per-hour totals (a batch's records are mostly in
 * one hour), so two collectors writing at once wait on those rows' locks until the holder
 * commits. Written first, they serialised whole transactions; written last, a writer holds them
 * only for its final statements and the commit, and the per-user and per-thread work of two
 * writers overlaps. The order stays the same for every writer (ingest, erasure, retention), and
 * keys are sorted inside each table, so two transactions never wait on each other in a circle.
 *
 * A new summary table joins either its writer's place in that order (rows per user or thread)
 * or {@link LATE_TABLES} (a few rows per hour that every batch touches).
 */
import { SESSION_HOURS } from './analytics-tables'
import { ingestAnalytics, takeBackAnalytics } from './analytics-writes'
import { CONVERSATION_STARTS, countStarts, takeBackStarts } from './conversation-starts'
import type { Dialect, Query } from './dialect'
import { touchPackedDays } from './funnel-packs-pg'
import { HANDOFF_HOURS } from './handoff-summary'
import { mirrorPhraseDays, NH_HOURS, NH_PHRASE_DAYS, takeBackPhraseDays } from './nh-phrase-days'
import { ingestReadSummaries, takeBackReadSummaries } from './read-summaries'
import { NH_PHRASES, SEGMENTS, USER_SEEN } from './read-summary-tables'
import { DEFAULT_RETENTION_ZONES } from './retention-cohorts'
import type { Deltas, Late, RollupMessage } from './rollup-delta'
import {
  dropEmptyQueries,
  EVENT_DAYS,
  EVENTS,
  HOURLY,
  INTENT_DAYS,
  INTENTS,
  type RollupRow,
  type RollupSpec,
  upsertQueries,
} from './rollup-tables'
import { ingestRollups, type Steps, takeBack } from './rollup-writes'
import { ingestUsage, writeUsage } from './usage-rollup'

/** The tables written at the end of a writer's transaction, in this order. */
export const LATE_TABLES: readonly RollupSpec[] = [
  HOURLY,
  INTENTS,
  EVENTS,
  INTENT_DAYS,
  EVENT_DAYS,
  NH_PHRASES,
  SEGMENTS,
  USER_SEEN,
  SESSION_HOURS,
  HANDOFF_HOURS,
  CONVERSATION_STARTS,
  NH_PHRASE_DAYS,
  NH_HOURS,
]

function lateChanges(): Late {
  return { takes: (spec) => LATE_TABLES.includes(spec), deltas: new Map() }
}

/**
 * Writes the kept changes, one upsert per table. On PostgreSQL the upserts go as one statement
 * (a data-modifying CTE per table): the hot rows are locked for one round trip and the commit.
 * Rows that reached 0 are dropped after (a statement modifies a row once).
 */
function* writeLate(d: Dialect, deltas: Deltas): Steps {
  const upserts: Query[] = []
  const drops: Query[] = []
  for (const spec of LATE_TABLES) {
    const sums = spec.sums ?? []
    // A row whose changes cancel out (a session moved to another hour and back) is no write.
    const rows = [...(deltas.get(spec)?.values() ?? [])].filter((r) => sums.some((c) => r[c] !== 0))
    upserts.push(...upsertQueries(d, spec, rows))
    // Only a row that was taken from can have reached 0.
    const taken = rows.filter((r) => (spec.live ?? []).some((c) => (r[c] as number) < 0))
    drops.push(...dropEmptyQueries(d, spec, taken))
  }
  if (d.multiRow && upserts.length > 1)
    yield {
      sql: `WITH ${upserts.map((q, i) => `t${i} AS (${q.sql})`).join(', ')} SELECT 1 AS done`,
      params: upserts.flatMap((q) => q.params),
    }
  else yield* upserts
  yield* drops
}

/**
 * After a batch's messages are stored, in the insert's transaction: every summary's share of
 * them. `records` are (bot, event time) of the records stored.
 */
export function* ingestSummaries(
  d: Dialect,
  fresh: readonly RollupMessage[],
  records: ReadonlyArray<{ bot: string; ts: number }>,
  gapMs: number,
  zones: readonly string[] = DEFAULT_RETENTION_ZONES,
): Steps {
  const late = lateChanges()
  const changes = yield* ingestRollups(d, fresh, records, late)
  yield* countStarts(d, changes, fresh, late)
  yield* ingestReadSummaries(d, changes, late)
  yield* ingestAnalytics(d, fresh, gapMs, { zones }, late)
  yield* ingestUsage(d, fresh)
  mirrorPhraseDays(late.deltas)
  yield* writeLate(d, late.deltas)
  yield* touchPackedDays(d, fresh, false)
}

/**
 * After records were deleted (erasure, retention): their share taken out of every summary.
 * `usage`: the LLM usage rows of those records, read before they went (usage-rollup.ts `doomedUsage`).
 */
export function* takeBackSummaries(
  d: Dialect,
  doomed: readonly RollupMessage[],
  records: ReadonlyArray<{ bot: string; ts: number }>,
  gapMs: number,
  usage: readonly RollupRow[] = [],
  zones: readonly string[] = DEFAULT_RETENTION_ZONES,
): Steps {
  const late = lateChanges()
  yield* takeBack(d, doomed, records, late)
  yield* takeBackStarts(d, doomed, late)
  yield* takeBackReadSummaries(d, doomed, late)
  yield* takeBackPhraseDays(d, doomed)
  yield* takeBackAnalytics(d, doomed, gapMs, zones, late)
  yield* writeUsage(d, usage)
  mirrorPhraseDays(late.deltas)
  yield* writeLate(d, late.deltas)
  yield* touchPackedDays(d, doomed, true)
}
