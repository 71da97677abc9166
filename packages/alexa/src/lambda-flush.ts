import type { Tracker } from '@convotrack/core'
import { flushForLambda, type LambdaFlushWhen } from '@convotrack/core/adapter'

/** Default of `flushTimeoutMs`: the most a Lambda answer waits for delivery (a voice answer must be quick). */
export const DEFAULT_FLUSH_TIMEOUT_MS = 800

/** When to wait for delivery before the skill's answer is returned (core's `LambdaFlushWhen`). */
export type FlushPolicy = LambdaFlushWhen

/**
 * Waits for delivery before the answer is returned, with core's one Lambda flush helper: in
 * Lambda (`'lambda'`) the runtime freezes as soon as the answer is returned, so queued records
 * would sit frozen; elsewhere delivery carries on in the background. Never rejects.
 */
export async function flushBeforeAnswer(
  tracker: Tracker,
  policy: FlushPolicy,
  flushTimeoutMs: number,
  context: unknown,
): Promise<void> {
  await flushForLambda(tracker, context, { flush: policy, flushTimeoutMs })
}
