import type { FlushResult, Tracker } from '@convotrack/core'
import { settlePending } from './pending'

/** Options of {@link withTrackingFlush}. */
export interface TrackingFlushOptions {
  /** Longest wait for records to be delivered after the handler returned, in ms. Default 3000. */
  timeoutMs?: number
  /** Time kept free before the Lambda deadline (`context.getRemainingTimeInMillis()`), in ms. Default 500. */
  safetyMarginMs?: number
}

/**
 * Hands over every record of the events handled so far (waiting for team name lookups) and
 * waits until they are delivered, at most `timeoutMs`. Never rejects. For runtimes that stop
 * the process once the response is sent.
 *
 * @example await flushSlackTracking(tracker, 2000)
 */
export async function flushSlackTracking(tracker: Tracker, timeoutMs = 3000): Promise<FlushResult> {
  const started = Date.now()
  await settlePending(tracker, timeoutMs)
  return tracker.flush(Math.max(0, timeoutMs - (Date.now() - started)))
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
  const timeoutMs = options.timeoutMs ?? 3000
  const margin = options.safetyMarginMs ?? 500
  return async (...args: A): Promise<R> => {
    try {
      return await handler(...args)
    } finally {
      let budget = timeoutMs
      try {
        const remaining = (
          args[1] as { getRemainingTimeInMillis?: () => number } | undefined
        )?.getRemainingTimeInMillis?.()
        if (typeof remaining === 'number' && Number.isFinite(remaining))
          budget = Math.max(0, Math.min(timeoutMs, remaining - margin))
        await flushSlackTracking(tracker, budget)
      } catch (error) {
        tracker.reportError(error)
      }
    }
  }
}
