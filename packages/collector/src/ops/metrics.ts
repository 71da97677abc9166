import type { NextFunction, Request, Response } from 'express'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { RecordStore } from '../store/store'

/** The routes whose answers count as ingest (records accepted / refused, latency). */
const INGEST_ROUTES = new Set(['/track', '/track/batch', '/messenger/webhook', '/v1/traces'])

/**
 * The collector's Prometheus metrics (prom-client), on a registry of its own so two collectors
 * in one process don't mix figures. Scraped at `GET /metrics`.
 *
 * @example const metrics = new CollectorMetrics(() => feed.size); metrics.recordsAccepted.inc({ bot: 'shop' })
 */
export class CollectorMetrics {
  readonly registry = new Registry()
  readonly recordsAccepted: Counter<'bot' | 'route'>
  readonly recordsRefused: Counter<'reason' | 'route'>
  readonly batchSize: Histogram<never>
  readonly ingestSeconds: Histogram<'route'>
  readonly storeErrors: Counter<'method'>
  readonly webhookCalls: Counter<'kind' | 'outcome'>
  readonly httpRequests: Counter<'method' | 'status'>
  readonly alerts: Counter<'event' | 'outcome'>
  readonly handoffs: Counter<'reason'>
  readonly autoResumes: Counter<'outcome'>
  readonly otlpSpans: Counter<'outcome'>

  constructor(openStreams: () => number) {
    const registers = [this.registry]
    this.recordsAccepted = new Counter({
      name: 'convotrack_records_accepted_total',
      help: 'Records stored, by bot and route (/track, /track/batch, /messenger/webhook, /v1/traces).',
      labelNames: ['bot', 'route'],
      registers,
    })
    this.recordsRefused = new Counter({
      name: 'convotrack_records_refused_total',
      help: 'Tracking requests refused, by error code.',
      labelNames: ['reason', 'route'],
      registers,
    })
    this.batchSize = new Histogram({
      name: 'convotrack_batch_size',
      help: 'Records per POST /track/batch request.',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers,
    })
    this.ingestSeconds = new Histogram({
      name: 'convotrack_ingest_duration_seconds',
      help: 'Time from request to answer on the tracking routes.',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    })
    this.storeErrors = new Counter({
      name: 'convotrack_store_errors_total',
      help: 'Store calls that failed, by method.',
      labelNames: ['method'],
      registers,
    })
    this.webhookCalls = new Counter({
      name: 'convotrack_webhook_calls_total',
      help: 'Pause / operator-message webhook calls, by outcome (ok, failed, no_webhook).',
      labelNames: ['kind', 'outcome'],
      registers,
    })
    this.httpRequests = new Counter({
      name: 'convotrack_http_requests_total',
      help: 'HTTP requests answered, by method and status.',
      labelNames: ['method', 'status'],
      registers,
    })
    this.alerts = new Counter({
      name: 'convotrack_alerts_total',
      help: 'Alerts delivered (after retries), by event and outcome (ok, failed).',
      labelNames: ['event', 'outcome'],
      registers,
    })
    this.handoffs = new Counter({
      name: 'convotrack_handoffs_queued_total',
      help: 'Conversations that entered the handoff queue, by reason (asked, not-handled, feedback).',
      labelNames: ['reason'],
      registers,
    })
    this.autoResumes = new Counter({
      name: 'convotrack_auto_resumes_total',
      help: 'Paused conversations resumed after the idle time, by outcome (ok, failed: the pause webhook refused).',
      labelNames: ['outcome'],
      registers,
    })
    this.otlpSpans = new Counter({
      name: 'convotrack_otlp_spans_total',
      help: 'OTLP spans at POST /v1/traces, by outcome: turn (a chat turn stored), ignored (not part of a chat turn), rejected.',
      labelNames: ['outcome'],
      registers,
    })
    new Gauge({
      name: 'convotrack_live_streams',
      help: 'Open live streams (dashboards).',
      registers,
      collect() {
        this.set(openStreams())
      },
    })
  }

  /**
   * Express middleware: counts answers of the tracking and webhook routes (accepted / refused
   * by the error code the error handler set in `res.locals.errorCode`) and their latency.
   */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const start = process.hrtime.bigint()
      // Taken now: inside a mounted router req.path is relative to the mount point.
      const path = req.path
      res.on('finish', () => {
        const status = res.statusCode
        this.httpRequests.inc({ method: req.method, status: String(status) })
        const route = INGEST_ROUTES.has(path) ? path : undefined
        if (route && req.method === 'POST') {
          this.ingestSeconds.observe({ route }, Number(process.hrtime.bigint() - start) / 1e9)
          // A batch route sets res.locals.batchSize (records sent) and res.locals.accepted (records stored).
          if (typeof res.locals.batchSize === 'number') this.batchSize.observe(res.locals.batchSize)
          if (status < 300) {
            const n = typeof res.locals.accepted === 'number' ? res.locals.accepted : 1
            this.recordsAccepted.inc({ bot: String(res.locals.bot ?? ''), route }, n)
            const refused = typeof res.locals.batchSize === 'number' ? res.locals.batchSize - n : 0
            if (refused > 0) this.recordsRefused.inc({ reason: 'invalid_record', route }, refused)
          } else this.recordsRefused.inc({ reason: String(res.locals.errorCode ?? `http_${status}`), route })
        }
        const kind = path === '/api/pause' ? 'pause' : path === '/api/operator-message' ? 'operator-message' : undefined
        if (kind && req.method === 'POST' && (status < 300 || status === 502 || status === 409))
          this.webhookCalls.inc({
            kind,
            outcome: status < 300 ? 'ok' : status === 502 ? 'failed' : 'no_webhook',
          })
      })
      next()
    }
  }
}

/**
 * Wraps a store so every failed call counts in `convotrack_store_errors_total`.
 *
 * @example const store = instrumentStore(new SqliteRecordStore(file), metrics)
 */
export function instrumentStore(store: RecordStore, metrics: CollectorMetrics): RecordStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver)
      if (typeof value !== 'function' || prop === 'constructor') return value
      const method = String(prop)
      return function (this: unknown, ...args: unknown[]) {
        try {
          const out = value.apply(target, args)
          if (out && typeof (out as Promise<unknown>).then === 'function')
            return (out as Promise<unknown>).catch((e: unknown) => {
              metrics.storeErrors.inc({ method })
              throw e
            })
          return out
        } catch (e) {
          metrics.storeErrors.inc({ method })
          throw e
        }
      }
    },
  })
}
