/**
 * Conversations per bot × hour of their start (the thread's first message, event time): the
 * overview's `conversations` sums the range's hours instead of reading one summary row per
 * conversation. Kept from `conversation_summaries.first_ts` in the writer's transaction, after
 * that table's upsert (or, when records go, after its rows were derived again) has locked the
 * touched threads' rows, so two writers of one thread take turns and each sees the other's start:
 * a new thread adds +1 at its first hour; a message older than the thread's first moves the start
 * (−1 at the old hour, +1 at the new); erasure and retention move it to the first remaining
 * message, or take it away with the thread's last message.
 */
import type { Dialect } from './dialect'
import { floorHour, floorSql, HOUR_MS } from './range'
import type { Row } from './report-queries'
import { addRow, type Deltas, type Late, type RollupMessage } from './rollup-delta'
import { CONVERSATIONS, type RollupSpec, rollupDdl } from './rollup-tables'
import type { Steps } from './rollup-writes'

/** Conversations (threads with a message) per bot × hour of their first message. */
export const CONVERSATION_STARTS: RollupSpec = {
  name: 'rollup_conversation_starts',
  columns: { bot: 'text', hour: 'int', conversations: 'int' },
  keys: ['bot', 'hour'],
  sums: ['conversations'],
  live: ['conversations'],
  indexes: [['hour']],
}

/** CREATE TABLE / INDEX of the summary. */
export const conversationStartsDdl = (d: Dialect): string => rollupDdl(d, [CONVERSATION_STARTS])

const sep = '\u0000'

function move(late: Late, bot: string, from: number | null, to: number | null): void {
  const a = from === null ? null : floorHour(from)
  const b = to === null ? null : floorHour(to)
  if (a === b) return
  const add = (deltas: Deltas, hour: number, n: number) =>
    addRow(deltas, CONVERSATION_STARTS, { bot, hour, conversations: n })
  if (a !== null) add(late.deltas, a, -1)
  if (b !== null) add(late.deltas, b, 1)
}

/** The touched threads' summary rows (first message, messages counted), read after this transaction locked them. */
function* summaryRows(d: Dialect, keys: ReadonlyArray<[string, string]>): Steps<Map<string, Row>> {
  const t = d.table(CONVERSATIONS.name)
  const sorted = [...keys].sort((x, y) => (x[0] + sep + x[1] < y[0] + sep + y[1] ? -1 : 1))
  const rows =
    d.name === 'postgres'
      ? yield {
          sql: `SELECT c.bot, c.thread, c.first_ts, c.messages FROM unnest(?::text[], ?::text[]) AS k (bot, thread)
            JOIN ${t} c ON c.bot = k.bot AND c.thread = k.thread`,
          params: [sorted.map((k) => k[0]), sorted.map((k) => k[1])],
        }
      : yield {
          sql: `SELECT c.bot, c.thread, c.first_ts, c.messages FROM json_each(?) k
            JOIN ${t} c ON c.bot = json_extract(k.value, '$[0]') AND c.thread = json_extract(k.value, '$[1]')`,
          params: [JSON.stringify(sorted)],
        }
  return new Map(rows.map((r) => [String(r.bot) + sep + String(r.thread), r]))
}

const started = (row: Row | undefined): number | null => (row && Number(row.messages) > 0 ? Number(row.first_ts) : null)

/**
 * At ingest, after the conversations' upsert (`changes`: the batch's changes, merged by key;
 * `fresh`: its messages): each touched thread's start, before and after the batch. Before is
 * known from the merged row unless the batch holds the thread's first message and the thread was
 * there already — then it is the thread's first message outside the batch (one index probe).
 */
export function* countStarts(d: Dialect, changes: Deltas, fresh: readonly RollupMessage[], late: Late): Steps {
  // Rows with no counted message (an old input a reply marked) were counted when they came.
  const touched = [...(changes.get(CONVERSATIONS)?.values() ?? [])].filter((r) => (r.messages as number) > 0)
  if (touched.length === 0) return
  const now = yield* summaryRows(
    d,
    touched.map((r) => [r.bot as string, r.thread as string]),
  )
  // Each thread's messages in the batch, left out of its first message before the batch.
  const ids = new Map<string, number[]>()
  for (const m of fresh) {
    const k = m.bot + sep + m.thread
    const list = ids.get(k)
    if (list) list.push(m.id)
    else ids.set(k, [m.id])
  }
  for (const r of touched) {
    const bot = r.bot as string
    const thread = r.thread as string
    const row = now.get(bot + sep + thread)
    const after = started(row)
    const earlier = Number(row?.messages ?? 0) - (r.messages as number) > 0
    if (!earlier) {
      move(late, bot, null, after)
      continue
    }
    // The thread's first message is not in the batch: the start stays.
    if (after === null || after < (r.first_ts as number)) continue
    const params: unknown[] = [bot, thread, after]
    const [before] = yield {
      sql: `SELECT ts FROM ${d.table('messages')}
        WHERE bot = ? AND thread = ? AND ts >= ? AND direction <> 'event' AND NOT (${d.inIds('id', ids.get(bot + sep + thread) ?? [], params)})
        ORDER BY ts LIMIT 1`,
      params,
    }
    move(late, bot, before ? Number(before.ts) : null, after)
  }
}

/**
 * When records went (erasure, retention), after the touched threads' summary rows were derived
 * again from what remains: a thread's start was its first message among what remains and what
 * went; it is now its first remaining one, or none.
 */
export function* takeBackStarts(d: Dialect, doomed: readonly RollupMessage[], late: Late): Steps {
  const gone = new Map<string, { bot: string; thread: string; ts: number }>()
  for (const m of doomed) {
    if (m.direction === 'event') continue
    const k = m.bot + sep + m.thread
    const had = gone.get(k)
    if (!had || m.ts < had.ts) gone.set(k, { bot: m.bot, thread: m.thread, ts: m.ts })
  }
  if (gone.size === 0) return
  const now = yield* summaryRows(
    d,
    [...gone.values()].map((g) => [g.bot, g.thread]),
  )
  for (const [k, g] of gone) {
    const after = started(now.get(k))
    move(late, g.bot, after === null ? g.ts : Math.min(g.ts, after), after)
  }
}

/** Derives the summary from the conversations' rows (the migration that adds it). */
export function* rebuildConversationStarts(d: Dialect): Steps {
  const hour = floorSql('first_ts', HOUR_MS)
  yield { sql: `DELETE FROM ${d.table(CONVERSATION_STARTS.name)}`, params: [] }
  yield {
    sql: `INSERT INTO ${d.table(CONVERSATION_STARTS.name)} (bot, hour, conversations)
      SELECT bot, ${hour}, count(*) FROM ${d.table(CONVERSATIONS.name)} WHERE messages > 0 GROUP BY bot, ${hour}`,
    params: [],
  }
}
