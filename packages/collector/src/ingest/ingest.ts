import type { LiveFeed } from '../live/live-feed'
import type { AddResult, IncomingRecord, RecordStore } from '../store/store'
import { blankRecordCredentials } from './blank-credentials'
import { eventTime } from './event-time'
import type { RecordPlatform, StoredRecordType } from './legacy-records'
import { type NormalizedMessage, normalizeRecord } from './normalize'

/** What an accepted record needs: already validated. */
export interface AcceptedRecord {
  bot: string
  platform: RecordPlatform
  type: StoredRecordType
  /** As sent: the spec's `11.1.0-rest`, the dashbot SDK's `12.1.0-npm`… */
  v: string
  raw: string
  body: Record<string, unknown>
  /** The sender's per-record id: stored once per (bot, key). */
  idempotencyKey?: string | undefined
}

function prepare(
  accepted: AcceptedRecord,
  receivedAt: number,
): { record: IncomingRecord; messages: NormalizedMessage[] } {
  // Platform credentials are never kept, whoever sent them (the raw view shows them blanked).
  const { body, blanked } = blankRecordCredentials(accepted.body)
  const record = blanked.length ? { ...accepted, body, raw: JSON.stringify(body) } : accepted
  return {
    record: {
      bot: record.bot,
      platform: record.platform,
      type: record.type,
      v: record.v,
      raw: record.raw,
      receivedAt,
      // The record's own time where its shape carries one (reports and transcripts use it).
      eventTs: eventTime(record.platform, record.type, record.body, receivedAt),
      idempotencyKey: record.idempotencyKey,
    },
    // Normalized once, here, from the body the validator already parsed.
    messages: normalizeRecord(record.platform, record.type, record.body),
  }
}

/**
 * Stores a validated record with its normalized messages and puts them on the firehose.
 * Shared by `POST /track` and the Messenger webhook. A repeated idempotency key stores nothing
 * and publishes nothing: `duplicate: true` with the stored id.
 *
 * @example const { id } = await ingest(store, feed, { bot: 'demo', platform: 'universal', type: 'incoming', v: '11.1.0-rest', raw, body })
 */
export async function ingest(
  store: RecordStore,
  feed: LiveFeed,
  record: AcceptedRecord,
): Promise<{ id: number; duplicate: boolean }> {
  const { record: incoming, messages } = prepare(record, Date.now())
  const stored = await store.add(incoming, messages)
  for (const m of stored.messages) feed.publish('message', m, m.bot)
  return { id: stored.id, duplicate: stored.duplicate === true }
}

/**
 * Stores validated records in ONE store transaction, in order, then publishes their messages
 * on the firehose in that order. Used by `POST /track/batch`.
 *
 * @example const results = await ingestMany(store, feed, [recordA, recordB])
 */
export async function ingestMany(
  store: RecordStore,
  feed: LiveFeed,
  records: readonly AcceptedRecord[],
): Promise<AddResult[]> {
  if (records.length === 0) return []
  const receivedAt = Date.now()
  const results = await store.addMany(records.map((r) => prepare(r, receivedAt)))
  for (const result of results) for (const m of result.messages) feed.publish('message', m, m.bot)
  return results
}
