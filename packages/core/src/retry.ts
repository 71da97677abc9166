/** Retry policy of the transport (which failures retry, and how long to wait). */

/** Backoff and cap settings. All in milliseconds. */
export interface RetryOptions {
  /** Attempts per record, the first included (default 10). */
  maxAttempts?: number
  /** First backoff delay (default 200). */
  minDelayMs?: number
  /** Largest backoff delay (default 30 000). */
  maxDelayMs?: number
  /** Largest wait honoured from a `Retry-After` header (default 60 000). */
  maxRetryAfterMs?: number
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 10,
  minDelayMs: 200,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
}

/** 408, 429 and 5xx retry; 501 (not implemented) and 505 (version) never will succeed. */
export function isRetryableStatus(status: number): boolean {
  if (status === 408 || status === 429) return true
  return status >= 500 && status <= 599 && status !== 501 && status !== 505
}

/** Exponential backoff with equal jitter: half the step fixed, half random, so waits never collapse to zero. */
export function backoffDelay(
  attempt: number,
  opts: Required<RetryOptions>,
  random: () => number = Math.random,
): number {
  const step = Math.min(opts.maxDelayMs, opts.minDelayMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(step / 2 + random() * (step / 2))
}

/** `Retry-After` as delta-seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value
  if (v === undefined || v.trim() === '') return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.max(0, Math.round(Number(v) * 1000))
  const date = Date.parse(v)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Network errors where the request never reached the service: waiting is all that helps, no attempt is spent. */
export function isConnectError(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code ?? (error as { cause?: { code?: string } })?.cause?.code
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH'
  )
}
