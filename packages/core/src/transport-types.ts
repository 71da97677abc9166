import type { Dispatcher } from 'undici'
import type { TransportError } from './errors'
import type { RetryOptions } from './retry'
import type { RecordOutcome } from './tracker-types'
import type { Platform, RecordType } from './types'

/** What the transport knows of a record, handed to `onError` and the events. */
export interface RecordMeta {
  platform: Platform
  type: RecordType
  userId: string | undefined
  /** The JSON body as it is (or was to be) sent. */
  body: string
  /** Delivery order is kept per conversation: this key, else the user. */
  conversation?: string | undefined
  /** Its idempotency key when one was made at the call (someone asked for its fate); else made when first sent. */
  key?: string | undefined
  /** Told what became of it, when someone asked (`onRecord`). */
  fate?: ((outcome: RecordOutcome) => void) | undefined
}

/** A record waiting to be delivered. */
export interface Pending extends RecordMeta {
  /** Idempotency key: stable across retries (header `Idempotency-Key`, or `idempotencyKey` in a batch); '' until first sent. */
  key: string
  /** Path + query of its single-record request (`/track?platform&v&type&apiKey`). */
  path: string
  v: string
  /** Its ordering lane: the platform and conversation (else user), so they arrive in order. */
  lane: string
  /** Bytes in a batch (0 until measured). */
  bytes: number
}

/** One request: a single record, or a batch. Retried as a whole. */
export interface Shipment {
  records: Pending[]
  batch: boolean
  path: string
  body: string
  /** Flat name, value, name, value… (undici takes them as they are). */
  headers: string[]
  attempts: number
  /** Failures without an answer, in bursts of them, that spent no attempt (see the transport). */
  spared: number
  /** The gate round it was last sent in (see `Gate.round`). */
  round: number
  /** When it was last sent (ms since the epoch; the limiter's rounds). */
  sentAt: number
  /** Its place in the order of sends (see `ShipmentFacts.seq`). */
  seq: number
}

/** Counters of the transport; see `tracker.stats()`. */
export interface TransportStats {
  /** Waiting to be sent (including those waiting out a retry delay). */
  queued: number
  inFlight: number
  /** Of `queued`, those waiting out a retry delay. */
  retrying: number
  sent: number
  /** Retry attempts made (one record may count several). */
  retried: number
  failed: number
  dropped: number
  droppedByReason: { queue_full: number; redacted: number; closed: number }
}

/** What the transport tells its owner (the tracker). */
export interface TransportHooks {
  onSent(meta: RecordMeta, status: number): void
  onFailed(error: TransportError, meta: RecordMeta): void
  onRetry(error: TransportError, meta: RecordMeta, delayMs: number): void
  /** Whether anyone reads `onRetry` (errors are built only then). */
  wantsRetry(): boolean
  onDrained(): void
}

export interface TransportOptions {
  baseUrl: string
  apiKey: string
  /** Most records held (queued, retrying, in flight); undefined: no count limit. */
  maxQueueSize: number | undefined
  /** Most bytes of record bodies held. */
  maxQueueBytes: number
  /** Cap of the adaptive concurrency limit. */
  concurrency: number
  /** false: never batch, even when the service advertises it. */
  batch: boolean
  timeoutMs: number
  retry: RetryOptions
  dispatcher?: Dispatcher | undefined
  userAgent: string
  /** Values never quoted in an error (the tracking key): a service page may echo the request URL. */
  secrets?: readonly string[]
}

/** What is pending in the transport, for the loss report at close and at exit. */
export interface PendingSummary {
  /** Records queued, waiting out a retry or in flight. */
  records: number
  /** Conversations (else users) they belong to. */
  conversations: number
  /** Of `records`, those waiting out a retry delay or the gate. */
  retrying: number
  /** The last attempts could not connect: the service is unreachable. */
  unreachable: boolean
}
