/**
 * What the SQLite and PostgreSQL stores share once the database has answered: a message row as
 * a {@link StoredMessage}, the row shapes of the reports turned into the store's report types,
 * and the clamp on read limits. The SQL itself stays with each store.
 */
import { segmentPairs } from '../reports/segment-pairs'
import type { EventsReport, MessengerPageConfig, SearchHit, Segment, StoredMessage, StoredRecord } from './store'

/** A row of the messages table (both stores name the columns alike), with the event's raw record when it is one. */
export interface MessageRow {
  id: number
  record_id: number
  bot: string
  platform: string
  direction: string
  user_id: string
  conversation_id: string | null
  thread: string
  session_id: string | null
  text: string | null
  intent: string | null
  confidence: number | null
  buttons: string | null
  images: string | null
  user_json: string | null
  event_type: string | null
  event_name: string | null
  amount: number | null
  ts: number
  /** Absent in rows stored before event time (their `ts` is their receive time). */
  received_at?: number | null
  event_raw?: string | null
}

/** A message row as the store hands it out. */
export function toMessage(row: MessageRow): StoredMessage {
  const msg: StoredMessage = {
    id: row.id,
    recordId: row.record_id,
    bot: row.bot,
    platform: row.platform as StoredMessage['platform'],
    direction: row.direction as StoredMessage['direction'],
    userId: row.user_id,
    conversationId: row.conversation_id,
    thread: row.thread,
    sessionId: row.session_id,
    text: row.text,
    intent: row.intent,
    confidence: row.confidence,
    buttons: row.buttons ? JSON.parse(row.buttons) : [],
    images: row.images ? JSON.parse(row.images) : [],
    userJson: row.user_json ? JSON.parse(row.user_json) : null,
    event: null,
    ts: row.ts,
    receivedAt: row.received_at ?? row.ts,
  }
  if (row.event_type !== null) {
    msg.event = {
      type: row.event_type,
      name: row.event_name ?? '',
      body: row.event_raw ? JSON.parse(row.event_raw) : {},
    }
    if (row.amount !== null) msg.event.amount = row.amount
  }
  return msg
}

/** A row of the Messenger pages table. */
export interface MessengerPageRow {
  page_id: string
  app_secret: string
  verify_token: string
  bot: string | null
}

export function toMessengerPage(r: MessengerPageRow): MessengerPageConfig {
  return {
    pageId: r.page_id,
    appSecret: r.app_secret,
    verifyToken: r.verify_token,
    ...(r.bot ? { bot: r.bot } : {}),
  }
}

type NameCount = { name: string; count: number; total: number | null }

/** The events report from its per-type rows (custom, revenue and share events counted by name). */
export function eventsReport(rows: {
  custom: NameCount[]
  revenue: NameCount[]
  shares: NameCount[]
  pageLaunches: Array<{ page: string; count: number }>
  referrals: Array<{ source: string; count: number }>
}): EventsReport {
  const { custom, revenue, shares, pageLaunches, referrals } = rows
  return {
    custom: custom.map(({ name, count }) => ({ name, count })),
    revenue: {
      total: revenue.reduce((t, r) => t + (r.total ?? 0), 0),
      count: revenue.reduce((t, r) => t + r.count, 0),
      byName: revenue.map((r) => ({ name: r.name, total: r.total ?? 0, count: r.count })),
    },
    shares: {
      count: shares.reduce((t, r) => t + r.count, 0),
      byName: shares.map(({ name, count }) => ({ name, count })),
    },
    pageLaunches,
    referrals: referrals.map((r) => ({ source: String(r.source), count: r.count })),
  }
}

export { localeOf } from '../reports/segment-pairs'

/** Users counted by field value from each user's latest `user_json` (top 20 values, top 30 fields). */
export function segmentsOf(userJsons: Iterable<string>): Segment[] {
  const counts = new Map<string, { field: string; value: string; users: number }>()
  for (const raw of userJsons)
    for (const [field, value] of segmentPairs(raw)) {
      const k = `${field}\u0000${value}`
      const c = counts.get(k) ?? { field, value, users: 0 }
      c.users++
      counts.set(k, c)
    }
  return topSegments(counts.values())
}

/** Segments from users counted per field and value: the top 20 values of the top 30 fields (by users). */
export function topSegments(counts: Iterable<{ field: string; value: string; users: number }>): Segment[] {
  const fields = new Map<string, Array<{ value: string; users: number }>>()
  for (const { field, value, users } of counts) {
    if (users <= 0) continue
    const values = fields.get(field) ?? []
    values.push({ value, users })
    fields.set(field, values)
  }
  const total = (values: Array<{ users: number }>) => values.reduce((t, v) => t + v.users, 0)
  return [...fields.entries()]
    .map(([field, values]) => ({
      field,
      total: total(values),
      values: values
        .sort((a, b) => b.users - a.users || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
        .slice(0, 20),
    }))
    .sort((a, b) => b.total - a.total || (a.field < b.field ? -1 : 1))
    .slice(0, 30)
    .map(({ field, values }) => ({ field, values }))
}

/** A read's row limit: `fallback` when not a finite number, else 1 to 5 000. */
export function clampLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback
  return Math.min(Math.max(1, Math.floor(limit)), 5000)
}

/**
 * Records read in keyset pages (bounded memory whatever their number): `page(after)` gives the
 * next records with ids above `after`, in id order; an empty page ends it. Other requests run
 * between pages.
 */
export async function* pagedRecords(page: (after: number) => Promise<StoredRecord[]> | StoredRecord[]) {
  let after = 0
  for (;;) {
    const rows = await page(after)
    if (rows.length === 0) return
    for (const row of rows) yield row
    after = (rows[rows.length - 1] as StoredRecord).id
    // Let ingest and other requests run between pages.
    await new Promise((r) => setImmediate(r))
  }
}

/** A search hit from its row (id, bot, thread, user_id, direction, text, ts). */
export function searchHit(r: Record<string, unknown>): SearchHit {
  return {
    id: Number(r.id),
    bot: String(r.bot),
    thread: String(r.thread),
    userId: String(r.user_id),
    direction: String(r.direction) as SearchHit['direction'],
    text: String(r.text ?? ''),
    ts: Number(r.ts),
  }
}
