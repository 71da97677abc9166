/**
 * Reads of the messages table itself, written once for both databases: the firehose, a
 * transcript page, minute buckets of the chart. Each walks an index over event time (`ts`), so a
 * page costs its own rows whatever the table's size.
 */

import type { ReadFilter } from '../store/store'
import type { MessageRow } from '../store/store-rows'
import type { Dialect, Query } from './dialect'

/** The columns of a message row as the read API hands it out, with the event's raw record. */
export function selectMessages(d: Dialect): string {
  const m = d.table('messages')
  const r = d.table('records')
  return `SELECT m.id, m.record_id, m.bot, m.platform, m.direction, m.user_id, m.conversation_id, m.thread,
  m.session_id, m.text, m.intent, m.confidence, m.buttons, m.images, m.user_json, m.event_type, m.event_name, m.amount,
  m.ts, m.received_at, CASE WHEN m.event_type IS NOT NULL THEN r.raw END AS event_raw
  FROM ${m} m JOIN ${r} r ON r.id = m.record_id`
}

/** ` AND col = ? AND col IN (…)`: the bot scope of a read, its parameters pushed to `params`. */
export function scopeSql(d: Dialect, filter: ReadFilter, params: unknown[], col = 'bot'): string {
  let and = ''
  if (filter.bot !== undefined) {
    and += ` AND ${col} = ?`
    params.push(filter.bot)
  }
  if (filter.bots !== undefined) and += ` AND ${d.inList(col, filter.bots, params)}`
  return and
}

/** ` AND col >= ? AND col < ?` for the event-time range of a read (exact, in ms). */
export function tsRangeSql(filter: ReadFilter, params: unknown[], col = 'ts'): string {
  let and = ''
  if (filter.from !== undefined && filter.from > 0) {
    and += ` AND ${col} >= ?`
    params.push(filter.from)
  }
  if (filter.to !== undefined && filter.to !== null) {
    and += ` AND ${col} < ?`
    params.push(filter.to)
  }
  return and
}

/**
 * The latest `limit` messages by event time within the range (newest last); `afterId` keeps
 * only messages stored after that one (the live view's paging forward).
 */
export function recentQuery(d: Dialect, filter: ReadFilter & { afterId?: number }, limit: number): Query {
  const params: unknown[] = []
  let where = scopeSql(d, filter, params) + tsRangeSql(filter, params)
  if (filter.afterId !== undefined) {
    where += ' AND id > ?'
    params.push(filter.afterId)
  }
  params.push(limit)
  // The page's ids first, from the messages' own indexes; the records are joined for those rows only.
  return {
    sql: `SELECT * FROM (${selectMessages(d)} WHERE m.id IN (
        SELECT id FROM ${d.table('messages')} WHERE 1 = 1${where} ORDER BY ts DESC, id DESC LIMIT ?)) x
      ORDER BY ts, id`,
    params,
  }
}

/** The newest stored message's id (`id`; null when there is none): the primary key's last entry. */
export function lastMessageIdQuery(d: Dialect): Query {
  return { sql: `SELECT max(id) AS id FROM ${d.table('messages')}`, params: [] }
}

/**
 * A transcript page: the latest `limit` messages (event time, then arrival) before the message
 * `beforeId` when given, oldest first.
 */
export function transcriptQuery(d: Dialect, bot: string, thread: string, limit: number, beforeId?: number): Query {
  const params: unknown[] = [bot, thread]
  let before = ''
  if (beforeId !== undefined) {
    // The cursor message's place in (ts, id) order; a cursor that no longer exists pages by id.
    before = ` AND (m.ts, m.id) < (coalesce((SELECT ts FROM ${d.table('messages')} WHERE id = ?), ?), ?)`
    params.push(beforeId, Number.MAX_SAFE_INTEGER, beforeId)
  }
  params.push(limit)
  return {
    sql: `SELECT * FROM (${selectMessages(d)} WHERE m.bot = ? AND m.thread = ?${before}
      ORDER BY m.ts DESC, m.id DESC LIMIT ?) x ORDER BY ts, id`,
    params,
  }
}

/** Messages per minute (or any bucket under an hour) within the range, from the messages' event-time index. */
export function fineTimelineQuery(d: Dialect, filter: ReadFilter, bucketMs: number): Query {
  const params: unknown[] = []
  const where = tsRangeSql(filter, params) + scopeSql(d, filter, params)
  const b = Math.max(1000, Math.floor(bucketMs))
  return {
    // The bucket is an integer we made: inlined, integer division in both databases.
    sql: `SELECT (ts / ${b}) * ${b} AS t,
        sum(CASE WHEN direction = 'incoming' THEN 1 ELSE 0 END) AS incoming,
        sum(CASE WHEN direction = 'outgoing' THEN 1 ELSE 0 END) AS outgoing,
        sum(CASE WHEN direction = 'event' THEN 1 ELSE 0 END) AS events
      FROM ${d.table('messages')} WHERE 1 = 1${where} GROUP BY (ts / ${b}) * ${b} ORDER BY t`,
    params,
  }
}

export type { MessageRow }
