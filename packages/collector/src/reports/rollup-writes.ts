/**
 * Keeping the summary tables right, written once for both databases as generators of statements:
 * each `yield` is a statement the store runs (SQLite synchronously inside its transaction,
 * PostgreSQL on the transaction's client) and the rows it answers come back in. So the same code
 * maintains the summaries at ingest, takes an erased or expired record's share back out, and
 * rebuilds them all when an existing database is upgraded.
 */
import { latestInBatch } from './batch-lookback'
import type { Dialect, Query, Row } from './dialect'
import { DAY_MS, floorHour, floorSql, HOUR_MS } from './range'
import {
  addDeltas,
  addKept,
  addRow,
  type Deltas,
  type Late,
  notHandledRow,
  type RollupMessage,
  SUMMED,
} from './rollup-delta'
import {
  CONVERSATIONS,
  deleteKeysQueries,
  dropEmptyQueries,
  EVENT_DAYS,
  EVENTS,
  INTENT_DAYS,
  INTENTS,
  NOT_HANDLED,
  ROLLUPS,
  type RollupRow,
  USERS,
  upsertQueries,
} from './rollup-tables'

/** Statements to run; each answers its rows. */
export type Steps<T = void> = Generator<Query, T, Row[]>

/** The messages columns a {@link RollupMessage} is read from. */
export const ROLLUP_COLUMNS =
  'id, bot, platform, direction, user_id, thread, text, intent, confidence, user_json, event_type, event_key, amount, ts, nh'

/** A messages row (of {@link ROLLUP_COLUMNS}) as the summaries see it. */
export function rollupMessage(r: Row): RollupMessage {
  return {
    id: Number(r.id),
    bot: String(r.bot),
    platform: String(r.platform),
    direction: String(r.direction),
    userId: String(r.user_id),
    thread: String(r.thread),
    text: r.text === null || r.text === undefined ? null : String(r.text),
    intent: r.intent === null || r.intent === undefined ? null : String(r.intent),
    confidence: r.confidence === null || r.confidence === undefined ? null : Number(r.confidence),
    userJson: r.user_json === null || r.user_json === undefined ? null : String(r.user_json),
    eventType: r.event_type === null || r.event_type === undefined ? null : String(r.event_type),
    eventKey: r.event_key === null || r.event_key === undefined ? null : String(r.event_key),
    amount: r.amount === null || r.amount === undefined ? null : Number(r.amount),
    ts: Number(r.ts),
    nh: Number(r.nh) === 1,
  }
}

/**
 * Merges changes into their tables, always in the same table order (with key order inside):
 * concurrent writers lock alike. The tables `late` takes are left to it (written at the end).
 */
function* upsertAll(d: Dialect, deltas: Deltas, late?: Late): Steps {
  for (const spec of ROLLUPS) {
    const rows = deltas.get(spec)
    if (!rows) continue
    if (late?.takes(spec)) for (const row of rows.values()) addRow(late.deltas, spec, row)
    else for (const q of upsertQueries(d, spec, [...rows.values()])) yield q
  }
}

/**
 * After a batch's messages are stored (incoming NotHandled ones with `nh` = 1): marks the input
 * each outgoing NotHandled reply answered (the thread's latest incoming message stored before
 * it: what the bot had received when it replied, whatever the event times say) — once: `nh = 0` in the UPDATE makes a second marking a no-op, even
 * from another collector at the same time — then merges the batch's changes into every summary.
 * Returns the changes merged.
 */
export function* ingestRollups(
  d: Dialect,
  fresh: readonly RollupMessage[],
  records: ReadonlyArray<{ bot: string; ts: number }>,
  late?: Late,
): Steps<Deltas> {
  const replies = fresh.filter((m) => m.direction === 'outgoing' && m.intent === 'NotHandled')
  const targets = new Set<number>()
  const messages = d.table('messages')
  if (replies.length > 0) {
    const lookback = (bot: string, thread: string, id: string) =>
      `SELECT i.id FROM ${messages} i WHERE i.bot = ${bot} AND i.thread = ${thread} AND i.direction = 'incoming'
         AND i.id < ${id} ORDER BY i.id DESC LIMIT 1`
    if (d.multiRow) {
      const rows = yield {
        sql: `SELECT t.id FROM unnest(?::text[], ?::text[], ?::bigint[]) AS o (bot, thread, id)
          CROSS JOIN LATERAL (${lookback('o.bot', 'o.thread', 'o.id')}) t`,
        params: [replies.map((m) => m.bot), replies.map((m) => m.thread), replies.map((m) => m.id)],
      }
      for (const r of rows) targets.add(Number(r.id))
    } else {
      const sql = lookback('?', '?', '?')
      for (const m of replies) {
        const input = latestInBatch(d, fresh, m, 'incoming')
        if (input) targets.add(input.id)
        else for (const r of yield { sql, params: [m.bot, m.thread, m.id] }) targets.add(Number(r.id))
      }
    }
  }
  const byId = new Map(fresh.map((m) => [m.id, m]))
  const deltas: Deltas = new Map()
  if (targets.size > 0) {
    const params: unknown[] = []
    const flagged = yield {
      sql: `UPDATE ${messages} SET nh = 1 WHERE ${d.inIds(
        'id',
        [...targets].sort((a, b) => a - b),
        params,
      )} AND nh = 0
        RETURNING ${ROLLUP_COLUMNS}`,
      params,
    }
    for (const r of flagged) {
      const stored = byId.get(Number(r.id))
      if (stored) stored.nh = true
      else addKept(deltas, { ...rollupMessage(r), nh: true }, false)
    }
  }
  addDeltas(deltas, fresh, records)
  yield* upsertAll(d, deltas, late)
  // The changes, for the summaries derived from them (read-summaries.ts).
  return deltas
}

/**
 * After records were deleted (erasure, retention): takes their share out of the summaries.
 * Summed tables get the negative changes (rows reaching 0 are deleted); the tables that keep a
 * latest or first value (NotHandled inputs, users, conversations) have the touched rows derived
 * again from the messages that remain.
 */
export function* takeBack(
  d: Dialect,
  doomed: readonly RollupMessage[],
  records: ReadonlyArray<{ bot: string; ts: number }>,
  late?: Late,
): Steps {
  const negative = addDeltas(new Map(), doomed, records, -1)
  for (const spec of SUMMED) {
    const rows = [...(negative.get(spec)?.values() ?? [])]
    if (late?.takes(spec)) {
      for (const row of rows) addRow(late.deltas, spec, row)
      continue
    }
    for (const q of upsertQueries(d, spec, rows)) yield q
    for (const q of dropEmptyQueries(d, spec, rows)) yield q
  }
  const messages = d.table('messages')
  const again: Deltas = new Map()

  // NotHandled rows of each touched (bot, user, hour), from that hour's remaining inputs.
  const nhKeys = new Map<string, { bot: string; user: string; hour: number }>()
  for (const m of doomed)
    if (m.nh) {
      const hour = floorHour(m.ts)
      nhKeys.set(`${m.bot}\u0000${m.userId}\u0000${hour}`, { bot: m.bot, user: m.userId, hour })
    }
  for (const k of nhKeys.values()) {
    yield {
      sql: `DELETE FROM ${d.table(NOT_HANDLED.name)} WHERE bot = ? AND user_id = ? AND hour = ?`,
      params: [k.bot, k.user, k.hour],
    }
    const rows = yield {
      sql: `SELECT ${ROLLUP_COLUMNS} FROM ${messages} WHERE bot = ? AND user_id = ? AND nh = 1 AND ts >= ? AND ts < ?`,
      params: [k.bot, k.user, k.hour, k.hour + HOUR_MS],
    }
    for (const r of rows) addRow(again, NOT_HANDLED, notHandledRow(rollupMessage(r)))
  }

  // Users: count, first and last seen, latest metadata, from what remains of them.
  const users = distinct(
    doomed.filter((m) => m.userId !== ''),
    (m) => ({ bot: m.bot, user_id: m.userId }),
  )
  for (const q of deleteKeysQueries(d, USERS, users)) yield q
  for (const u of users) {
    const [agg] = yield {
      sql: `SELECT count(*) AS n, min(ts) AS first_ts, max(ts) AS last_ts FROM ${messages} WHERE bot = ? AND user_id = ?`,
      params: [u.bot, u.user_id],
    }
    if (!agg || Number(agg.n) === 0) continue
    const [latest] = yield {
      sql: `SELECT id, ts, user_json FROM ${messages} WHERE bot = ? AND user_id = ? AND user_json IS NOT NULL
        ORDER BY ts DESC, id DESC LIMIT 1`,
      params: [u.bot, u.user_id],
    }
    addRow(again, USERS, {
      ...u,
      first_ts: Number(agg.first_ts),
      last_ts: Number(agg.last_ts),
      messages: Number(agg.n),
      user_json: latest ? String(latest.user_json) : null,
      json_ts: latest ? Number(latest.ts) : -1,
      json_id: latest ? Number(latest.id) : -1,
    })
  }

  // Conversations: the summary row of each touched thread, from its remaining messages.
  const threads = distinct(doomed, (m) => ({ bot: m.bot, thread: m.thread }))
  for (const q of deleteKeysQueries(d, CONVERSATIONS, threads)) yield q
  for (const t of threads) {
    const [agg] = yield {
      sql: `SELECT count(*) AS n, sum(nh) AS nh, min(ts) AS first_ts,
          max(CASE WHEN direction = 'incoming' THEN user_id END) AS in_user,
          max(platform) AS msg_platform
        FROM ${messages} WHERE bot = ? AND thread = ? AND direction <> 'event'`,
      params: [t.bot, t.thread],
    }
    if (!agg || Number(agg.n) === 0) continue
    const [last] = yield {
      sql: `SELECT id, ts, text, user_id, platform FROM ${messages} WHERE bot = ? AND thread = ? AND direction <> 'event'
        ORDER BY ts DESC, id DESC LIMIT 1`,
      params: [t.bot, t.thread],
    }
    addRow(again, CONVERSATIONS, {
      ...t,
      messages: Number(agg.n),
      not_handled: Number(agg.nh ?? 0),
      first_ts: Number(agg.first_ts),
      last_ts: Number(last?.ts),
      last_id: Number(last?.id),
      last_text: last?.text === null || last?.text === undefined ? null : String(last.text),
      last_user: String(last?.user_id ?? ''),
      last_platform: String(last?.platform ?? ''),
      in_user: agg.in_user === null || agg.in_user === undefined ? null : String(agg.in_user),
      msg_platform: agg.msg_platform === null || agg.msg_platform === undefined ? null : String(agg.msg_platform),
    })
  }
  yield* upsertAll(d, again, late)
}

function distinct<T extends RollupRow>(items: readonly RollupMessage[], key: (m: RollupMessage) => T): T[] {
  const out = new Map<string, T>()
  for (const m of items) {
    const k = key(m)
    out.set(Object.values(k).join('\u0000'), k)
  }
  return [...out.values()]
}

/** Messages and records read per step of a rebuild. */
const REBUILD_PAGE = 5_000

/**
 * Derives every summary from the stored messages (an existing database's upgrade): marks the
 * NotHandled inputs, empties the summaries, then reads messages and records in keyset pages.
 */
export function* rebuildRollups(d: Dialect): Steps {
  const messages = d.table('messages')
  // Incoming NotHandled messages, and each outgoing NotHandled reply's input.
  yield {
    sql: `UPDATE ${messages} SET nh = 1 WHERE nh = 0 AND ((intent = 'NotHandled' AND direction = 'incoming') OR id IN (
        SELECT (SELECT max(i.id) FROM ${messages} i WHERE i.bot = o.bot AND i.thread = o.thread AND i.direction = 'incoming'
                AND i.id < o.id)
        FROM ${messages} o WHERE o.intent = 'NotHandled' AND o.direction = 'outgoing'))`,
    params: [],
  }
  for (const spec of ROLLUPS) yield { sql: `DELETE FROM ${d.table(spec.name)}`, params: [] }
  for (let after = 0; ; ) {
    const rows = yield {
      sql: `SELECT id, bot, coalesce(event_ts, received_at) AS event_ts FROM ${d.table('records')} WHERE id > ? ORDER BY id LIMIT ${REBUILD_PAGE}`,
      params: [after],
    }
    if (rows.length === 0) break
    after = Number(rows[rows.length - 1]?.id)
    yield* upsertAll(
      d,
      addDeltas(
        new Map(),
        [],
        rows.map((r) => ({ bot: String(r.bot), ts: Number(r.event_ts) })),
      ),
    )
  }
  for (let after = 0; ; ) {
    const rows = yield {
      sql: `SELECT ${ROLLUP_COLUMNS} FROM ${messages} WHERE id > ? ORDER BY id LIMIT ${REBUILD_PAGE}`,
      params: [after],
    }
    if (rows.length === 0) break
    after = Number(rows[rows.length - 1]?.id)
    yield* upsertAll(d, addDeltas(new Map(), rows.map(rollupMessage)))
  }
}

/**
 * Derives the intents' and events' rows per UTC day from their hour rows (the migration that adds
 * them: PostgreSQL 30, SQLite step 25).
 */
export function* rebuildDayRollups(d: Dialect): Steps {
  const day = floorSql('hour', DAY_MS)
  for (const [days, hours, names, sums, live] of [
    [INTENT_DAYS, INTENTS, ['intent'], ['messages', 'incoming', 'outgoing', 'conf_sum', 'conf_n'], 'messages'],
    [EVENT_DAYS, EVENTS, ['type', 'name'], ['n', 'amount'], 'n'],
  ] as const) {
    yield { sql: `DELETE FROM ${d.table(days.name)}`, params: [] }
    yield {
      sql: `INSERT INTO ${d.table(days.name)} (bot, day, ${names.join(', ')}, ${sums.join(', ')})
        SELECT bot, ${day}, ${names.join(', ')}, ${sums.map((c) => `sum(${c})`).join(', ')}
        FROM ${d.table(hours.name)} GROUP BY bot, ${day}, ${names.join(', ')} HAVING sum(${live}) > 0`,
      params: [],
    }
  }
}

/** Runs statement generators synchronously (SQLite): `run` answers a statement's rows. */
export function runSteps<T>(steps: Steps<T>, run: (q: Query) => Row[]): T {
  let next = steps.next()
  while (!next.done) next = steps.next(run(next.value))
  return next.value
}

/** Runs statement generators on an asynchronous connection (PostgreSQL). */
export async function runStepsAsync<T>(steps: Steps<T>, run: (q: Query) => Promise<Row[]>): Promise<T> {
  let next = steps.next()
  while (!next.done) next = steps.next(await run(next.value))
  return next.value
}
