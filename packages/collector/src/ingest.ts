import { blankRecordCredentials } from './blank-credentials'
import type { RecordPlatform, StoredRecordType } from './legacy-records'
import type { LiveFeed } from './live-feed'
import { normalizeRecord } from './normalize'
import type { RecordStore } from './store'

/** What an accepted record needs: already validated. */
export interface AcceptedRecord {
  bot: string
  platform: RecordPlatform
  type: StoredRecordType
  /** As sent: the spec's `11.1.0-rest`, the dashbot SDK's `12.1.0-npm`… */
  v: string
  raw: string
  body: Record<string, unknown>
}

/**
 * Stores a validated record with its normalized messages and puts them on the firehose.
 * Shared by `POST /track` and the Messenger webhook.
 *
 * @example const { id } = await ingest(store, feed, { bot: 'demo', platform: 'universal', type: 'incoming', v: '11.1.0-rest', raw, body })
 */
export async function ingest(store: RecordStore, feed: LiveFeed, accepted: AcceptedRecord): Promise<{ id: number }> {
  // Platform credentials are never kept, whoever sent them (the raw view shows them blanked).
  const { body, blanked } = blankRecordCredentials(accepted.body)
  const record = blanked.length ? { ...accepted, body, raw: JSON.stringify(body) } : accepted
  const messages = normalizeRecord(record.platform, record.type, record.body)
  const stored = await store.add(
    {
      bot: record.bot,
      platform: record.platform,
      type: record.type,
      v: record.v,
      raw: record.raw,
      receivedAt: Date.now(),
    },
    messages,
  )
  for (const m of stored.messages) feed.publish('message', m, m.bot)
  return { id: stored.id }
}
