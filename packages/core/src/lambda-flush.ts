import { inLambda, LAMBDA_SAFETY_MARGIN_MS, lambdaFlushBudget } from './lambda-budget'
import type { FlushResult, Tracker } from './tracker-types'

/** Default of `flushTimeoutMs` in {@link flushForLambda} and {@link withLambdaFlush}. */
export const DEFAULT_LAMBDA_FLUSH_MS = 3_000

/**
 * When to wait for delivery before a handler returns: `'lambda'` only when running in AWS
 * Lambda (the runtime freezes the process as soon as the answer is returned), `true` always,
 * `false` never.
 */
export type LambdaFlushWhen = 'lambda' | boolean

/** Options of the Lambda flush: the same names in every adapter that flushes before returning. */
export interface LambdaFlushOptions {
  /**
   * Longest wait for delivery before the handler returns, in ms, cut to the invocation's
   * remaining time minus `safetyMarginMs`. Default {@link DEFAULT_LAMBDA_FLUSH_MS}; each adapter
   * documents its own (a voice answer waits 800 ms at most).
   */
  flushTimeoutMs?: number
  /** Time kept free before the Lambda deadline, in ms. Default {@link LAMBDA_SAFETY_MARGIN_MS}. */
  safetyMarginMs?: number
  /** When to wait. Default `'lambda'`. */
  flush?: LambdaFlushWhen
}

/**
 * Flushes `tracker` before a Lambda handler returns, within the invocation's time. Resolves to
 * the flush's result, or undefined when it did not wait (`flush: false`, or `'lambda'` outside
 * Lambda). Never rejects: a failing flush is reported through the tracker's `onError`.
 *
 * @example await flushForLambda(tracker, context, { flushTimeoutMs: 2000 })
 */
export async function flushForLambda(
  tracker: Pick<Tracker, 'flush' | 'reportError'>,
  context: unknown,
  options: LambdaFlushOptions = {},
): Promise<FlushResult | undefined> {
  const when = options.flush ?? 'lambda'
  if (when === false || (when === 'lambda' && !inLambda(context))) return undefined
  const budget = lambdaFlushBudget(
    options.flushTimeoutMs ?? DEFAULT_LAMBDA_FLUSH_MS,
    context,
    options.safetyMarginMs ?? LAMBDA_SAFETY_MARGIN_MS,
  )
  try {
    return await tracker.flush(budget)
  } catch (error) {
    tracker.reportError(error)
    return undefined
  }
}

/**
 * Wraps a Lambda handler `(event, context, …) => Promise` so the tracker is flushed (see
 * {@link flushForLambda}, default `flush: true`) before it returns. The handler's result or
 * error is passed on unchanged.
 *
 * @example export const handler = withLambdaFlush(receiver.toHandler(), tracker, { flushTimeoutMs: 3000 })
 */
export function withLambdaFlush<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
  tracker: Pick<Tracker, 'flush' | 'reportError'>,
  options: LambdaFlushOptions = {},
): (...args: A) => Promise<R> {
  const opts: LambdaFlushOptions = { ...options, flush: options.flush ?? true }
  return async (...args: A): Promise<R> => {
    try {
      return await handler(...args)
    } finally {
      await flushForLambda(tracker, args[1], opts)
    }
  }
}
