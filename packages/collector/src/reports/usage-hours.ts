/**
 * The usage report's read that does not grow with conversations: answers and tokens per bot ×
 * hour × model (no thread), and with them `conversations`, the conversations whose first answer
 * of its UTC day (by that model) falls in that hour. A small first-answer table (bot × model ×
 * thread × UTC day → first hour) says which hour that is; it is kept from the per-thread usage
 * summary after each change to it (ingest, erasure, retention), so taking back the first answer
 * moves the conversation's count to its next answer of that day, or drops it.
 *
 * Exact for a report day that starts at a UTC midnight (every day in UTC, the default): a
 * conversation answered in [midnight, end) has its day's first answer there. A day in another
 * zone is counted from the per-thread summary (its rows of that day only).
 */
import type { Dialect } from './dialect'
import { DAY_MS } from './range'
import { addRow, type Deltas } from './rollup-delta'
import { dropEmptyQueries, type RollupRow, type RollupSpec, rollupDdl, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'

/** Answers, tokens and conversations first answered (in their UTC day) per bot × hour × model. */
export const USAGE_HOURS: RollupSpec = {
  name: 'rollup_usage_hours',
  columns: {
    bot: 'text',
    hour: 'int',
    model: 'text',
    messages: 'int',
    input_tokens: 'real',
    output_tokens: 'real',
    conversations: 'int',
  },
  keys: ['bot', 'hour', 'model'],
  withoutRowid: true,
  sums: ['messages', 'input_tokens', 'output_tokens', 'conversations'],
  live: ['messages'],
  indexes: [['hour']],
}

/** The hour of each conversation's first answer per model and UTC day (`day`: its midnight, ms). */
export const USAGE_FIRST: RollupSpec = {
  name: 'usage_first_answers',
  columns: { bot: 'text', model: 'text', thread: 'text', day: 'int', first_hour: 'int' },
  keys: ['bot', 'model', 'thread', 'day'],
}

/** CREATE TABLE / INDEX of both, and the per-thread summary's index the first hour is looked up by. */
export const usageHoursDdl = (d: Dialect, usageTable: string): string =>
  `${rollupDdl(d, [USAGE_HOURS, USAGE_FIRST])}
CREATE INDEX IF NOT EXISTS ${d.table(usageTable)}_conversation ON ${d.table(usageTable)} (bot, model, thread, hour);`

const utcDay = (hour: number) => hour - (((hour % DAY_MS) + DAY_MS) % DAY_MS)

/**
 * After `changes` (rows of the per-thread summary `usageTable`, merged by key) were written to
 * it: their answers and tokens into the hours table, and each touched conversation-day's first
 * hour looked up again. The first-answer row is locked first (an upsert), so two writers of one
 * conversation-day take turns and the second sees the first's answers.
 */
export function* writeUsageHours(d: Dialect, usageTable: string, changes: readonly RollupRow[]): Steps {
  const deltas: Deltas = new Map()
  for (const r of changes)
    addRow(deltas, USAGE_HOURS, {
      bot: r.bot as string,
      hour: r.hour as number,
      model: r.model as string,
      messages: r.messages as number,
      input_tokens: r.input_tokens as number,
      output_tokens: r.output_tokens as number,
      conversations: 0,
    })
  const days = new Map<string, [string, string, string, number]>()
  for (const r of changes) {
    const key: [string, string, string, number] = [
      r.bot as string,
      r.model as string,
      r.thread as string,
      utcDay(r.hour as number),
    ]
    days.set(JSON.stringify(key), key)
  }
  const f = d.table(USAGE_FIRST.name)
  const u = d.table(usageTable)
  // Sorted: concurrent writers lock first-answer rows in the same order.
  for (const [, [bot, model, thread, day]] of [...days].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [was] = yield {
      sql: `INSERT INTO ${f} (bot, model, thread, day, first_hour) VALUES (?, ?, ?, ?, -1)
        ON CONFLICT (bot, model, thread, day) DO UPDATE SET first_hour = ${f}.first_hour RETURNING first_hour`,
      params: [bot, model, thread, day],
    }
    const [now] = yield {
      sql: `SELECT min(hour) AS h FROM ${u}
        WHERE bot = ? AND model = ? AND thread = ? AND hour >= ? AND hour < ? AND messages > 0`,
      params: [bot, model, thread, day, day + DAY_MS],
    }
    const before = Number(was?.first_hour ?? -1)
    const after = now?.h === null || now?.h === undefined ? -1 : Number(now.h)
    if (before === after) {
      if (after === -1)
        yield {
          sql: `DELETE FROM ${f} WHERE bot = ? AND model = ? AND thread = ? AND day = ?`,
          params: [bot, model, thread, day],
        }
      continue
    }
    const count = (hour: number, n: number) =>
      addRow(deltas, USAGE_HOURS, {
        bot,
        hour,
        model,
        messages: 0,
        input_tokens: 0,
        output_tokens: 0,
        conversations: n,
      })
    if (before !== -1) count(before, -1)
    if (after !== -1) count(after, 1)
    yield after === -1
      ? {
          sql: `DELETE FROM ${f} WHERE bot = ? AND model = ? AND thread = ? AND day = ?`,
          params: [bot, model, thread, day],
        }
      : {
          sql: `UPDATE ${f} SET first_hour = ? WHERE bot = ? AND model = ? AND thread = ? AND day = ?`,
          params: [after, bot, model, thread, day],
        }
  }
  const list = [...(deltas.get(USAGE_HOURS)?.values() ?? [])]
  for (const q of upsertQueries(d, USAGE_HOURS, list)) yield q
  if (list.some((r) => (r.messages as number) < 0)) for (const q of dropEmptyQueries(d, USAGE_HOURS, list)) yield q
}

/** Derives both tables from the per-thread summary (its migration, and after a rebuild of it). */
export function* rebuildUsageHours(d: Dialect, usageTable: string): Steps {
  const u = d.table(usageTable)
  const f = d.table(USAGE_FIRST.name)
  const h = d.table(USAGE_HOURS.name)
  yield { sql: `DELETE FROM ${h}`, params: [] }
  yield { sql: `DELETE FROM ${f}`, params: [] }
  const day = `(hour - (hour % ${DAY_MS}))`
  yield {
    sql: `INSERT INTO ${f} (bot, model, thread, day, first_hour)
      SELECT bot, model, thread, ${day}, min(hour) FROM ${u} WHERE messages > 0 GROUP BY bot, model, thread, ${day}`,
    params: [],
  }
  yield {
    sql: `INSERT INTO ${h} (bot, hour, model, messages, input_tokens, output_tokens, conversations)
      SELECT bot, hour, model, sum(m), sum(i), sum(o), sum(c) FROM (
        SELECT bot, hour, model, messages AS m, input_tokens AS i, output_tokens AS o, 0 AS c FROM ${u} WHERE messages > 0
        UNION ALL SELECT bot, first_hour, model, 0, 0, 0, 1 FROM ${f}) x
      GROUP BY bot, hour, model`,
    params: [],
  }
}

/** Whether a report day [lo, hi) can be read from the hours table (it starts at a UTC midnight). */
export const readsHours = (lo: number, hi: number): boolean => utcDay(lo) === lo && hi - lo <= DAY_MS
