import { RefusedRecordError, TransportError } from './errors'

/** How one attempt failed: the service's answer, or the network error. */
export interface AttemptFailure {
  error: unknown
  status?: number
  retryAfterMs?: number
  body?: string
  /** The request's deadline passed (the error is undici's abort). */
  timedOut?: boolean
  /**
   * It failed before any answer on a kept-alive socket of an earlier request: most likely one the
   * service had just closed (the keep-alive race every HTTP client meets), not this request's fault.
   */
  stale?: boolean
}

/** The service's own text, quoted in errors, without the tracking key in any spelling. */
export function scrub(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/([?&]apiKey=)[^&\s"'<>]*/g, '$1***')
  for (const secret of secrets) {
    for (const form of new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ k: secret }).toString().slice(2),
    ]))
      if (form) out = out.split(form).join('***')
  }
  return out
}

/** The error reported for a failed attempt (built only when someone reads it). */
export function toTransportError(
  f: AttemptFailure,
  attempts: number,
  retryable: boolean,
  timeoutMs: number,
): TransportError {
  if (f.status !== undefined) {
    const what = retryable
      ? `gave up after ${plural(attempts, 'attempt')}`
      : 'not retried (client error: fix the record or the key)'
    return new TransportError(
      `http_${f.status}`,
      `tracking service answered ${f.status}; ${what}${f.body ? `: ${f.body}` : ''}`,
      f.status,
      attempts,
    )
  }
  const err = f.error as { name?: string; code?: string; message?: string } | undefined
  const timeout = f.timedOut === true || err?.name === 'TimeoutError' || err?.name === 'AbortError'
  const reason = timeout ? `no answer within ${timeoutMs} ms` : (err?.code ?? err?.message ?? 'network error')
  return new TransportError(
    timeout ? 'timeout' : 'network',
    `tracking service unreachable (${reason}); ${plural(attempts, 'attempt')}`,
    undefined,
    attempts,
    f.error,
  )
}

/** A record of a batch the service refused (validated as `POST /track` would): reported, not retried. */
export function refusedRecordError(
  e: { code?: string; message?: string; path?: string } | undefined,
  attempts: number,
): RefusedRecordError {
  const code = typeof e?.code === 'string' && e.code ? e.code : 'refused'
  const message = typeof e?.message === 'string' ? e.message : 'refused by the tracking service'
  return new RefusedRecordError(code, message, typeof e?.path === 'string' ? e.path : '', attempts)
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}
