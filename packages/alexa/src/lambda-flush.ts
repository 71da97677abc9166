import { inLambda, lambdaFlushBudget, type Tracker } from '@convotrack/core'

/** Default of `flushTimeoutMs`: the most a Lambda answer waits for delivery. */
export const DEFAULT_FLUSH_TIMEOUT_MS = 800

/** When to wait for delivery before the skill's answer is returned. */
export type FlushPolicy = 'lambda' | boolean

/**
 * How long to wait for delivery before answering, or undefined for "don't wait". In Lambda
 * the runtime freezes as soon as the answer is returned, so queued records would sit frozen
 * (and be lost with the container); elsewhere delivery carries on in the background. The
 * budget is core's `lambdaFlushBudget` (kept inside the invocation's remaining time).
 */
export function flushBudget(policy: FlushPolicy, timeoutMs: number, context: unknown): number | undefined {
  if (policy === false) return undefined
  if (policy === 'lambda' && !inLambda(context)) return undefined
  return lambdaFlushBudget(timeoutMs, context)
}

/** Waits for delivery within the budget. Never rejects, never throws. */
export async function flushWithin(tracker: Tracker, budgetMs: number | undefined): Promise<void> {
  if (budgetMs === undefined) return
  try {
    await tracker.flush(budgetMs)
  } catch (error) {
    tracker.reportError(error)
  }
}
