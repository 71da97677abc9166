/**
 * The LLM usage summary: tokens per bot × hour (event time) × model × conversation, kept like the
 * other summaries — merged at ingest in the insert's transaction, its share taken back on erasure
 * and retention, derived from the stored records by its migration — so `GET /api/reports/usage`
 * reads a range of hours, never the records. Tokens live in an answer's `platformJson.usage`
 * (written by `POST /v1/traces`): they are read from the raw record once, when it is stored.
 * The conversation is in the key so the report's `conversations` is exact over any range; a day
 * that starts at a UTC midnight reads the hours table of usage-hours.ts instead (no row per conversation).
 */
import type { UsageLine } from '../store/store'
import type { Dialect } from './dialect'
import { scopeSql } from './message-queries'
import { dayStart, floorHour, HOUR_MS, hourRange, tzOffset } from './range'
import type { Exec, Row } from './report-queries'
import { addRow, type Deltas, type LlmUsage, type RollupMessage } from './rollup-delta'
import { dropEmptyQueries, type RollupRow, type RollupSpec, rollupDdl, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'
import { readsHours, rebuildUsageHours, USAGE_HOURS, usageHoursDdl, writeUsageHours } from './usage-hours'

/** Answers (and their tokens) per bot × hour × model ('' for none) × thread. */
export const USAGE: RollupSpec = {
  name: 'rollup_usage',
  columns: {
    bot: 'text',
    hour: 'int',
    model: 'text',
    thread: 'text',
    messages: 'int',
    input_tokens: 'real',
    output_tokens: 'real',
  },
  keys: ['bot', 'hour', 'model', 'thread'],
  sums: ['messages', 'input_tokens', 'output_tokens'],
  live: ['messages'],
  indexes: [['hour']],
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Most tokens one answer may count; beyond, or below 0, the count is not believed. */
export const TOKENS_MAX = 1e12

const tokens = (v: unknown): number | undefined => (typeof v === 'number' && v >= 0 && v <= TOKENS_MAX ? v : undefined)

/**
 * The tokens of an outgoing record: `platformJson.usage.inputTokens` a number from 0 to
 * {@link TOKENS_MAX} (else none: sums stay finite on both databases), `outputTokens` (0 when
 * not such a number), `platformJson.model` when a string. Records without `"usage"` in their
 * text are not parsed.
 */
export function usageOfRecord(type: string, raw: string): LlmUsage | null {
  if (type !== 'outgoing' || !raw.includes('"usage"')) return null
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    return null
  }
  const pj = isObj(body) ? body.platformJson : undefined
  const u = isObj(pj) ? pj.usage : undefined
  const input = isObj(u) ? tokens(u.inputTokens) : undefined
  if (input === undefined || !isObj(u)) return null
  const out = tokens(u.outputTokens) ?? 0
  // PostgreSQL text holds no U+0000: both stores keep the same spelling.
  const model = isObj(pj) && typeof pj.model === 'string' ? pj.model.replaceAll('\0', '\uFFFD') : ''
  return { model, inputTokens: input, outputTokens: out }
}

const usageRow = (m: { bot: string; ts: number; thread: string }, u: LlmUsage, sign: 1 | -1): RollupRow => ({
  bot: m.bot,
  hour: floorHour(m.ts),
  model: u.model,
  thread: m.thread,
  messages: sign,
  input_tokens: sign * u.inputTokens,
  output_tokens: sign * u.outputTokens,
})

/** Rows of changes, merged by key (one upsert row per key). */
function merged(rows: readonly RollupRow[]): RollupRow[] {
  const deltas: Deltas = new Map()
  for (const r of rows) addRow(deltas, USAGE, { ...r })
  return [...(deltas.get(USAGE)?.values() ?? [])]
}

/**
 * Merges changes into the summary; rows whose answers reached 0 are deleted. The hours table
 * follows (`hours: false` in a rebuild, which derives it at the end).
 */
export function* writeUsage(d: Dialect, rows: readonly RollupRow[], hours = true): Steps {
  const list = merged(rows)
  for (const q of upsertQueries(d, USAGE, list)) yield q
  if (list.some((r) => (r.messages as number) < 0)) for (const q of dropEmptyQueries(d, USAGE, list)) yield q
  if (hours) yield* writeUsageHours(d, USAGE.name, list)
}

/**
 * At ingest, after the other summaries (every writer touches this table last): the answers of
 * the batch that carry tokens.
 */
export function* ingestUsage(d: Dialect, fresh: readonly RollupMessage[]): Steps {
  const rows = fresh.flatMap((m) => (m.usage ? [usageRow(m, m.usage, 1)] : []))
  if (rows.length > 0) yield* writeUsage(d, rows)
}

/** Only records that may carry tokens are read whole. */
const MAY_CARRY = `r.type = 'outgoing' AND r.raw LIKE '%"usage"%'`

function* usageRows(d: Dialect, where: string, params: unknown[], sign: 1 | -1): Steps<RollupRow[]> {
  const rows = yield {
    sql: `SELECT m.bot, m.thread, m.ts, r.type, r.raw FROM ${d.table('messages')} m
      JOIN ${d.table('records')} r ON r.id = m.record_id WHERE ${where} AND ${MAY_CARRY}`,
    params,
  }
  return rows.flatMap((r: Row) => {
    const u = usageOfRecord(String(r.type), String(r.raw))
    return u ? [usageRow({ bot: String(r.bot), ts: Number(r.ts), thread: String(r.thread) }, u, sign)] : []
  })
}

/**
 * Before records are deleted (erasure, retention): reads their share of the summary (to be
 * taken back with {@link writeUsage} after the other summaries', in the same transaction).
 */
export function* doomedUsage(d: Dialect, recordIds: readonly number[]): Steps<RollupRow[]> {
  if (recordIds.length === 0) return []
  const params: unknown[] = []
  return yield* usageRows(d, d.inIds('r.id', recordIds, params), params, -1)
}

/** Records read per step of a rebuild. */
const REBUILD_PAGE = 5_000

/** Derives the summary from the stored records (the migration that adds it): their answers, in keyset pages. */
export function* rebuildUsage(d: Dialect): Steps {
  yield { sql: `DELETE FROM ${d.table(USAGE.name)}`, params: [] }
  for (let after = 0; ; ) {
    const page = yield {
      sql: `SELECT id FROM ${d.table('records')} WHERE id > ? ORDER BY id LIMIT ${REBUILD_PAGE}`,
      params: [after],
    }
    if (page.length === 0) break
    after = Number(page[page.length - 1]?.id)
    const first = Number(page[0]?.id)
    const rows = yield* usageRows(d, 'r.id >= ? AND r.id <= ?', [first, after], 1)
    if (rows.length > 0) yield* writeUsage(d, rows, false)
  }
  yield* rebuildUsageHours(d, USAGE.name)
}

/** CREATE TABLE / INDEX of the usage summary. */
export const usageDdl = (d: Dialect): string => `${rollupDdl(d, [USAGE])}\n${usageHoursDdl(d, USAGE.name)}`

/** Derives the hours table from the summary (the migration that adds it). */
export const rebuildUsageByHour = (d: Dialect): Steps => rebuildUsageHours(d, USAGE.name)

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** `YYYY-MM-DD` of a local day's start in `tz`. */
const dayName = (tz: string, start: number) => new Date(start + tzOffset(tz, start)).toISOString().slice(0, 10)

/** The local days in `tz` that cover the hours [from, to): [start, next start) each. */
function daysOf(tz: string, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (let start = dayStart(tz, from); start < to; ) {
    // A DST day is 23 or 25 hours long: the next day starts within 26 hours.
    const next = dayStart(tz, start + 26 * HOUR_MS)
    out.push([start, next])
    start = next
  }
  return out
}

/**
 * The usage report: answers with tokens per day (in the filter's `tz`, default UTC; event time)
 * and model within the range (widened to whole hours; `since` starts it there at the latest),
 * oldest day first, models in byte order with none first. The database sums each day's rows,
 * reading an index range per day (CROSS JOIN: SQLite keeps the days as the outer loop): of the
 * hours table for a day that starts at a UTC midnight, else of this summary, counting the day's
 * distinct conversations. The answer holds a line per day and model.
 */
export async function usageReport(
  d: Dialect,
  exec: Exec,
  filter: {
    bot?: string | undefined
    bots?: readonly string[] | undefined
    from?: number | undefined
    to?: number | null | undefined
    tz?: string | undefined
    since?: number | undefined
  },
): Promise<UsageLine[]> {
  const tz = filter.tz ?? 'UTC'
  const r = hourRange({ from: Math.max(filter.from ?? 0, filter.since ?? 0), to: filter.to })
  const t = d.table(USAGE.name)
  const h = d.table(USAGE_HOURS.name)
  let { from } = r
  let to = r.to
  if (from === 0 || to === null) {
    // An open side ends at the summary's first or last hour (one index probe each).
    const [edge] = await exec({
      sql: `SELECT (SELECT min(hour) FROM ${h}) AS lo, (SELECT max(hour) FROM ${h}) AS hi`,
      params: [],
    })
    if (edge?.lo === null || edge?.lo === undefined) return []
    // Nothing is stored before the first hour: the first day starts whole (read by hour in UTC).
    if (from === 0) from = dayStart(tz, num(edge.lo))
    if (to === null) to = num(edge.hi) + HOUR_MS
  }
  if (to <= from) return []
  const days = daysOf(tz, from, to).map(([lo, hi]) => [Math.max(lo, from), Math.min(hi, to as number)] as const)
  const params: unknown[] = []
  const buckets = (list: ReadonlyArray<readonly [number, number]>) => {
    if (d.name === 'postgres') {
      params.push(
        list.map((x) => x[0]),
        list.map((x) => x[1]),
      )
      return 'unnest(?::bigint[], ?::bigint[]) AS b (lo, hi)'
    }
    params.push(JSON.stringify(list))
    return "(SELECT json_extract(value, '$[0]') AS lo, json_extract(value, '$[1]') AS hi FROM json_each(?)) b"
  }
  // A day that starts at a UTC midnight reads the hours table (rows per hour and model); any other
  // counts its conversations from the per-thread rows of that day.
  const byHour = days.filter(([lo, hi]) => readsHours(lo, hi))
  const byThread = days.filter(([lo, hi]) => !readsHours(lo, hi))
  const parts: string[] = []
  if (byHour.length > 0) {
    const b = buckets(byHour)
    parts.push(`SELECT b.lo, h.model, sum(h.conversations) AS conversations, sum(h.messages) AS messages,
        sum(h.input_tokens) AS input_tokens, sum(h.output_tokens) AS output_tokens
      FROM ${b} CROSS JOIN ${h} h
      WHERE h.hour >= b.lo AND h.hour < b.hi${scopeSql(d, filter, params, 'h.bot')}
      GROUP BY b.lo, h.model HAVING sum(h.messages) > 0`)
  }
  if (byThread.length > 0) {
    const b = buckets(byThread)
    parts.push(`SELECT lo, model, count(*) AS conversations, sum(m) AS messages, sum(i) AS input_tokens, sum(o) AS output_tokens
      FROM (SELECT b.lo, u.model, u.bot, u.thread, sum(u.messages) AS m, sum(u.input_tokens) AS i, sum(u.output_tokens) AS o
        FROM ${b} CROSS JOIN ${t} u
        WHERE u.hour >= b.lo AND u.hour < b.hi${scopeSql(d, filter, params, 'u.bot')}
        GROUP BY b.lo, u.model, u.bot, u.thread HAVING sum(u.messages) > 0) x
      GROUP BY lo, model`)
  }
  if (parts.length === 0) return []
  const rows = await exec({
    sql: `SELECT * FROM (${parts.join('\n      UNION ALL ')}) lines ORDER BY lo, model`,
    params,
  })
  // The local day a row's first hour falls in names it (a day cut by the range keeps its name).
  return rows.map((row) => ({
    day: dayName(tz, dayStart(tz, num(row.lo))),
    model: row.model === null || row.model === '' ? null : String(row.model),
    messages: num(row.messages),
    conversations: num(row.conversations),
    inputTokens: num(row.input_tokens),
    outputTokens: num(row.output_tokens),
  }))
}
