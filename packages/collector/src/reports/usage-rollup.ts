/**
 * The LLM usage summary: tokens per bot × hour (event time) × model × conversation, kept like the
 * other summaries — merged at ingest in the insert's transaction, its share taken back on erasure
 * and retention, derived from the stored records by its migration — so `GET /api/reports/usage`
 * reads a range of hours, never the records. Tokens live in an answer's `platformJson.usage`
 * (written by `POST /v1/traces`): they are read from the raw record once, when it is stored.
 * The conversation is in the key so the report's `conversations` is exact over any range.
 */
import type { UsageLine } from '../store/store'
import type { Dialect } from './dialect'
import { scopeSql } from './message-queries'
import { dayStart, floorHour, hourRange, tzOffset } from './range'
import type { Exec, Row } from './report-queries'
import { addRow, type Deltas, type RollupMessage } from './rollup-delta'
import { dropEmptyQueries, type RollupRow, type RollupSpec, rollupDdl, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'

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

/** An answer's tokens, as its record carries them. */
export interface LlmUsage {
  /** '' when the record names no model. */
  model: string
  inputTokens: number
  outputTokens: number
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The tokens of an outgoing record: `platformJson.usage.inputTokens` a finite number (else none),
 * `outputTokens` (0 when not a number), `platformJson.model` when a string. Records without
 * `"usage"` in their text are not parsed.
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
  if (!isObj(u) || typeof u.inputTokens !== 'number' || !Number.isFinite(u.inputTokens)) return null
  const out = typeof u.outputTokens === 'number' && Number.isFinite(u.outputTokens) ? u.outputTokens : 0
  // PostgreSQL text holds no U+0000: both stores keep the same spelling.
  const model = isObj(pj) && typeof pj.model === 'string' ? pj.model.replaceAll('\0', '\uFFFD') : ''
  return { model, inputTokens: u.inputTokens, outputTokens: out }
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

/** Merges changes into the summary; rows whose answers reached 0 are deleted. */
export function* writeUsage(d: Dialect, rows: readonly RollupRow[]): Steps {
  const list = merged(rows)
  for (const q of upsertQueries(d, USAGE, list)) yield q
  if (list.some((r) => (r.messages as number) < 0)) for (const q of dropEmptyQueries(d, USAGE, list)) yield q
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
    if (rows.length > 0) yield* writeUsage(d, rows)
  }
}

/** CREATE TABLE / INDEX of the usage summary. */
export const usageDdl = (d: Dialect): string => rollupDdl(d, [USAGE])

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** `YYYY-MM-DD` of a local day's start in `tz`. */
const dayName = (tz: string, start: number) => new Date(start + tzOffset(tz, start)).toISOString().slice(0, 10)

/**
 * The usage report: answers with tokens per day (in the filter's `tz`, default UTC; event time)
 * and model within the range (widened to whole hours; `since` starts it there at the latest),
 * oldest day first, models in byte order with none first. Reads the summary's rows of the range.
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
  const params: unknown[] = []
  let where = scopeSql(d, filter, params)
  const r = hourRange({ from: Math.max(filter.from ?? 0, filter.since ?? 0), to: filter.to })
  if (r.from > 0) {
    where += ' AND hour >= ?'
    params.push(r.from)
  }
  if (r.to !== null) {
    where += ' AND hour < ?'
    params.push(r.to)
  }
  const rows = await exec({
    sql: `SELECT bot, hour, model, thread, messages, input_tokens, output_tokens
      FROM ${d.table(USAGE.name)} WHERE messages > 0${where}`,
    params,
  })
  const tz = filter.tz ?? 'UTC'
  const lines = new Map<string, UsageLine & { start: number; threads: Set<string> }>()
  const starts = new Map<number, number>()
  for (const row of rows) {
    const hour = num(row.hour)
    let start = starts.get(hour)
    if (start === undefined) {
      start = dayStart(tz, hour)
      starts.set(hour, start)
    }
    const model = row.model === null || row.model === '' ? null : String(row.model)
    const k = `${start}\u0000${model ?? ''}`
    let line = lines.get(k)
    if (!line) {
      line = {
        day: dayName(tz, start),
        model,
        messages: 0,
        conversations: 0,
        inputTokens: 0,
        outputTokens: 0,
        start,
        threads: new Set(),
      }
      lines.set(k, line)
    }
    line.messages += num(row.messages)
    line.inputTokens += num(row.input_tokens)
    line.outputTokens += num(row.output_tokens)
    line.threads.add(`${String(row.bot)}\u0000${String(row.thread)}`)
  }
  return [...lines.values()]
    .sort(
      (a, b) =>
        a.start - b.start || ((a.model ?? '') < (b.model ?? '') ? -1 : (a.model ?? '') > (b.model ?? '') ? 1 : 0),
    )
    .map(({ start: _, threads, ...l }) => ({ ...l, conversations: threads.size }))
}
