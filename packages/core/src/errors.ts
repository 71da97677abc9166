/** Base class of every error convotrack raises or reports. `code` is stable; match on it. */
export class ConvotrackError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/**
 * A record that does not follow the spec's rules (nothing is queued). Reported through
 * `onError` and counted `invalid` (the call returns false); thrown synchronously by a direct
 * tracking call only with `strict: true`.
 *
 * @example
 * createTracker({ onError: (e) => { if (e instanceof InvalidRecordError) console.log(e.path, e.rule) } })
 * // 'userId', 'is required…'
 */
export class InvalidRecordError extends ConvotrackError {
  /** Dotted path of the offending field, e.g. `buttons[0].label` or `amount`. */
  readonly path: string
  /** The rule the field broke, in words. */
  readonly rule: string
  constructor(path: string, rule: string, context?: string) {
    super('invalid_record', `${context ? `${context}: ` : ''}\`${path || '(record)'}\` ${rule}`)
    this.path = path
    this.rule = rule
  }
}

/** Delivery failed for good: a non-retryable status, or retries/deadline exhausted. */
export class TransportError extends ConvotrackError {
  /** HTTP status when the service answered; undefined for network errors and timeouts. */
  readonly status: number | undefined
  /** Attempts made for the record. */
  readonly attempts: number
  constructor(code: string, message: string, status: number | undefined, attempts: number, cause?: unknown) {
    super(code, message, { cause })
    this.status = status
    this.attempts = attempts
  }
}

/**
 * A record of a batch the service refused (validated exactly as `POST /track` would): not
 * retried, reported through `onError` and counted as failed. `code` is the service's own code.
 *
 * @example
 * tracker.on('error', (e) => { if (e instanceof RefusedRecordError) console.log(e.code, e.path) })
 */
export class RefusedRecordError extends TransportError {
  /** Dotted path of the offending field, as the service named it (may be empty). */
  readonly path: string
  constructor(code: string, message: string, path: string, attempts: number) {
    super(code, `tracking service refused the record: ${message}`, 200, attempts)
    this.path = path
  }
}

/** A record not accepted because the queue was full, it was redacted away, or the tracker was closed. */
export class DroppedRecordError extends ConvotrackError {
  readonly reason: DropReason
  /** Records this report stands for: a full queue reports its drops in one summary per second. */
  readonly count: number
  constructor(reason: DropReason, message: string, count = 1) {
    super(`dropped_${reason}`, message)
    this.reason = reason
    this.count = count
  }
}

/** Why a record was dropped. */
export type DropReason = 'queue_full' | 'redacted' | 'closed'

/** Kept for existing `instanceof` checks: a tracking call after `close()` no longer throws; the record is dropped (`closed`) and reported. */
export class TrackerClosedError extends ConvotrackError {
  constructor() {
    super('tracker_closed', 'the tracker is closed: create a new tracker to track more records')
  }
}

/** Bad tracker configuration (for example a missing API key). */
export class ConfigError extends ConvotrackError {
  constructor(message: string) {
    super('config', message)
  }
}

/** A pause webhook whose signature, timestamp or id did not verify. Deliberately vague about which check failed. */
export class SignatureError extends ConvotrackError {
  constructor(message = 'webhook signature verification failed', code = 'invalid_signature') {
    super(code, message)
  }
}
