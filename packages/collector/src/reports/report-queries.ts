/**
 * Every report, defined once for both databases: it reads the summary tables (never the
 * messages table), within a range widened to whole hours, and shapes the answer. `exec` runs a
 * statement written with `?` placeholders on the store's database.
 */
import type {
  ConversationSummary,
  EventsReport,
  IntentLine,
  NotHandledLine,
  ReadFilter,
  Segment,
  TimelineBucket,
} from '../store/store'
import { eventsReport, topSegments } from '../store/store-rows'
import type { Dialect, Query, Row } from './dialect'
import { fineTimelineQuery, scopeSql } from './message-queries'
import { openPhraseRows } from './nh-phrase-days'
import { dayStart, daysAndEdgeHours, HOUR_MS, hourRange, rangeSql } from './range'
import { NH_PHRASES, SEGMENTS } from './read-summary-tables'
import {
  CONVERSATIONS,
  EVENT_DAYS,
  EVENTS,
  HOURLY,
  INTENT_DAYS,
  INTENTS,
  NOT_HANDLED,
  type RollupSpec,
} from './rollup-tables'

export type { Row } from './dialect'
/** Runs one statement (with `?` placeholders) and gives its rows. */
export type Exec = (q: Query) => Promise<Row[]>

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** The range widened to whole hours; no lower bound for all time (events before 1970 included). */
function hours(filter: ReadFilter): { from: number | null; to: number | null } {
  const r = hourRange(filter)
  return { from: r.from > 0 ? r.from : null, to: r.to }
}

/** ` AND hour >= ? AND hour < ?` over the range widened to whole hours. */
function hoursSql(filter: ReadFilter, params: unknown[], col = 'hour'): string {
  const r = hours(filter)
  return rangeSql(col, r.from, r.to, params)
}

/**
 * The rows of `columns` of a per-hour summary over the range as a UNION ALL: its whole UTC days
 * from the per-day copy, the hours of its partial first and last days from the hour rows.
 */
function dayAndHourRows(
  d: Dialect,
  filter: ReadFilter,
  params: unknown[],
  columns: string,
  tables: { hours: RollupSpec; days: RollupSpec },
): string {
  return daysAndEdgeHours(hours(filter), (grain, from, to) => {
    const [spec, col] = grain === 'hour' ? [tables.hours, 'hour'] : [tables.days, 'day']
    return `SELECT ${columns} FROM ${d.table(spec.name)} WHERE 1 = 1${scopeSql(d, filter, params)}${rangeSql(col, from, to, params)}`
  }).join(' UNION ALL ')
}

/** WHERE of a read of one summary table: bot scope and hours. */
function where(d: Dialect, filter: ReadFilter, params: unknown[]): string {
  return `WHERE 1 = 1${scopeSql(d, filter, params)}${hoursSql(filter, params)}`
}

/** Records and messages within the filter (`/api/stats`). */
export async function countsReport(d: Dialect, exec: Exec, filter: ReadFilter) {
  const params: unknown[] = []
  const rows = await exec({
    sql: `SELECT sum(records) AS records, sum(messages) AS messages FROM ${d.table(HOURLY.name)} ${where(d, filter, params)}`,
    params,
  })
  return { records: num(rows[0]?.records), messages: num(rows[0]?.messages) }
}

export async function intentsReport(d: Dialect, exec: Exec, filter: ReadFilter): Promise<IntentLine[]> {
  const params: unknown[] = []
  const rows = await exec({
    sql: `SELECT intent, sum(messages) AS n, sum(incoming) AS incoming, sum(outgoing) AS outgoing,
        sum(conf_sum) AS conf_sum, sum(conf_n) AS conf_n
      FROM (${dayAndHourRows(d, filter, params, 'intent, messages, incoming, outgoing, conf_sum, conf_n', { hours: INTENTS, days: INTENT_DAYS })}) intent_rows
      GROUP BY intent HAVING sum(messages) > 0 ORDER BY n DESC, intent LIMIT 500`,
    params,
  })
  return rows.map((r) => ({
    intent: String(r.intent),
    count: num(r.n),
    incoming: num(r.incoming),
    outgoing: num(r.outgoing),
    avgConfidence: num(r.conf_n) > 0 ? num(r.conf_sum) / num(r.conf_n) : null,
  }))
}

/**
 * The NotHandled report: inputs grouped by phrase, most frequent first (at most `limit` lines,
 * default 500); `users` counts each bot's users apart. A range that runs to the present (open, or
 * ending after every stored input: the default, the dashboard's presets, all time) reads one row
 * per phrase × hour (read-summaries.ts); a range that ends in the past reads the phrase × user ×
 * hour rows in it.
 */
export async function notHandledReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter,
  limit = 500,
): Promise<NotHandledLine[]> {
  const lines = Math.max(1, Math.floor(limit))
  const hours = hourRange(filter)
  let rows: Row[]
  if (hours.to === null || !(await inputsFrom(d, exec, filter, hours.to))) {
    const params: unknown[] = []
    rows = await exec({
      sql: `SELECT phrase, min(text) AS text, sum(n) AS n, sum(users) AS users, max(last_ts) AS last_ts,
          ${d.distinctList('bot')} AS bots
        FROM ${openPhraseRows(d, filter, params)}
        GROUP BY phrase HAVING sum(n) > 0 ORDER BY n DESC, last_ts DESC, phrase LIMIT ${lines}`,
      params,
    })
  } else {
    const params: unknown[] = []
    rows = await exec({
      sql: `SELECT phrase, min(text) AS text, sum(n) AS n, count(*) AS users, max(last_ts) AS last_ts,
          ${d.distinctList('bot')} AS bots
        FROM (SELECT phrase, bot, user_id, min(text) AS text, sum(n) AS n, max(last_ts) AS last_ts
          FROM ${d.table(NOT_HANDLED.name)} ${where(d, filter, params)} GROUP BY phrase, bot, user_id) u
        GROUP BY phrase HAVING sum(n) > 0 ORDER BY n DESC, last_ts DESC, phrase LIMIT ${lines}`,
      params,
    })
  }
  return rows.map((r) => ({
    text: String(r.text ?? ''),
    count: num(r.n),
    users: num(r.users),
    lastTs: num(r.last_ts),
    bots: r.bots ? String(r.bots).split(',').sort() : [],
  }))
}

/** Is any NotHandled input in scope stored at or after `hour`? (One row read by the hour index.) */
async function inputsFrom(d: Dialect, exec: Exec, filter: ReadFilter, hour: number): Promise<boolean> {
  const params: unknown[] = []
  const scope = scopeSql(d, filter, params)
  params.push(hour)
  const rows = await exec({
    sql: `SELECT 1 AS found FROM ${d.table(NH_PHRASES.name)} WHERE 1 = 1${scope} AND hour >= ? LIMIT 1`,
    params,
  })
  return rows.length > 0
}

export async function eventsReportOf(d: Dialect, exec: Exec, filter: ReadFilter): Promise<EventsReport> {
  const params: unknown[] = []
  const rows = await exec({
    sql: `SELECT type, name, sum(n) AS n, sum(amount) AS total
      FROM (${dayAndHourRows(d, filter, params, 'type, name, n, amount', { hours: EVENTS, days: EVENT_DAYS })}) event_rows
      GROUP BY type, name HAVING sum(n) > 0`,
    params,
  })
  const of = (type: string) =>
    rows
      .filter((r) => r.type === type)
      .map((r) => ({ name: String(r.name), count: num(r.n), total: num(r.total) }))
      .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .slice(0, 100)
  return eventsReport({
    custom: of('customEvent'),
    revenue: of('revenueEvent'),
    shares: of('shareEvent'),
    pageLaunches: of('pageLaunchEvent').map((r) => ({ page: r.name, count: r.count })),
    referrals: of('referralEvent').map((r) => ({ source: r.name, count: r.count })),
  })
}

/**
 * Users active in the range (first seen before `to`, last seen from `from`, both widened to whole
 * hours), by their latest metadata: users last seen from `from` on, less those first seen from
 * `to` on — rows from `from` on of the per-hour counts (read-summaries.ts), not one per user.
 */
export async function segmentsReport(d: Dialect, exec: Exec, filter: ReadFilter): Promise<Segment[]> {
  const hours = hourRange(filter)
  const params: unknown[] = []
  const firsts = hours.to === null ? '0' : 'sum(CASE WHEN hour >= ? THEN firsts ELSE 0 END)'
  if (hours.to !== null) params.push(hours.to)
  const rows = await exec({
    sql: `SELECT field, value, sum(lasts) - ${firsts} AS users FROM ${d.table(SEGMENTS.name)}
      WHERE 1 = 1${scopeSql(d, filter, params)}${hours.from > 0 ? ' AND hour >= ?' : ''}
      GROUP BY field, value`,
    params: hours.from > 0 ? [...params, hours.from] : params,
  })
  return topSegments(rows.map((r) => ({ field: String(r.field), value: String(r.value), users: num(r.users) })))
}

/**
 * Messages per bucket: minute buckets from the messages' event-time index; hours and days from
 * the hourly summary, days cut at midnight in `filter.tz` (each hour goes to the day its start
 * falls in: exact for zones with whole-hour offsets, DST days included).
 */
export async function timelineReport(
  d: Dialect,
  exec: Exec,
  query: ReadFilter & { bucketMs: number; since?: number | undefined },
): Promise<TimelineBucket[]> {
  // `since` (the older parameter) starts the range there at the latest.
  const filter = query.since === undefined ? query : { ...query, from: Math.max(query.from ?? 0, query.since) }
  const shape = (r: Row): TimelineBucket => ({
    t: num(r.t),
    incoming: num(r.incoming),
    outgoing: num(r.outgoing),
    events: num(r.events),
  })
  if (filter.bucketMs < HOUR_MS) return (await exec(fineTimelineQuery(d, filter, filter.bucketMs))).map(shape)
  // Whole hours from the hourly summary; a range edge inside an hour (a `since` of the live
  // chart) reads that part of the hour from the messages' event-time index: exact and bounded.
  const from = filter.from ?? 0
  const to = filter.to ?? null
  const wholeFrom = from > 0 ? Math.ceil(from / HOUR_MS) * HOUR_MS : 0
  const wholeTo = to === null ? null : Math.floor(to / HOUR_MS) * HOUR_MS
  const params: unknown[] = []
  let hours = scopeSql(d, filter, params)
  if (wholeFrom > 0) {
    hours += ' AND hour >= ?'
    params.push(wholeFrom)
  }
  if (wholeTo !== null) {
    hours += ' AND hour < ?'
    params.push(wholeTo)
  }
  const rows =
    wholeTo !== null && wholeTo <= wholeFrom
      ? []
      : await exec({
          sql: `SELECT hour AS t, sum(incoming) AS incoming, sum(outgoing) AS outgoing, sum(events) AS events
      FROM ${d.table(HOURLY.name)} WHERE 1 = 1${hours} GROUP BY hour HAVING sum(messages) > 0 ORDER BY hour`,
          params,
        })
  const edges: Array<[number, number | null]> = []
  if (wholeTo !== null && wholeTo <= wholeFrom) edges.push([from, to])
  else {
    if (from > 0 && from < wholeFrom) edges.push([from, wholeFrom])
    if (to !== null && wholeTo !== null && wholeTo < to) edges.push([wholeTo, to])
  }
  for (const [a, b] of edges) rows.push(...(await exec(fineTimelineQuery(d, { ...filter, from: a, to: b }, HOUR_MS))))
  const tz = filter.tz ?? 'UTC'
  const bucketOf =
    filter.bucketMs === HOUR_MS
      ? (t: number) => t
      : filter.bucketMs === 86_400_000
        ? dayOf(tz)
        : (t: number) => Math.floor(t / filter.bucketMs) * filter.bucketMs
  const out = new Map<number, TimelineBucket>()
  for (const r of rows) {
    const row = shape(r)
    const t = bucketOf(row.t)
    const b = out.get(t)
    if (!b) out.set(t, { ...row, t })
    else {
      b.incoming += row.incoming
      b.outgoing += row.outgoing
      b.events += row.events
    }
  }
  return [...out.values()].sort((a, b) => a.t - b.t)
}

/**
 * The start of the day (in `tz`) of each hour, for hours read in ascending order: the zone's
 * rules are asked twice per day, not per hour. Days are 23 to 25 hours long, so 26 hours after a
 * day's start is inside the next day.
 */
function dayOf(tz: string): (t: number) => number {
  let start = Number.NaN
  let end = Number.NaN
  return (t) => {
    if (!(t >= start && t < end)) {
      start = dayStart(tz, t)
      end = dayStart(tz, start + 26 * HOUR_MS)
    }
    return start
  }
}

/** A conversations page's cursor: the last row's (last event time, last message id). */
export const conversationCursor = (lastTs: number, lastId: number): string => `${lastTs}:${lastId}`

function parseCursor(cursor: string | undefined): [number, number] | undefined {
  if (cursor === undefined || cursor === '') return undefined
  const m = /^(-?\d+):(\d+)$/.exec(cursor)
  if (!m) return undefined
  return [Number(m[1]), Number(m[2])]
}

/** Is this a cursor {@link conversationsReport} takes? */
export const isConversationCursor = (cursor: string): boolean => parseCursor(cursor) !== undefined

/**
 * Transcripts active in the range, most recently active first, one summary row each, in keyset
 * pages (`cursor`): a page costs its own rows whatever the number of conversations.
 */
export async function conversationsReport(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { limit: number; cursor?: string },
): Promise<ConversationSummary[]> {
  const params: unknown[] = []
  let and = scopeSql(d, filter, params, 'c.bot')
  if (filter.from !== undefined && filter.from > 0) {
    and += ' AND c.last_ts >= ?'
    params.push(filter.from)
  }
  if (filter.to !== undefined && filter.to !== null) {
    and += ' AND c.first_ts < ?'
    params.push(filter.to)
  }
  const cursor = parseCursor(filter.cursor)
  if (cursor) {
    and += ' AND (c.last_ts, c.last_id) < (?, ?)'
    params.push(cursor[0], cursor[1])
  }
  params.push(filter.limit)
  const rows = await exec({
    sql: `SELECT c.*, p.paused FROM ${d.table(CONVERSATIONS.name)} c
      LEFT JOIN ${d.table('pauses')} p ON p.bot = c.bot AND p.thread = c.thread
      WHERE c.messages > 0${and} ORDER BY c.last_ts DESC, c.last_id DESC LIMIT ?`,
    params,
  })
  return rows.map((r) => ({
    bot: String(r.bot),
    platform: String(r.msg_platform ?? r.last_platform) as ConversationSummary['platform'],
    thread: String(r.thread),
    userId: String(r.in_user ?? r.last_user ?? ''),
    messages: num(r.messages),
    lastText: r.last_text === null || r.last_text === undefined ? null : String(r.last_text),
    lastTs: num(r.last_ts),
    paused: r.paused === true || r.paused === 1,
    firstTs: num(r.first_ts),
    notHandled: num(r.not_handled),
    cursor: conversationCursor(num(r.last_ts), num(r.last_id)),
  }))
}
