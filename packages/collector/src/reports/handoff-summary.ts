/**
 * Handoffs per hour: the overview's count of sessions in which an operator paused the bot, sent an
 * operator message or claimed the conversation ({@link HANDOFF_ACTIONS}), summed by the hour each
 * session started in — one row per bot × hour, as `rollup_sessions`, whatever the number of
 * operator actions. The overview joined the range's audit rows to their threads and the users'
 * sessions at every count: 6.6 s at 10 M records with one session in ten handed off (1.5 M
 * operator actions).
 *
 * Kept exact in the transactions that change either side:
 * - an operator action (`addAudit`) is resolved to its thread's user — the thread's incoming user,
 *   or for a thread the user has not written to yet, the user of its latest message — and kept as
 *   a mark ({@link HANDOFF_MARKS}: bot × user × time); each of that user's sessions that covers it
 *   (start ≤ mark ≤ end + the session gap) and was not handed off yet is marked (`sessions.handoff`)
 *   and counted +1 at its start hour. An action on a thread with no message yet belongs to no user
 *   and counts nowhere (an operator acts on a conversation the dashboard shows).
 * - every session write (ingest, erasure, retention; analytics-writes.ts `writeSessions`): a
 *   session that goes takes its −1 if it was marked; a session written looks for a mark of its user
 *   in [start, end + gap] (one index probe) and counts +1 if it finds one. A pause stored before the
 *   messages of the session it falls in (an import, a late batch) is counted when they come.
 * On PostgreSQL both hold the user's lock (the one sessions take), so two collectors take turns.
 */
import { SESSION_HOURS, SESSIONS } from './analytics-tables'
import type { Dialect } from './dialect'
import { floorHour, floorSql, HOUR_MS } from './range'
import type { Row } from './report-queries'
import { addRow, type Deltas } from './rollup-delta'
import { type RollupSpec, rollupDdl, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'

/** Audit actions that make a session a handoff. */
export const HANDOFF_ACTIONS: readonly string[] = ['pause', 'operator-message', 'claim']

/** Operator actions resolved to their thread's user: bot × user × time, how many. */
export const HANDOFF_MARKS: RollupSpec = {
  name: 'handoff_marks',
  columns: { bot: 'text', user_id: 'text', ts: 'int', n: 'int' },
  keys: ['bot', 'user_id', 'ts'],
  withoutRowid: true,
  sums: ['n'],
}

/** Sessions handed off per bot × hour of their start (signed changes as sessions grow, join and go): `rollup_sessions`' shape. */
export const HANDOFF_HOURS: RollupSpec = { ...SESSION_HOURS, name: 'rollup_handoffs' }

/** CREATE TABLE / INDEX of the marks and the hours (the `sessions.handoff` column is the migration's). */
export const handoffDdl = (d: Dialect): string => rollupDdl(d, [HANDOFF_MARKS, HANDOFF_HOURS])

/** A session as the handoff count sees it. */
export interface HandoffSession {
  bot: string
  userId: string
  start: number
  end: number
  handoff?: boolean
}

/** Adds ±1 handed-off session at its start hour. */
export function countHandoff(deltas: Deltas, s: HandoffSession, sign: 1 | -1): void {
  addRow(deltas, HANDOFF_HOURS, { bot: s.bot, hour: floorHour(s.start), sessions: sign })
}

/**
 * Sets `handoff` on each of these sessions: whether a mark of its user lies in [start, end + gap]
 * (PostgreSQL: one statement for all; SQLite: one index probe each).
 */
export function* findHandoffs(d: Dialect, sessions: HandoffSession[], gapMs: number): Steps {
  if (sessions.length === 0) return
  const marks = d.table(HANDOFF_MARKS.name)
  if (d.multiRow) {
    const rows: Row[] = yield {
      sql: `SELECT g.i FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::int[]) AS g (bot, user_id, lo, hi, i)
        WHERE EXISTS (SELECT 1 FROM ${marks} h WHERE h.bot = g.bot AND h.user_id = g.user_id AND h.ts >= g.lo AND h.ts <= g.hi)`,
      params: [
        sessions.map((s) => s.bot),
        sessions.map((s) => s.userId),
        sessions.map((s) => s.start),
        sessions.map((s) => s.end + gapMs),
        sessions.map((_, i) => i),
      ],
    }
    for (const s of sessions) s.handoff = false
    for (const r of rows) (sessions[Number(r.i)] as HandoffSession).handoff = true
    return
  }
  for (const s of sessions) {
    const found: Row[] = yield {
      sql: `SELECT 1 AS found FROM ${marks} WHERE bot = ? AND user_id = ? AND ts >= ? AND ts <= ? LIMIT 1`,
      params: [s.bot, s.userId, s.start, s.end + gapMs],
    }
    s.handoff = found.length > 0
  }
}

/**
 * After an audit entry is stored, in its transaction: when it is an operator's handoff action on
 * a thread, its mark, and the user's sessions that cover it marked and counted (the hour rows
 * written here). `lock` takes the user's lock (analytics-writes.ts `lockUsers`) before the mark is
 * written or any session read.
 */
export function* markHandoff(
  d: Dialect,
  entry: { ts: number; action: string; bot: string | null; target: string | null },
  gapMs: number,
  lock: (key: string) => Steps,
): Steps {
  if (!HANDOFF_ACTIONS.includes(entry.action) || entry.bot === null || entry.target === null) return
  const [thread]: Row[] = yield {
    sql: `SELECT in_user, last_user FROM ${d.table('conversation_summaries')} WHERE bot = ? AND thread = ?`,
    params: [entry.bot, entry.target],
  }
  const user = thread?.in_user ?? thread?.last_user
  if (user === null || user === undefined || user === '') return
  const userId = String(user)
  yield* lock(`${entry.bot}\u0000${userId}`)
  for (const q of upsertQueries(d, HANDOFF_MARKS, [{ bot: entry.bot, user_id: userId, ts: entry.ts, n: 1 }])) yield q
  const sessions = d.table(SESSIONS.name)
  // The user's sessions by the key (`+ 0`: SQLite would walk the bot's sessions by start instead).
  const covering: Row[] = yield {
    sql: `SELECT sid, start_ts, end_ts FROM ${sessions}
      WHERE bot = ? AND user_id = ? AND start_ts + 0 <= ? AND end_ts >= ? AND coalesce(handoff, 0) = 0`,
    params: [entry.bot, userId, entry.ts, entry.ts - gapMs],
  }
  if (covering.length === 0) return
  const deltas: Deltas = new Map()
  for (const r of covering) {
    yield {
      sql: `UPDATE ${sessions} SET handoff = 1 WHERE bot = ? AND user_id = ? AND sid = ? AND start_ts = ?`,
      params: [entry.bot, userId, r.sid, r.start_ts],
    }
    countHandoff(deltas, { bot: entry.bot, userId, start: Number(r.start_ts), end: Number(r.end_ts) }, 1)
  }
  for (const q of upsertQueries(d, HANDOFF_HOURS, [...(deltas.get(HANDOFF_HOURS)?.values() ?? [])])) yield q
}

/** An erased user's marks (their sessions went with their messages). */
export function* eraseHandoffMarks(d: Dialect, bot: string, userId: string): Steps {
  yield { sql: `DELETE FROM ${d.table(HANDOFF_MARKS.name)} WHERE bot = ? AND user_id = ?`, params: [bot, userId] }
}

/**
 * Derives the marks from the audit log, the sessions' `handoff` and the hours from the marks (the
 * migration that adds them; the scale bench's seed). `gapMs`: the session gap the sessions were
 * joined with.
 */
export function* rebuildHandoffs(d: Dialect, gapMs: number): Steps {
  const marks = d.table(HANDOFF_MARKS.name)
  const sessions = d.table(SESSIONS.name)
  const params: unknown[] = []
  const actions = d.inList('a.action', HANDOFF_ACTIONS, params)
  yield { sql: `DELETE FROM ${marks}`, params: [] }
  // Each action's thread looked up by its key (a join let SQLite walk every action of the bot per conversation).
  yield {
    sql: `INSERT INTO ${marks} (bot, user_id, ts, n)
      SELECT bot, user_id, ts, count(*) FROM (
        SELECT a.bot, a.ts, (SELECT coalesce(c.in_user, c.last_user) FROM ${d.table('conversation_summaries')} c
          WHERE c.bot = a.bot AND c.thread = a.target) AS user_id
        FROM ${d.table('audit')} a WHERE ${actions} AND a.bot IS NOT NULL AND a.target IS NOT NULL) x
      WHERE user_id IS NOT NULL AND user_id <> ''
      GROUP BY bot, user_id, ts`,
    params,
  }
  yield { sql: `UPDATE ${sessions} SET handoff = 0 WHERE handoff IS NULL OR handoff <> 0`, params: [] }
  yield {
    sql: `UPDATE ${sessions} SET handoff = 1 WHERE (bot, user_id, sid, start_ts) IN (
        SELECT s.bot, s.user_id, s.sid, s.start_ts FROM ${marks} h
          JOIN ${sessions} s ON s.bot = h.bot AND s.user_id = h.user_id AND s.start_ts <= h.ts AND s.end_ts >= h.ts - ?)`,
    params: [gapMs],
  }
  yield { sql: `DELETE FROM ${d.table(HANDOFF_HOURS.name)}`, params: [] }
  yield {
    sql: `INSERT INTO ${d.table(HANDOFF_HOURS.name)} (bot, hour, sessions)
      SELECT bot, ${floorSql('start_ts', HOUR_MS)}, count(*) FROM ${sessions} WHERE handoff = 1
      GROUP BY bot, ${floorSql('start_ts', HOUR_MS)}`,
    params: [],
  }
}
