/**
 * Keeping the analytics summaries right (sessions, sessions per hour, feedback, users per hour),
 * written once for both databases as statement generators like rollup-writes.ts: run at ingest
 * in the insert's transaction, after an erasure or a retention step, and by the migration that
 * derives them from stored messages.
 */
import {
  ANALYTICS_ROLLUPS,
  FEEDBACK,
  FEEDBACK_DAYS,
  FEEDBACK_HOURS,
  SESSION_HOURS,
  SESSIONS,
  USER_HOURS,
  USER_STEPS,
} from './analytics-tables'
import { latestInBatch } from './batch-lookback'
import type { Dialect } from './dialect'
import { FEEDBACK_EVENT, feedbackScore } from './feedback-score'
import { addSpans, rebuildSpans, recountSpans, STEP_SPANS, spanUpserts } from './funnel-spans'
import { countHandoff, findHandoffs, HANDOFF_HOURS } from './handoff-summary'
import { countPaths, flushPaths, PATH_PREFIXES } from './path-prefixes'
import { DAY_MS, floorDay, floorHour, floorSql, HOUR_MS } from './range'
import type { Row } from './report-queries'
import { applyRetention, DEFAULT_RETENTION_ZONES, takeBackRetention, ZONE_LIST_LOCK } from './retention-cohorts'
import { addRow, type Deltas, type Late, type RollupMessage } from './rollup-delta'
import { deleteKeysQueries, dropEmptyQueries, type RollupRow, upsertQueries } from './rollup-tables'
import { rollupMessage, type Steps } from './rollup-writes'
import { joinSessions, type Session, type SessionPoint } from './sessions'

/** Session gap unless the collector's `sessionGapMinutes` says otherwise: 30 minutes. */
export const DEFAULT_SESSION_GAP_MS = 30 * 60_000

const sep = '\u0000'
const isFeedback = (m: RollupMessage) => m.eventType === 'customEvent' && m.eventKey === FEEDBACK_EVENT

function sessionOf(r: Row): Session {
  let intents: Array<[number, string]> = []
  try {
    intents = JSON.parse(String(r.intents ?? '[]'))
  } catch {
    intents = []
  }
  return {
    bot: String(r.bot),
    userId: String(r.user_id),
    sid: String(r.sid),
    start: Number(r.start_ts),
    end: Number(r.end_ts),
    messages: Number(r.messages),
    incoming: Number(r.incoming),
    intents,
    handoff: Number(r.handoff ?? 0) === 1,
  }
}

const sessionRow = (s: Session): RollupRow => ({
  bot: s.bot,
  user_id: s.userId,
  sid: s.sid,
  start_ts: s.start,
  end_ts: s.end,
  messages: s.messages,
  incoming: s.incoming,
  intents: JSON.stringify(s.intents),
  handoff: s.handoff === true ? 1 : 0,
})

const point = (m: { ts: number; direction: string; intent: string | null }): SessionPoint => ({
  ts: m.ts,
  incoming: m.direction === 'incoming',
  intent: m.direction === 'incoming' ? m.intent : null,
})

/** Serialises writers of the same users' sessions and read summaries (PostgreSQL: two collectors on one database); keys are `bot` U+0000 `user`. */
export function* lockUsers(d: Dialect, keys: readonly string[]): Steps {
  if (d.name !== 'postgres' || keys.length === 0) return
  // In key order: writers lock in the same order (no deadlock).
  yield {
    // The zone list's lock first (shared, a one-time filter): see ZONE_LIST_LOCK.
    sql: `SELECT count(pg_advisory_xact_lock(hashtextextended(k, 28))) AS n FROM unnest(?::text[]) AS k
      WHERE (SELECT count(pg_advisory_xact_lock_shared(?::bigint))) = 1`,
    // PostgreSQL text holds no U+0000: the key's separator becomes U+001F.
    params: [keys.map((k) => k.replaceAll(sep, '\u001f')).sort(), ZONE_LIST_LOCK],
  }
}

/** The funnel step a message is (an incoming message's intent, an event's name), or null. */
export function stepOf(m: {
  direction: string
  intent: string | null
  eventType: string | null
  eventKey: string | null
}): { kind: string; name: string } | null {
  if (m.direction === 'incoming' && m.intent !== null) return { kind: 'intent', name: m.intent }
  if (m.eventType !== null && m.eventKey !== null) return { kind: 'event', name: m.eventKey }
  return null
}

/** The columns a step is read from. */
const STEP_COLUMNS = 'id, bot, user_id, direction, intent, event_type, event_key, ts'

/** A messages row of {@link STEP_COLUMNS} as a message the steps see (the other fields empty). */
const stepMessage = (r: Row): RollupMessage =>
  rollupMessage({ ...r, platform: '', thread: '', text: null, confidence: null, user_json: null, amount: null, nh: 0 })

function addStep(deltas: Deltas, m: RollupMessage): void {
  const step = stepOf(m)
  if (!step || m.userId === '') return
  addRow(deltas, USER_STEPS, {
    bot: m.bot,
    hour: floorHour(m.ts),
    ...step,
    user_id: m.userId,
    n: 1,
    first_ts: m.ts,
    last_ts: m.ts,
  })
}

/**
 * The summaries later migrations added (funnel steps, path prefixes, retention cohorts of
 * `zones`), or false while the migration that derives the sessions runs before they exist.
 */
export type LaterSummaries = { zones: readonly string[] } | false

/** Adds ±1 session to its start hour. */
function countSession(deltas: Deltas, s: Session, sign: 1 | -1): void {
  addRow(deltas, SESSION_HOURS, { bot: s.bot, hour: floorHour(s.start), sessions: sign })
}

/**
 * Replaces `removed` by `added` and counts the change. `handoffGapMs`: the session gap, to look for
 * each written session's operator actions (handoff-summary.ts); null while the migration that
 * derives the sessions runs before the handoff marks exist (written not handed off; the marks'
 * migration derives them).
 */
function* writeSessions(
  d: Dialect,
  deltas: Deltas,
  removed: Session[],
  added: Session[],
  handoffGapMs: number | null,
): Steps {
  if (handoffGapMs !== null) yield* findHandoffs(d, added, handoffGapMs)
  for (const s of removed) if (s.handoff === true) countHandoff(deltas, s, -1)
  for (const s of added) if (s.handoff === true) countHandoff(deltas, s, 1)
  for (const s of removed) countSession(deltas, s, -1)
  for (const s of added) countSession(deltas, s, 1)
  for (const s of removed) countPaths(deltas, s, -1)
  for (const s of added) countPaths(deltas, s, 1)
  for (const q of deleteKeysQueries(d, SESSIONS, removed.map(sessionRow))) yield q
  for (const q of upsertQueries(d, SESSIONS, added.map(sessionRow))) yield q
}

/** Adds one feedback hour row's change to the totals by hour and by UTC day (every intent's, each intent's). */
function mirrorFeedbackRow(deltas: Deltas, r: RollupRow): void {
  const hour = Number(r.hour)
  addRow(deltas, FEEDBACK_HOURS, { bot: r.bot ?? null, hour, n: r.n ?? 0, score_sum: r.score_sum ?? 0 })
  addRow(deltas, FEEDBACK_DAYS, {
    bot: r.bot ?? null,
    day: floorDay(hour),
    intent: r.intent ?? '',
    n: r.n ?? 0,
    score_sum: r.score_sum ?? 0,
  })
}

/**
 * Upserts the changes in one fixed order of tables (users per hour, sessions per hour, feedback),
 * dropping rows whose count reached 0: every writer (ingest, erasure, retention) locks summary
 * rows in the same order, so two PostgreSQL transactions never wait on each other in a circle.
 * `spans`: the step spans follow the step rows (funnel-spans.ts; not before their migration).
 */
function* flush(d: Dialect, deltas: Deltas, late?: Late, spans = false): Steps {
  // The feedback rows' totals by hour and by day, from the same changes (written right after them).
  for (const r of deltas.get(FEEDBACK)?.values() ?? []) mirrorFeedbackRow(deltas, r)
  for (const spec of [
    USER_HOURS,
    SESSION_HOURS,
    HANDOFF_HOURS,
    FEEDBACK,
    FEEDBACK_HOURS,
    FEEDBACK_DAYS,
    USER_STEPS,
    STEP_SPANS,
    PATH_PREFIXES,
  ]) {
    if (spec === STEP_SPANS) {
      if (spans) {
        addSpans(deltas)
        yield* spanUpserts(d, deltas)
      }
      continue
    }
    if (spec === PATH_PREFIXES) {
      yield* flushPaths(d, deltas)
      continue
    }
    if (late?.takes(spec)) {
      for (const row of deltas.get(spec)?.values() ?? []) addRow(late.deltas, spec, row)
      continue
    }
    const list = [...(deltas.get(spec)?.values() ?? [])].filter(
      (r) => (spec !== SESSION_HOURS && spec !== HANDOFF_HOURS) || r.sessions !== 0,
    )
    for (const q of upsertQueries(d, spec, list)) yield q
    // Users per hour too: a user-hour all of whose messages went must not count as active.
    if (spec.live) for (const q of dropEmptyQueries(d, spec, list)) yield q
  }
}

/**
 * After a batch's messages are stored: joins them into their users' sessions, counts users per
 * hour, and rates each feedback event's answer (the thread's last outgoing message stored before
 * it) — its score and the rated intent are kept on the event's row, so taking it back is exact.
 */
export function* ingestAnalytics(
  d: Dialect,
  fresh: readonly RollupMessage[],
  gapMs: number,
  later: LaterSummaries = { zones: DEFAULT_RETENTION_ZONES },
  late?: Late,
  lockTheUsers = true,
): Steps {
  const withSteps = later !== false
  const deltas: Deltas = new Map()
  const groups = new Map<string, { bot: string; userId: string; sid: string; points: SessionPoint[] }>()
  for (const m of fresh) {
    if (m.userId === '') continue
    addRow(deltas, USER_HOURS, { bot: m.bot, hour: floorHour(m.ts), user_id: m.userId, messages: 1 })
    if (withSteps) addStep(deltas, m)
    // Sessions are made of what the user and the bot said; events (feedback, a purchase) are not.
    if (m.direction === 'event') continue
    const sid = m.sessionId ?? ''
    const k = [m.bot, m.userId, sid].join(sep)
    let g = groups.get(k)
    if (!g) {
      g = { bot: m.bot, userId: m.userId, sid, points: [] }
      groups.set(k, g)
    }
    g.points.push(point(m))
  }
  const list = [...groups.values()].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))
  // Every user of the batch (events too: their funnel steps are re-derived per user on erasure).
  if (lockTheUsers)
    yield* lockUsers(d, [...new Set(fresh.filter((m) => m.userId !== '').map((m) => `${m.bot}${sep}${m.userId}`))])
  const bounds = list.map((g) => {
    const ts = g.points.map((p) => p.ts)
    return { lo: Math.min(...ts) - gapMs, hi: Math.max(...ts) + gapMs }
  })
  // The stored sessions each group may touch: within a gap of its messages.
  const touching = new Map<string, Session[]>()
  const sessions = d.table(SESSIONS.name)
  const found: Row[] = []
  if (list.length > 0 && d.multiRow)
    found.push(
      ...(yield {
        sql: `SELECT s.* FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[]) AS g (bot, user_id, sid, lo, hi)
          JOIN ${sessions} s ON s.bot = g.bot AND s.user_id = g.user_id AND s.sid = g.sid AND s.start_ts <= g.hi AND s.end_ts >= g.lo`,
        params: [
          list.map((g) => g.bot),
          list.map((g) => g.userId),
          list.map((g) => g.sid),
          bounds.map((b) => b.lo),
          bounds.map((b) => b.hi),
        ],
      }),
    )
  else
    for (const [i, g] of list.entries())
      found.push(
        ...(yield {
          sql: `SELECT * FROM ${sessions} WHERE bot = ? AND user_id = ? AND sid = ? AND start_ts <= ? AND end_ts >= ?`,
          params: [g.bot, g.userId, g.sid, bounds[i]?.hi, bounds[i]?.lo],
        }),
      )
  for (const r of found) {
    const s = sessionOf(r)
    const k = keyOf(s)
    touching.set(k, [...(touching.get(k) ?? []), s])
  }
  const removed: Session[] = []
  const added: Session[] = []
  for (const g of list) {
    const before = touching.get(keyOf(g)) ?? []
    removed.push(...before)
    added.push(...joinSessions(g, before, g.points, gapMs))
  }
  yield* writeSessions(d, deltas, removed, added, withSteps ? gapMs : null)
  if (!withSteps) deltas.delete(PATH_PREFIXES)
  else
    yield* applyRetention(
      d,
      fresh.map((m) => ({ bot: m.bot, userId: m.userId, ts: m.ts })),
      later.zones,
    )

  const rated = fresh.filter((m) => isFeedback(m) && m.score !== null && m.score !== undefined)
  const messages = d.table('messages')
  for (const m of rated) {
    // The rated answer is usually in the same batch (batch-lookback.ts).
    const near = latestInBatch(d, fresh, m, 'outgoing')
    const [answer] = near
      ? [near]
      : yield {
          sql: `SELECT intent FROM ${messages} WHERE bot = ? AND thread = ? AND direction = 'outgoing' AND id < ?
        ORDER BY id DESC LIMIT 1`,
          params: [m.bot, m.thread, m.id],
        }
    const intent = answer?.intent === null || answer?.intent === undefined ? '' : String(answer.intent)
    yield {
      sql: `UPDATE ${messages} SET score = ?, rated_intent = ? WHERE id = ?`,
      params: [m.score, intent, m.id],
    }
    addRow(deltas, FEEDBACK, { bot: m.bot, hour: floorHour(m.ts), intent, n: 1, score_sum: m.score as number })
  }
  yield* flush(d, deltas, late, withSteps)
}

const keyOf = (g: { bot: string; userId: string; sid: string }) => [g.bot, g.userId, g.sid].join(sep)

/**
 * After messages were deleted (erasure, retention): users per hour lose their share; the
 * sessions of each touched user and the feedback of each touched hour are derived again from
 * the messages that remain.
 */
export function* takeBackAnalytics(
  d: Dialect,
  doomed: readonly RollupMessage[],
  gapMs: number,
  zones: readonly string[] = DEFAULT_RETENTION_ZONES,
  late?: Late,
): Steps {
  const users = new Map<string, { bot: string; userId: string }>()
  for (const m of doomed) if (m.userId !== '') users.set(`${m.bot}${sep}${m.userId}`, { bot: m.bot, userId: m.userId })
  // The same order as ingest: users' locks, sessions, then the summed tables (flush).
  yield* lockUsers(d, [...users.keys()])
  const messages = d.table('messages')
  const sessions = d.table(SESSIONS.name)
  const deltas: Deltas = new Map()
  for (const m of doomed)
    if (m.userId !== '')
      addRow(deltas, USER_HOURS, { bot: m.bot, hour: floorHour(m.ts), user_id: m.userId, messages: -1 })
  const removed: Session[] = []
  const added: Session[] = []
  for (const u of [...users.values()]) {
    const had = yield { sql: `SELECT * FROM ${sessions} WHERE bot = ? AND user_id = ?`, params: [u.bot, u.userId] }
    removed.push(...had.map(sessionOf))
    const rows = yield {
      sql: `SELECT ts, session_id, direction, intent FROM ${messages} WHERE bot = ? AND user_id = ? AND direction <> 'event'`,
      params: [u.bot, u.userId],
    }
    const bySid = new Map<string, SessionPoint[]>()
    for (const r of rows) {
      const sid = r.session_id === null || r.session_id === undefined ? '' : String(r.session_id)
      const p = point({
        ts: Number(r.ts),
        direction: String(r.direction),
        intent: r.intent === null ? null : String(r.intent),
      })
      bySid.set(sid, [...(bySid.get(sid) ?? []), p])
    }
    for (const [sid, points] of bySid) added.push(...joinSessions({ ...u, sid }, [], points, gapMs))
  }
  // Sessions that stay as they were are deleted and written again: their counts net to 0.
  yield* writeSessions(d, deltas, removed, [], gapMs)
  yield* writeSessions(d, deltas, [], added, gapMs)
  yield* takeBackRetention(
    d,
    doomed.map((m) => ({ bot: m.bot, userId: m.userId, ts: m.ts })),
    zones,
  )

  // Feedback of each touched hour, from the events that remain (their score and rated intent are on their rows).
  const hours = new Map<string, { bot: string; hour: number }>()
  for (const m of doomed)
    if (isFeedback(m)) hours.set(`${m.bot}${sep}${floorHour(m.ts)}`, { bot: m.bot, hour: floorHour(m.ts) })
  const again: Deltas = new Map()
  for (const h of [...hours.values()].sort((a, b) => (a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : a.hour - b.hour))) {
    const rows = yield {
      sql: `SELECT score, rated_intent FROM ${messages} WHERE bot = ? AND ts >= ? AND ts < ? AND score IS NOT NULL`,
      params: [h.bot, h.hour, h.hour + HOUR_MS],
    }
    for (const r of rows)
      addRow(again, FEEDBACK, { ...h, intent: String(r.rated_intent ?? ''), n: 1, score_sum: Number(r.score) })
  }
  // Funnel steps of each touched user-hour, from the messages that remain.
  const stepHours = new Map<string, { bot: string; userId: string; hour: number }>()
  for (const m of doomed)
    if (m.userId !== '' && stepOf(m))
      stepHours.set(`${m.bot}${sep}${m.userId}${sep}${floorHour(m.ts)}`, {
        bot: m.bot,
        userId: m.userId,
        hour: floorHour(m.ts),
      })
  for (const k of stepHours.values()) {
    const rows = yield {
      sql: `SELECT ${STEP_COLUMNS} FROM ${messages}
        WHERE bot = ? AND user_id = ? AND ts >= ? AND ts < ?`,
      params: [k.bot, k.userId, k.hour, k.hour + HOUR_MS],
    }
    for (const r of rows) addStep(again, stepMessage(r))
  }
  yield* flush(d, deltas, late)
  for (const k of stepHours.values())
    yield {
      sql: `DELETE FROM ${d.table(USER_STEPS.name)} WHERE bot = ? AND user_id = ? AND hour = ?`,
      params: [k.bot, k.userId, k.hour],
    }
  // The hour rows go; what they held is taken from the totals (the rows derived again add back).
  for (const h of hours.values()) {
    const had: Row[] = yield {
      sql: `DELETE FROM ${d.table(FEEDBACK.name)} WHERE bot = ? AND hour = ? RETURNING intent, n, score_sum`,
      params: [h.bot, h.hour],
    }
    for (const r of had)
      mirrorFeedbackRow(again, { ...h, intent: String(r.intent), n: -Number(r.n), score_sum: -Number(r.score_sum) })
  }
  yield* flush(d, again, late)
  // A first or last time cannot be taken back: the touched users' spans, from their step rows.
  yield* recountSpans(d, [...new Map([...stepHours.values()].map((k) => [`${k.bot}${sep}${k.userId}`, k])).values()])
}

/** Derives the feedback totals by hour and by UTC day from the hour rows (the migration that adds them). */
export function* rebuildFeedbackTotals(d: Dialect): Steps {
  const rows = d.table(FEEDBACK.name)
  const day = floorSql('hour', DAY_MS)
  yield { sql: `DELETE FROM ${d.table(FEEDBACK_HOURS.name)}`, params: [] }
  yield { sql: `DELETE FROM ${d.table(FEEDBACK_DAYS.name)}`, params: [] }
  yield {
    sql: `INSERT INTO ${d.table(FEEDBACK_HOURS.name)} (bot, hour, n, score_sum)
      SELECT bot, hour, sum(n), sum(score_sum) FROM ${rows} GROUP BY bot, hour HAVING sum(n) > 0`,
    params: [],
  }
  yield {
    sql: `INSERT INTO ${d.table(FEEDBACK_DAYS.name)} (bot, day, intent, n, score_sum)
      SELECT bot, ${day}, intent, sum(n), sum(score_sum) FROM ${rows} GROUP BY bot, ${day}, intent HAVING sum(n) > 0`,
    params: [],
  }
}

/** Messages read per step of a rebuild. */
const REBUILD_PAGE = 5_000

/**
 * Derives the analytics summaries from the stored messages (the migration that adds them): a
 * feedback event's score is read from its record. Messages are fed in arrival order through
 * the ingest path (sessions join in any order).
 */
export function* rebuildAnalytics(d: Dialect, gapMs: number = DEFAULT_SESSION_GAP_MS): Steps {
  for (const spec of ANALYTICS_ROLLUPS) yield { sql: `DELETE FROM ${d.table(spec.name)}`, params: [] }
  const messages = d.table('messages')
  for (let after = 0; ; ) {
    const rows = yield {
      sql: `SELECT m.id, m.bot, m.platform, m.direction, m.user_id, m.thread, m.text, m.intent, m.confidence,
          m.user_json, m.event_type, m.event_key, m.amount, m.ts, m.nh, m.session_id,
          CASE WHEN m.event_type = 'customEvent' AND m.event_key = '${FEEDBACK_EVENT}' THEN r.raw END AS raw
        FROM ${messages} m JOIN ${d.table('records')} r ON r.id = m.record_id
        WHERE m.id > ? ORDER BY m.id LIMIT ${REBUILD_PAGE}`,
      params: [after],
    }
    if (rows.length === 0) break
    after = Number(rows[rows.length - 1]?.id)
    yield* ingestAnalytics(
      d,
      rows.map((r) => ({
        ...rollupMessage(r),
        sessionId: r.session_id === null || r.session_id === undefined ? null : String(r.session_id),
        score: r.raw === null || r.raw === undefined ? null : scoreOfRaw(String(r.raw)),
      })),
      gapMs,
      false,
      undefined,
      // No lock per user: a rebuild runs in one transaction under the migrations' lock, before any
      // collector of this version writes; half a million users' locks overflowed PostgreSQL's
      // lock table (max_locks_per_transaction) and failed the upgrade.
      false,
    )
  }
}

/**
 * Derives the funnel steps alone from the stored messages (the migration that adds them), and
 * then their spans unless `spans` is false (the migration before the spans' table existed).
 */
export function* rebuildSteps(d: Dialect, spans = true): Steps {
  yield { sql: `DELETE FROM ${d.table(USER_STEPS.name)}`, params: [] }
  for (let after = 0; ; ) {
    const rows = yield {
      sql: `SELECT ${STEP_COLUMNS} FROM ${d.table('messages')}
        WHERE id > ? ORDER BY id LIMIT ${REBUILD_PAGE}`,
      params: [after],
    }
    if (rows.length === 0) break
    after = Number(rows[rows.length - 1]?.id)
    const deltas: Deltas = new Map()
    for (const r of rows) addStep(deltas, stepMessage(r))
    yield* flush(d, deltas)
  }
  if (spans) yield* rebuildSpans(d)
}

function scoreOfRaw(raw: string): number | null {
  try {
    return feedbackScore(JSON.parse(raw))
  } catch {
    return null
  }
}
