import { createHash } from 'node:crypto'
import { RequestError } from '../errors'
import type { LiveFeed } from '../live/live-feed'
import type { AddResult, IncomingRecord, RecordStore, StoredMessage } from '../store/store'
import { isStoreDown } from '../store/store-unavailable'
import { blankRawCredentials, blankRecordCredentials } from './blank-credentials'
import { eventTime } from './event-time'
import type { RecordPlatform, StoredRecordType } from './legacy-records'
import { type NormalizedMessage, normalizeRecord } from './normalize'
import { pacer } from './take-turns'

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

export type Prepared = { record: IncomingRecord; messages: NormalizedMessage[] }

/**
 * What an idempotency key promises: the same platform, type, `v` and body (credentials blanked,
 * whitespace and number spelling ignored). A SHA-256, so it holds no personal data and outlives
 * an erasure.
 */
function fingerprintOf(record: AcceptedRecord, body: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify([record.platform, record.type, record.v, body]))
    .digest('base64url')
}

/**
 * Longest user, conversation or session id a message may have, in characters: the dashboard
 * names a transcript and an export by them in a URL (`?thread=`, `?user=`), which Node caps at
 * 16 kB of headers.
 */
export const MAX_ID_LENGTH = 1000

/** The ids every read route addresses a message by, each within {@link MAX_ID_LENGTH}. */
function checkIds(messages: readonly NormalizedMessage[]): void {
  for (const m of messages)
    for (const [name, id] of [
      ['userId', m.userId],
      ['conversationId', m.conversationId],
      ['sessionId', m.sessionId],
    ] as const)
      if (id !== null && id.length > MAX_ID_LENGTH)
        throw new RequestError(
          400,
          'invalid_field',
          `the message's ${name} is ${id.length} characters; at most ${MAX_ID_LENGTH} are accepted (ids are how transcripts and exports are addressed)`,
          name,
        )
}

/** A record as ingest stores it: credentials blanked, normalised, its event time and fingerprint (the scale bench's bulk seed uses it too). */
export function prepare(accepted: AcceptedRecord, receivedAt: number): Prepared {
  // Platform credentials are never kept, whoever sent them (the raw view shows them blanked).
  // The raw text is edited where the credentials sit, never re-serialised: what is kept is what
  // was sent. Scanned even when the parsed body had none (a repeated key: JSON.parse keeps the
  // last, the text holds both).
  const { body } = blankRecordCredentials(accepted.body)
  // Normalized once, here, from the body the validator already parsed.
  const messages = normalizeRecord(accepted.platform, accepted.type, body)
  checkIds(messages)
  return {
    record: {
      bot: accepted.bot,
      platform: accepted.platform,
      type: accepted.type,
      v: accepted.v,
      raw: blankRawCredentials(accepted.raw),
      receivedAt,
      // The record's own time where its shape carries one (reports and transcripts use it).
      eventTs: eventTime(accepted.platform, accepted.type, body, receivedAt),
      idempotencyKey: accepted.idempotencyKey,
      ...(accepted.idempotencyKey === undefined ? {} : { fingerprint: fingerprintOf(accepted, body) }),
    },
    messages,
  }
}

/**
 * The 4xx a record gets when preparing or storing it failed for a reason of its own (a bug in
 * a normaliser, a value the database refuses): 422 `unsupported_record`. Logged with the
 * record's position, never its content.
 */
function recordFailure(error: unknown, where: string): RequestError {
  const e = error as { name?: unknown; code?: unknown } | undefined
  console.error(
    `[convotrack-collector] ${where} could not be stored; refused with 422:`,
    `${String(e?.name ?? 'Error')}${typeof e?.code === 'string' ? ` ${e.code}` : ''}`,
  )
  return new RequestError(
    422,
    'unsupported_record',
    'the collector cannot store this record (a value it refuses); it is refused, retrying will not help',
    '',
  )
}

/** 409 for a key reused with another record (the IETF Idempotency-Key draft; Stripe does the same). */
function keyReused(key: string, path: string): RequestError {
  return new RequestError(
    409,
    'idempotency_key_reused',
    `idempotency key "${key}" was already used for a different record (platform, type, v or body differ); use a new key for a new record`,
    path,
  )
}

/** A repeat whose stored fingerprint differs from this record's is a key reused for another record. */
function checkRepeat(result: AddResult, record: IncomingRecord, keyPath: string): AddResult | RequestError {
  if (
    result.duplicate &&
    record.idempotencyKey !== undefined &&
    result.fingerprint !== undefined &&
    result.fingerprint !== record.fingerprint
  )
    return keyReused(record.idempotencyKey, keyPath)
  return result
}

/**
 * Puts stored messages on the firehose after the answer is decided (the handler answers in this
 * turn; this runs in the next), and never lets a live stream fail or delay the request.
 */
function publishLater(feed: LiveFeed, messages: StoredMessage[]): void {
  if (messages.length === 0) return
  setImmediate(() => {
    for (const m of messages)
      try {
        feed.publish('message', m, m.bot)
      } catch (e) {
        console.error('[convotrack-collector] live feed publish failed', (e as Error)?.message ?? e)
      }
  })
}

/**
 * Told of the messages each record stored (the handoff queue). Must return at once and never
 * throw: it runs on the ingest path, after the store answered.
 */
export type StoredHook = (messages: readonly StoredMessage[]) => void

function tell(hook: StoredHook | undefined, messages: readonly StoredMessage[]): void {
  if (!hook || messages.length === 0) return
  try {
    hook(messages)
  } catch {
    // A hook's failure is the hook's: the record is stored and acknowledged regardless.
  }
}

/**
 * Stores a validated record with its normalized messages and puts them on the firehose.
 * Shared by `POST /track` and the Messenger webhook. A repeated idempotency key stores nothing
 * and publishes nothing: `duplicate: true` with the stored id; the same key with a different
 * record is refused (409 `idempotency_key_reused`). A failure of the record itself is a
 * {@link RequestError} (422); any other rejection means the store is down (answer 503).
 *
 * @example const { id } = await ingest(store, feed, { bot: 'demo', platform: 'universal', type: 'incoming', v: '11.1.0-rest', raw, body })
 */
export async function ingest(
  store: RecordStore,
  feed: LiveFeed,
  record: AcceptedRecord,
  onStored?: StoredHook,
): Promise<{ id: number; duplicate: boolean }> {
  let prepared: Prepared
  try {
    prepared = prepare(record, Date.now())
  } catch (e) {
    throw e instanceof RequestError ? e : recordFailure(e, 'the record')
  }
  let stored: AddResult
  try {
    const added = await store.add(prepared.record, prepared.messages)
    stored = { ...added, duplicate: added.duplicate === true }
  } catch (e) {
    if (isStoreDown(e)) throw e
    throw recordFailure(e, 'the record')
  }
  const checked = checkRepeat(stored, prepared.record, 'idempotency-key')
  if (checked instanceof RequestError) throw checked
  publishLater(feed, stored.messages)
  tell(onStored, stored.messages)
  return { id: stored.id, duplicate: stored.duplicate }
}

/**
 * Stores validated records in ONE store transaction, in order, then publishes their messages
 * on the firehose in that order. Used by `POST /track/batch`. The result at each index is the
 * record's {@link AddResult}, or the {@link RequestError} refusing it (a key reused with another
 * record; a record the store cannot keep). Rejects only when the store is down.
 *
 * Should the transaction fail for a record's sake (a bug: validation lets nothing through that a
 * store refuses), the batch is split in halves until the failing records are alone; the others
 * are stored, in order, in a few transactions.
 *
 * @example const results = await ingestMany(store, feed, [recordA, recordB])
 */
export async function ingestMany(
  store: RecordStore,
  feed: LiveFeed,
  records: readonly AcceptedRecord[],
  options: { where?: (i: number) => string; onStored?: StoredHook | undefined } = {},
): Promise<Array<AddResult | RequestError>> {
  const where = options.where ?? ((i: number) => `record ${i}`)
  const receivedAt = Date.now()
  const results: Array<AddResult | RequestError> = new Array(records.length)
  const ready: Array<{ index: number; item: Prepared }> = []
  const pace = pacer()
  for (const [index, r] of records.entries()) {
    try {
      ready.push({ index, item: prepare(r, receivedAt) })
    } catch (e) {
      results[index] = e instanceof RequestError ? e : recordFailure(e, where(index))
    }
    await pace(r.raw.length)
  }
  // Ranges still to store, in order; a failing range is split and its halves stored in turn.
  const todo: Array<Array<{ index: number; item: Prepared }>> = ready.length ? [ready] : []
  for (let group = todo.shift(); group; group = todo.shift()) {
    try {
      const stored = await store.addMany(group.map((g) => g.item))
      for (const [i, g] of group.entries())
        results[g.index] = checkRepeat(stored[i] as AddResult, g.item.record, 'idempotencyKey')
    } catch (e) {
      if (isStoreDown(e)) throw e
      const only = group[0]
      if (group.length === 1 && only) results[only.index] = recordFailure(e, where(only.index))
      else {
        const half = Math.ceil(group.length / 2)
        todo.unshift(group.slice(0, half), group.slice(half))
      }
    }
  }
  publishLater(
    feed,
    results.flatMap((r) => (r instanceof RequestError ? [] : r.messages)),
  )
  for (const r of results) if (!(r instanceof RequestError)) tell(options.onStored, r.messages)
  return results
}
