import type { Logger } from 'pino'
import type { CollectorMetrics } from '../ops/metrics'
import type { AlertOptions, WebhookRetryOptions } from '../options'
import type { HandoffEntry } from '../store/handoff-records'
import { postWebhook } from './webhook-client'

/** What an alert POSTs when a conversation enters the handoff queue. */
export interface HandoffAlert {
  type: 'handoff.waiting'
  bot: string
  thread: string
  userId: string
  reason: HandoffEntry['reason']
  /** One line a Slack incoming webhook shows as is: who waits, why, what they wrote, and the link. */
  text: string
  /** The incoming message that put the conversation in the queue. */
  message: string | null
  /** Opens the conversation in the dashboard. */
  url: string
}

const DEFAULT_ALERT_RETRY: Required<WebhookRetryOptions> = { attempts: 5, baseDelayMs: 500, timeoutMs: 5_000 }

const REASONS: Record<string, string> = {
  asked: 'asked for a person',
  'not-handled': 'is stuck (the bot did not understand)',
  feedback: 'left negative feedback',
}

/**
 * Checks the `alerts` option; throws a TypeError naming the field.
 *
 * @example validateAlerts([{ url: 'https://hooks.example.com/x', events: ['handoff.waiting'] }])
 */
export function validateAlerts(alerts: unknown): AlertOptions[] {
  if (alerts === undefined) return []
  if (!Array.isArray(alerts)) throw new TypeError('alerts must be an array')
  return alerts.map((a, i) => {
    const o = (a ?? {}) as Record<string, unknown>
    if (typeof o.url !== 'string' || !/^https?:\/\//.test(o.url))
      throw new TypeError(`alerts[${i}].url must be an http(s) URL`)
    if (!Array.isArray(o.events) || o.events.length === 0 || o.events.some((e) => e !== 'handoff.waiting'))
      throw new TypeError(`alerts[${i}].events must list 'handoff.waiting'`)
    if (o.secret !== undefined && (typeof o.secret !== 'string' || o.secret === ''))
      throw new TypeError(`alerts[${i}].secret must be a non-empty string (whsec_…)`)
    return { url: o.url, events: ['handoff.waiting'], ...(typeof o.secret === 'string' ? { secret: o.secret } : {}) }
  })
}

/**
 * Sends `handoff.waiting` alerts: each one in the background (never awaited by ingest), signed
 * like the pause webhook when the alert has a secret, retried with backoff under one
 * `webhook-id` (the pause webhook's client, live/webhook-client.ts). Outcomes are counted in
 * `convotrack_alerts_total` and failures logged (the URL's host only: a Slack webhook's path is a secret).
 *
 * @example alerts.waiting(entry) // returns at once
 */
export class HandoffAlerts {
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    private readonly deps: {
      alerts: readonly AlertOptions[]
      retry: WebhookRetryOptions | undefined
      metrics: CollectorMetrics
      log: Logger
      /** The dashboard's address (`publicUrl`, else the collector's). */
      baseUrl: () => string
    },
  ) {}

  /** The alert's body for a queue entry. */
  body(entry: HandoffEntry): HandoffAlert {
    const url = `${this.deps.baseUrl().replace(/\/+$/, '')}/#/conversations/${encodeURIComponent(entry.bot)}/${encodeURIComponent(entry.thread)}`
    const why = REASONS[entry.reason ?? ''] ?? 'needs a person'
    const said = entry.text ? `: “${entry.text.length > 300 ? `${entry.text.slice(0, 300)}…` : entry.text}”` : ''
    return {
      type: 'handoff.waiting',
      bot: entry.bot,
      thread: entry.thread,
      userId: entry.userId,
      reason: entry.reason,
      text: `[${entry.bot}] ${entry.userId} ${why}${said} — ${url}`,
      message: entry.text,
      url,
    }
  }

  /** Queues the alerts of a conversation that just entered the queue; returns at once. */
  waiting(entry: HandoffEntry): void {
    const targets = this.deps.alerts.filter((a) => a.events.includes('handoff.waiting'))
    if (targets.length === 0) return
    const body = this.body(entry)
    const retry = { ...DEFAULT_ALERT_RETRY, ...this.deps.retry }
    for (const alert of targets) {
      const p = postWebhook(alert.url, body, { secret: alert.secret, retry }).then(
        (result) => {
          this.deps.metrics.alerts.inc({ event: body.type, outcome: result.ok ? 'ok' : 'failed' })
          if (!result.ok)
            this.deps.log.warn(
              { alert: hostOf(alert.url), attempts: result.attempts, error: result.error, bot: entry.bot },
              'handoff alert failed',
            )
        },
        () => this.deps.metrics.alerts.inc({ event: body.type, outcome: 'failed' }),
      )
      this.inFlight.add(p)
      void p.finally(() => this.inFlight.delete(p))
    }
  }

  /** Alerts still being delivered (tests and shutdown). */
  get pending(): number {
    return this.inFlight.size
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return '?'
  }
}
