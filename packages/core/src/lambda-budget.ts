/**
 * Time kept free before a Lambda's deadline when waiting for delivery, in ms: enough for the
 * runtime to return the answer after the flush gives up. One margin for every adapter.
 */
export const LAMBDA_SAFETY_MARGIN_MS = 500

/**
 * What is left of a Lambda invocation, from its context (`getRemainingTimeInMillis()`), or
 * undefined when `context` is not a Lambda context.
 *
 * @example remainingLambdaMs(context) // 2841
 */
export function remainingLambdaMs(context: unknown): number | undefined {
  const fn = (context as { getRemainingTimeInMillis?: unknown } | null | undefined)?.getRemainingTimeInMillis
  if (typeof fn !== 'function') return undefined
  try {
    const ms = fn.call(context)
    return typeof ms === 'number' && Number.isFinite(ms) ? ms : undefined
  } catch {
    return undefined
  }
}

/** True in AWS Lambda: a context with `getRemainingTimeInMillis`, or `AWS_LAMBDA_FUNCTION_NAME` set. */
export function inLambda(context?: unknown): boolean {
  return remainingLambdaMs(context) !== undefined || Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME)
}

/**
 * How long a Lambda handler may wait for delivery before it answers: `timeoutMs`, cut to the
 * invocation's remaining time minus `marginMs` (default {@link LAMBDA_SAFETY_MARGIN_MS}), never below 0. Without a
 * Lambda context, `timeoutMs`.
 *
 * @example await tracker.flush(lambdaFlushBudget(3000, context))
 */
export function lambdaFlushBudget(timeoutMs: number, context?: unknown, marginMs = LAMBDA_SAFETY_MARGIN_MS): number {
  const remaining = remainingLambdaMs(context)
  if (remaining === undefined) return Math.max(0, timeoutMs)
  return Math.max(0, Math.min(timeoutMs, remaining - marginMs))
}
