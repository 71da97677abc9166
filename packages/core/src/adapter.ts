/**
 * `@convotrack/core/adapter`: what framework adapters need from a tracker and a bot never
 * calls — holding a turn's records until the turn has decided about them, registering work
 * that will produce records, handing over records serialized elsewhere, reporting, sending
 * records somewhere other than the service, and flushing before a Lambda returns. The user's
 * `Tracker` keeps the same names as methods (deprecated there) so existing adapters keep working.
 *
 * @example
 * import { holdTurn, reportError } from '@convotrack/core/adapter'
 * const held = holdTurn(tracker)
 * held.hold(() => tracker.kik.logIncoming(record))
 */
import type { HeldTurn } from './held-records'
import type { RecordInfo, RecordTransport, SerializedRecord, Tracker } from './tracker-types'
import type { TurnState } from './turn-scope'

export type { HeldLog, HeldTurn } from './held-records'
export { inLambda, LAMBDA_SAFETY_MARGIN_MS, lambdaFlushBudget, remainingLambdaMs } from './lambda-budget'
export {
  DEFAULT_LAMBDA_FLUSH_MS,
  flushForLambda,
  type LambdaFlushOptions,
  type LambdaFlushWhen,
  withLambdaFlush,
} from './lambda-flush'
export type { RecordInfo, RecordTransport, SerializedRecord } from './tracker-types'
export type { TurnState } from './turn-scope'

/**
 * Opens a buffer for the current turn's records (or the turn `state`'s): the adapter holds a
 * record there until the turn has decided about it (its NotHandled, its intent, the message a
 * reply answers). `flush()` and `close()` wait for held records.
 */
export function holdTurn(tracker: Tracker, state?: TurnState): HeldTurn {
  return tracker.holdTurn(state)
}

/** The current turn's open buffer from {@link holdTurn}, if any (a reply about to go out releases its message). */
export function heldTurn(tracker: Tracker): HeldTurn | undefined {
  return tracker.heldTurn()
}

/**
 * Registers work that will hand records to the tracker when it settles (a lookup the records
 * need): `flush()` and `close()` wait for it within their timeout.
 */
export function holdWork(tracker: Tracker, work: PromiseLike<unknown>): void {
  tracker.holdWork(work)
}

/** Hands over an already-serialized record (a forwarded log line) without serializing it again. */
export function trackSerialized(tracker: Tracker, record: SerializedRecord): boolean {
  return tracker.trackSerialized(record)
}

/** Reports a problem through the tracker's `onError` and `error` event; never throws. */
export function reportError(tracker: Tracker, error: unknown, record?: RecordInfo & { body?: string }): void {
  tracker.reportError(error, record)
}

/** The current turn's state, if a turn is active (with `includeLoose`, also state set outside any turn in this synchronous run). */
export function currentTurn(tracker: Tracker, options?: { includeLoose?: boolean }): TurnState | undefined {
  return tracker.currentTurn(options)
}

/**
 * Sends the tracker's records through `transport` from now on (log lines instead of requests),
 * or back to the tracking service with `undefined`. Records already queued are still delivered.
 * At creation, pass `createTracker({ transport })` instead.
 */
export function useSink(tracker: Tracker, transport: RecordTransport | undefined): void {
  tracker.useSink(transport && ((record) => transport.send(record)))
}
