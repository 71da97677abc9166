/**
 * What a batch of messages changes in the summary tables, aggregated in JS so one upsert
 * statement per table (PostgreSQL) or one per changed row (SQLite) carries a whole batch. Pure.
 */
import { DAY_MS, floorHour } from './range'
import {
  CONVERSATIONS,
  EVENT_DAYS,
  EVENTS,
  HOURLY,
  INTENT_DAYS,
  INTENTS,
  keyOf,
  NOT_HANDLED,
  type RollupRow,
  type RollupSpec,
  USER_DAYS,
  USERS,
} from './rollup-tables'

/** An answer's tokens, as its record carries them. */
export interface LlmUsage {
  /** '' when the record names no model. */
  model: string
  inputTokens: number
  outputTokens: number
}

/** A stored message as the summaries see it. */
export interface RollupMessage {
  id: number
  bot: string
  platform: string
  direction: string
  userId: string
  thread: string
  text: string | null
  intent: string | null
  confidence: number | null
  /** JSON text of the user metadata, or null. */
  userJson: string | null
  eventType: string | null
  /** The name the events report groups by (page for page launches, source for referrals). */
  eventKey: string | null
  amount: number | null
  /** Event time. */
  ts: number
  /** Counted as a NotHandled input. */
  nh: boolean
  /** The record's explicit `sessionId` (sessions: analytics-writes.ts); absent or null: none. */
  sessionId?: string | null
  /** A feedback event's score normalised to −1 … 1 (feedback-score.ts); absent or null: not feedback. */
  score?: number | null
  /** An answer's LLM tokens (usage-rollup.ts); absent or null: none. */
  usage?: LlmUsage | null
}

/** Characters of an input that make its phrase: a summary key stays within PostgreSQL's index row limit (~2.7 kB). */
export const PHRASE_CHARS = 500

/**
 * The NotHandled report's grouping of inputs: the text lower-cased, surrounding white space
 * aside, its first {@link PHRASE_CHARS} characters (never half a surrogate pair).
 */
export function phraseOf(text: string | null): string {
  const p = (text ?? '').trim().toLowerCase()
  if (p.length <= PHRASE_CHARS) return p
  const cut = p.slice(0, PHRASE_CHARS)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/** Changes per summary table, keyed by row key. */
export type Deltas = Map<RollupSpec, Map<string, RollupRow>>

function add(deltas: Deltas, spec: RollupSpec, row: RollupRow): void {
  let rows = deltas.get(spec)
  if (!rows) {
    rows = new Map()
    deltas.set(spec, rows)
  }
  const key = keyOf(spec, row)
  const had = rows.get(key)
  if (!had) {
    rows.set(key, row)
    return
  }
  for (const c of spec.sums ?? []) had[c] = (had[c] as number) + (row[c] as number)
  for (const c of spec.mins ?? []) had[c] = pick(had[c], row[c], (a, b) => a < b)
  for (const c of spec.maxes ?? []) had[c] = pick(had[c], row[c], (a, b) => a > b)
  if (spec.latest) {
    const [ts, id] = spec.latest.by
    const newer =
      (row[ts] as number) > (had[ts] as number) ||
      ((row[ts] as number) === (had[ts] as number) && (row[id] as number) > (had[id] as number))
    if (newer) for (const c of [...spec.latest.cols, ts, id]) had[c] = row[c] ?? null
  }
}

type V = string | number | null | undefined
function pick(a: V, b: V, better: (a: string | number, b: string | number) => boolean): string | number | null {
  if (a === null || a === undefined) return b ?? null
  if (b === null || b === undefined) return a
  return better(b, a) ? b : a
}

/**
 * Adds to `deltas` what these messages change, times `sign` (+1 stored, -1 taken back; taking
 * back is only for the summed tables: see {@link SUMMED}). `records` are (bot, event time) of
 * stored records (a record without messages counts too).
 */
export function addDeltas(
  deltas: Deltas,
  messages: Iterable<RollupMessage>,
  records: Iterable<{ bot: string; ts: number }> = [],
  sign: 1 | -1 = 1,
): Deltas {
  for (const r of records)
    add(deltas, HOURLY, {
      bot: r.bot,
      hour: floorHour(r.ts),
      records: sign,
      messages: 0,
      incoming: 0,
      outgoing: 0,
      events: 0,
    })
  for (const m of messages) {
    const hour = floorHour(m.ts)
    const incoming = m.direction === 'incoming' ? sign : 0
    const outgoing = m.direction === 'outgoing' ? sign : 0
    add(deltas, HOURLY, {
      bot: m.bot,
      hour,
      records: 0,
      messages: sign,
      incoming,
      outgoing,
      events: m.direction === 'event' ? sign : 0,
    })
    const day = Math.floor(m.ts / DAY_MS) * DAY_MS
    if (m.intent !== null && m.direction !== 'event') {
      const counts = {
        bot: m.bot,
        intent: m.intent,
        messages: sign,
        incoming,
        outgoing,
        conf_sum: m.confidence === null ? 0 : sign * m.confidence,
        conf_n: m.confidence === null ? 0 : sign,
      }
      add(deltas, INTENTS, { ...counts, hour })
      add(deltas, INTENT_DAYS, { ...counts, day })
    }
    if (m.eventType !== null) {
      const counts = {
        bot: m.bot,
        type: m.eventType,
        name: m.eventKey ?? '',
        n: sign,
        amount: m.amount === null ? 0 : sign * m.amount,
      }
      add(deltas, EVENTS, { ...counts, hour })
      add(deltas, EVENT_DAYS, { ...counts, day })
    }
    if (m.userId !== '')
      add(deltas, USER_DAYS, {
        bot: m.bot,
        day,
        user_id: m.userId,
        messages: sign,
        incoming,
      })
    if (sign > 0) addKept(deltas, m, true)
  }
  return deltas
}

/**
 * The rows of the tables that keep latest / first values (NotHandled, users, conversations) for
 * one message: `counted` false when the message was stored before and only now became a
 * NotHandled input (an outgoing NotHandled reply pointed at it).
 */
export function addKept(deltas: Deltas, m: RollupMessage, counted: boolean): void {
  if (m.nh) add(deltas, NOT_HANDLED, notHandledRow(m))
  if (counted && m.userId !== '') add(deltas, USERS, userRow(m))
  // An event belongs to the user's conversation or to none: it never makes or counts in one.
  if (m.direction !== 'event') add(deltas, CONVERSATIONS, conversationRow(m, counted))
}

/** A NotHandled input's row. */
export function notHandledRow(m: RollupMessage): RollupRow {
  return {
    bot: m.bot,
    hour: floorHour(m.ts),
    phrase: phraseOf(m.text),
    user_id: m.userId,
    n: 1,
    last_ts: m.ts,
    text: m.text ?? '',
  }
}

function userRow(m: RollupMessage): RollupRow {
  return {
    bot: m.bot,
    user_id: m.userId,
    first_ts: m.ts,
    last_ts: m.ts,
    messages: 1,
    user_json: m.userJson,
    json_ts: m.userJson === null ? -1 : m.ts,
    json_id: m.userJson === null ? -1 : m.id,
  }
}

function conversationRow(m: RollupMessage, counted: boolean): RollupRow {
  return {
    bot: m.bot,
    thread: m.thread,
    messages: counted ? 1 : 0,
    not_handled: m.nh ? 1 : 0,
    first_ts: m.ts,
    last_ts: m.ts,
    last_id: m.id,
    last_text: m.text,
    last_user: m.userId,
    last_platform: m.platform,
    in_user: m.direction === 'incoming' ? m.userId : null,
    msg_platform: m.direction !== 'event' ? m.platform : null,
  }
}

/** Adds one row of changes to a table (merged with a row of the same key already there). */
export function addRow(deltas: Deltas, spec: RollupSpec, row: RollupRow): void {
  add(deltas, spec, row)
}

/** Tables whose rows are pure sums: taking changes back is subtracting them. */
export const SUMMED: readonly RollupSpec[] = [HOURLY, INTENTS, EVENTS, INTENT_DAYS, EVENT_DAYS, USER_DAYS]

/**
 * Changes a writer keeps for the end of its transaction (summary-writes.ts): the summaries every
 * batch touches (a few rows per hour, wanted by every concurrent writer) are written last, so
 * their row locks are held only for the commit — `takes` says which tables.
 */
export interface Late {
  takes(spec: RollupSpec): boolean
  deltas: Deltas
}
