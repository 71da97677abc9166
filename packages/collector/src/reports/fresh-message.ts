/**
 * A message about to be stored, as both stores write it: the columns the summaries need (event
 * time, NotHandled mark, the events report's name) and the {@link StoredMessage} ingest answers.
 */
import type { NormalizedMessage } from '../ingest/normalize'
import type { IncomingRecord, StoredMessage } from '../store/store'
import { FEEDBACK_EVENT, feedbackScore } from './feedback-score'
import type { RollupMessage } from './rollup-delta'
import { usageOfRecord } from './usage-rollup'

/** What SQLite's `json_extract(raw, path)` gives, as text (null when absent, JSON null or not JSON). */
export function extractText(raw: string, path: readonly string[]): string | null {
  let v: unknown
  try {
    v = JSON.parse(raw)
  } catch {
    return null
  }
  for (const key of path) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null
    v = (v as Record<string, unknown>)[key]
  }
  if (v === undefined || v === null) return null
  if (typeof v === 'string') return v
  if (typeof v === 'boolean') return v ? '1' : '0'
  if (typeof v === 'number') return String(v)
  return JSON.stringify(v)
}

/** The name the events report counts an event under: the page of a page launch, the source of a referral, else its name. */
export function eventKeyOf(record: IncomingRecord, m: NormalizedMessage): string | null {
  if (!m.event) return null
  if (m.event.type === 'pageLaunchEvent') return extractText(record.raw, ['extraInfo', 'url']) ?? m.event.name
  if (m.event.type === 'referralEvent') return extractText(record.raw, ['source']) ?? '(none)'
  return m.event.name
}

/** JSON text of a list or object column; null for none (or an empty list). */
export const jsonColumn = (v: unknown[] | Record<string, unknown> | null): string | null =>
  v === null || (Array.isArray(v) && v.length === 0) ? null : JSON.stringify(v)

/** The record's event time: its `eventTs`, else when it was received. */
export const eventTsOf = (record: IncomingRecord): number => record.eventTs ?? record.receivedAt

/** A message of a record just stored under `id` / `recordId`: what ingest answers, and what the summaries count. */
export function freshMessage(
  record: IncomingRecord,
  m: NormalizedMessage,
  id: number,
  recordId: number,
): { stored: StoredMessage; rollup: RollupMessage } {
  const ts = eventTsOf(record)
  return {
    stored: { ...m, id, recordId, bot: record.bot, ts, receivedAt: record.receivedAt },
    rollup: {
      id,
      bot: record.bot,
      platform: m.platform,
      direction: m.direction,
      userId: m.userId,
      thread: m.thread,
      text: m.text,
      intent: m.intent,
      confidence: m.confidence,
      userJson: jsonColumn(m.userJson),
      eventType: m.event?.type ?? null,
      eventKey: eventKeyOf(record, m),
      amount: m.event?.amount ?? null,
      ts,
      nh: m.direction === 'incoming' && m.intent === 'NotHandled',
      sessionId: m.sessionId,
      score: m.event?.type === 'customEvent' && m.event.name === FEEDBACK_EVENT ? feedbackScore(m.event.body) : null,
      usage: usageOfRecord(record.type, record.raw),
    },
  }
}
