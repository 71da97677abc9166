import type { Tracker } from '@convotrack/core'

/** Default of `flushTimeoutMs`: the most a Lambda answer waits for delivery. */
export const DEFAULT_FLUSH_TIMEOUT_MS = 800

/** Time kept back from the Lambda's own deadline, so the answer always leaves in time. */
const LAMBDA_MARGIN_MS = 250

/** When to wait for delivery before the skill's answer is returned. */
export type FlushPolicy = 'lambda' | boolean

function remainingMs(context: unknown): number | undefined {
  const fn = (context as { getRemainingTimeInMillis?: unknown } | null | undefined)?.getRemainingTimeInMillis
  if (typeof fn !== 'function') return undefined
  try {
    const ms = fn.call(context)
    return typeof ms === 'number' && Number.isFinite(ms) ? ms : undefined
  } catch {
    return undefined
  }
}

/**
 * How long to wait for delivery before answering, or undefined for "don't wait". In Lambda
 * the runtime freezes as soon as the answer is returned, so queued records would sit frozen
 * (and be lost with the container); elsewhere delivery carries on in the background.
 */
export function flushBudget(policy: FlushPolicy, timeoutMs: number, context: unknown): number | undefined {
  if (policy === false) return undefined
  const remaining = remainingMs(context)
  const inLambda = remaining !== undefined || Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME)
  if (policy === 'lambda' && !inLambda) return undefined
  if (remaining === undefined) return timeoutMs
  return Math.max(0, Math.min(timeoutMs, remaining - LAMBDA_MARGIN_MS))
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
