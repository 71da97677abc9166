import type { FlushResult, Tracker } from '@convotrack/core'
import { withLambdaFlush } from '@convotrack/core/adapter'

/** Options of {@link withTrackingFlush}. */
export interface TrackingFlushOptions {
  /**
   * Longest wait for records to be delivered after the handler returned, in ms. Default 3000.
   * The same name as in `@convotrack/alexa` and core's `withLambdaFlush`.
   */
  flushTimeoutMs?: number
  /**
   * The same as `flushTimeoutMs`.
   *
   * @deprecated Use `flushTimeoutMs` (one name in every adapter).
   */
  timeoutMs?: number
  /** Time kept free before the Lambda deadline (`context.getRemainingTimeInMillis()`), in ms. Default core's `LAMBDA_SAFETY_MARGIN_MS` (500). */
  safetyMarginMs?: number
}

/**
 * Waits until every record of the events handled so far is delivered (team name lookups
 * included), at most `timeoutMs`: the same as `tracker.flush(timeoutMs)`, kept for
 * existing code. Never rejects.
 *
 * @example await flushSlackTracking(tracker, 2000)
 */
export function flushSlackTracking(tracker: Tracker, timeoutMs = 3000): Promise<FlushResult> {
  return tracker.flush(timeoutMs)
}

/**
 * Wraps a Lambda handler (such as `AwsLambdaReceiver#toHandler()`) so the tracker is flushed
 * before it returns: Lambda freezes the process as soon as the handler's promise settles, and
 * queued records would otherwise wait for the next invocation or be lost. The handler's result
 * or error is passed on unchanged; the wait ends before the Lambda deadline.
 *
 * @example export const handler = withTrackingFlush(receiver.toHandler(), tracker)
 */
export function withTrackingFlush<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
  tracker: Tracker,
  options: TrackingFlushOptions = {},
): (...args: A) => Promise<R> {
  return withLambdaFlush(handler, tracker, {
    flushTimeoutMs: options.flushTimeoutMs ?? options.timeoutMs ?? 3000,
    safetyMarginMs: options.safetyMarginMs,
  })
}
