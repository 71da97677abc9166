import { randomUUID } from 'node:crypto'
import { backoffDelay, DEFAULT_RETRY, isRetryableStatus, signPauseWebhook } from '@convotrack/core'
import type { WebhookRetryOptions } from '../options'

/** How a webhook call ended. */
export interface WebhookResult {
  ok: boolean
  /** Last HTTP status, when the bot answered. */
  status?: number
  attempts: number
  /** Why it failed, in words. */
  error?: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * POSTs a JSON body to a bot's webhook (pause, unpause, operator message), signed with the
 * Standard Webhooks scheme when a secret is given. Retries network errors, timeouts and the
 * statuses core's policy retries (408, 429, 5xx but 501/505) with its exponential backoff; the same `webhook-id` on every attempt (so the receiver can
 * de-duplicate), a fresh timestamp and signature each time. Never rejects.
 *
 * @example await postWebhook('http://127.0.0.1:3000/convotrack/pause', { userId: 'u1', paused: true }, { secret })
 */
export async function postWebhook(
  url: string,
  payload: unknown,
  options: { secret?: string | undefined; retry?: WebhookRetryOptions | undefined } = {},
): Promise<WebhookResult> {
  const attempts = Math.max(1, options.retry?.attempts ?? 3)
  const baseDelay = options.retry?.baseDelayMs ?? 250
  const timeoutMs = options.retry?.timeoutMs ?? 5000
  const body = JSON.stringify(payload)
  const id = `msg_${randomUUID()}`
  let last: WebhookResult = { ok: false, attempts: 0 }
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'convotrack-collector' }
    if (options.secret) Object.assign(headers, signPauseWebhook({ secret: options.secret, body, id }))
    let retryable = true
    try {
      const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) })
      const text = await res.text().catch(() => '')
      if (res.ok) return { ok: true, status: res.status, attempts: attempt }
      retryable = isRetryableStatus(res.status)
      last = {
        ok: false,
        status: res.status,
        attempts: attempt,
        error: `the bot answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
      }
    } catch (e) {
      const err = e as { name?: string; cause?: { code?: string }; message?: string }
      const reason =
        err.name === 'TimeoutError'
          ? `no answer within ${timeoutMs} ms`
          : (err.cause?.code ?? err.message ?? 'network error')
      last = { ok: false, attempts: attempt, error: `webhook unreachable (${reason})` }
    }
    if (!retryable || attempt === attempts) break
    // Core's retry policy: exponential backoff from `baseDelayMs`, equal jitter.
    await sleep(backoffDelay(attempt, { ...DEFAULT_RETRY, minDelayMs: baseDelay }))
  }
  return last
}
