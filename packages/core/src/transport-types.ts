import type { Dispatcher } from 'undici'
import type { TransportError } from './errors'
import type { RetryOptions } from './retry'
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
}

/** A record waiting to be delivered. */
export interface Pending extends RecordMeta {
  path: string
  attempts: number
  /** The gate round the last attempt was sent in (see `Gate.round`). */
  round: number
  /** Its ordering lane: the platform and conversation (else user), so they arrive in order. */
  lane: string
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
  onDrained(): void
}

export interface TransportOptions {
  baseUrl: string
  maxQueueSize: number
  concurrency: number
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
