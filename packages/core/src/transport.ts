import { type Dispatcher, Pool } from 'undici'
import { Deadlines } from './deadlines'
import { type AttemptFailure, scrub, toTransportError } from './delivery-errors'
import type { TransportError } from './errors'
import { Gate } from './gate'
import { Lanes } from './lanes'
import {
  backoffDelay,
  DEFAULT_RETRY,
  isConnectError,
  isRetryableStatus,
  parseRetryAfter,
  type RetryOptions,
} from './retry'
import type {
  Pending,
  PendingSummary,
  RecordMeta,
  TransportHooks,
  TransportOptions,
  TransportStats,
} from './transport-types'

export type { RecordMeta, TransportHooks, TransportOptions, TransportStats } from './transport-types'

/**
 * Delivers records off the hot path: a bounded queue of per-conversation lanes, at most
 * `concurrency` requests in flight over keep-alive connections, retries with backoff, and a
 * global gate (see {@link Gate}) while the service is unreachable or rate-limiting.
 */
export class Transport {
  private readonly lanes = new Lanes()
  private readonly gate = new Gate()
  private readonly deadlines: Deadlines
  private anonymous = 0
  private inFlight = 0
  private retrying = 0
  private pumpScheduled = false
  private readonly waiters = new Set<() => void>()
  private readonly retryTimers = new Map<NodeJS.Timeout, Pending>()
  private destroyed = false
  private readonly dispatcher: Dispatcher
  private readonly ownsDispatcher: boolean
  private readonly origin: string
  private readonly basePath: string
  private readonly retry: Required<RetryOptions>
  private readonly headers: Record<string, string>
  readonly counters = {
    sent: 0,
    retried: 0,
    failed: 0,
    dropped: 0,
    droppedByReason: { queue_full: 0, redacted: 0, closed: 0 },
  }

  constructor(
    private readonly opts: TransportOptions,
    private readonly hooks: TransportHooks,
  ) {
    const url = new URL(opts.baseUrl)
    this.origin = url.origin
    this.basePath = url.pathname.replace(/\/+$/, '')
    this.retry = { ...DEFAULT_RETRY, ...opts.retry }
    this.deadlines = new Deadlines(opts.timeoutMs)
    this.ownsDispatcher = !opts.dispatcher
    this.dispatcher =
      opts.dispatcher ?? new Pool(this.origin, { connections: opts.concurrency, keepAliveTimeout: 30_000 })
    this.headers = { 'content-type': 'application/json', 'user-agent': opts.userAgent }
  }

  /** Records handed over and not yet delivered or failed. */
  get pending(): number {
    return this.lanes.waiting + this.retrying + this.inFlight
  }

  /** What is pending, for the loss report at close and at exit. */
  pendingSummary(): PendingSummary {
    return {
      records: this.pending,
      conversations: this.lanes.size,
      retrying: this.retrying + (this.gate.until > Date.now() ? this.lanes.waiting : 0),
      unreachable: this.gate.connectFailures > 0,
    }
  }

  /** Path + query of the tracking endpoint (spec 4.1), without the origin. */
  trackPath(query: string): string {
    return `${this.basePath}/track?${query}`
  }

  /** Queues one record. Returns false (and counts the drop) when the queue is full. */
  enqueue(path: string, meta: RecordMeta): boolean {
    if (this.pending >= this.opts.maxQueueSize) return false
    // Every field up front: one object shape for every record.
    const key = meta.conversation ?? meta.userId
    const lane = key === undefined ? `#${this.anonymous++}` : `${meta.platform}:${key}`
    this.lanes.push({
      platform: meta.platform,
      type: meta.type,
      userId: meta.userId,
      body: meta.body,
      path,
      attempts: 0,
      round: 0,
      lane,
    })
    this.schedulePump()
    return true
  }

  stats(): TransportStats {
    return {
      queued: this.lanes.waiting + this.retrying,
      inFlight: this.inFlight,
      retrying: this.retrying,
      sent: this.counters.sent,
      retried: this.counters.retried,
      failed: this.counters.failed,
      dropped: this.counters.dropped,
      droppedByReason: { ...this.counters.droppedByReason },
    }
  }

  /** Resolves true when nothing is pending, false at the timeout. Never rejects. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        if (timer) clearTimeout(timer)
        this.waiters.delete(done)
        resolve(true)
      }
      this.waiters.add(done)
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(
          () => {
            this.waiters.delete(done)
            if (this.waiters.size === 0) this.refTimers(false)
            resolve(this.pending === 0)
          },
          Math.max(0, timeoutMs),
        )
        timer.unref()
      }
      // While someone waits, retries must fire even if nothing else keeps the process up.
      this.refTimers(true)
    })
  }

  /**
   * Frees sockets. Records still pending (the caller flushed first and gave up waiting) are
   * counted as failed and returned, so the stats still add up.
   */
  async destroy(): Promise<RecordMeta[]> {
    this.destroyed = true
    const left: RecordMeta[] = [...this.lanes.clear(), ...this.retryTimers.values()]
    for (const t of this.retryTimers.keys()) clearTimeout(t)
    this.retryTimers.clear()
    this.retrying = 0
    this.gate.stop()
    this.deadlines.stop()
    this.counters.failed += left.length
    if (this.ownsDispatcher) await this.dispatcher.destroy().catch(() => {})
    // Requests cut by the teardown settle (as failed) before close() reports.
    if (this.inFlight > 0) await this.drain(1_000)
    return left
  }

  private refTimers(ref: boolean): void {
    for (const t of this.retryTimers.keys()) ref ? t.ref() : t.unref()
    this.gate.ref(ref)
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    setImmediate(() => {
      this.pumpScheduled = false
      this.pump()
    })
  }

  private readonly wake = (): void => this.pump()

  private pump(): void {
    if (this.destroyed) return
    if (this.gate.holds(Date.now(), this.wake, this.waiters.size > 0)) return
    const limit = this.gate.probing ? 1 : this.opts.concurrency
    while (this.inFlight < limit) {
      const next = this.lanes.next()
      if (next === undefined) break
      void this.send(next)
    }
  }

  private async send(rec: Pending): Promise<void> {
    this.inFlight++
    rec.attempts++
    rec.round = this.gate.round
    const deadline = this.deadlines.start()
    let status = 0
    let failure: AttemptFailure | undefined
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path: rec.path,
        method: 'POST',
        headers: this.headers,
        body: rec.body,
        signal: deadline,
      })
      status = res.statusCode
      if (status >= 200 && status < 300) {
        await res.body.dump()
      } else {
        const text = await res.body.text().catch(() => '')
        failure = {
          status,
          error: undefined,
          retryAfterMs: parseRetryAfter(res.headers['retry-after']),
          body: scrub(text.slice(0, 500), this.opts.secrets),
        }
      }
    } catch (error) {
      failure = {
        error: deadline.timedOut
          ? new DOMException(`no answer within ${this.opts.timeoutMs} ms`, 'TimeoutError')
          : error,
      }
    }
    this.deadlines.settle(deadline)
    this.inFlight--
    if (failure === undefined) {
      this.gate.opened()
      this.counters.sent++
      this.lanes.release(rec, false)
      this.hooks.onSent(rec, status)
    } else {
      this.handleFailure(rec, failure)
    }
    this.afterSettle()
  }

  private handleFailure(rec: Pending, f: AttemptFailure): void {
    const { status } = f
    const connect = status === undefined && isConnectError(f.error)
    if (connect)
      rec.attempts-- // never reached the service: costs no attempt, only waiting
    else this.gate.connectFailures = 0
    if (!connect && status !== 429) this.gate.probing = false // the service answers: open up
    const retryable = status === undefined || isRetryableStatus(status)
    if (!retryable || rec.attempts >= this.retry.maxAttempts || this.destroyed) {
      this.counters.failed++
      this.lanes.release(rec, false)
      this.hooks.onFailed(this.toError(f, rec.attempts, retryable), rec)
      return
    }
    this.counters.retried++
    if (connect || status === 429) {
      // The whole service is unreachable or asked us to slow down: hold every request, then
      // let one probe through. The other requests of the same round failing too is one event,
      // not one backoff step each.
      const now = Date.now()
      if (rec.round === this.gate.round) {
        const wait =
          status === 429 && f.retryAfterMs !== undefined
            ? Math.min(f.retryAfterMs, this.retry.maxRetryAfterMs)
            : backoffDelay(connect ? ++this.gate.connectFailures : rec.attempts, this.retry)
        this.gate.close(now, wait)
      }
      this.lanes.release(rec, true)
      this.hooks.onRetry(this.toError(f, rec.attempts, true), rec, Math.max(0, this.gate.until - now))
      return
    }
    const delay = backoffDelay(rec.attempts, this.retry)
    this.retrying++
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer)
      this.retrying--
      this.lanes.release(rec, true)
      this.pump()
    }, delay)
    if (this.waiters.size === 0) timer.unref()
    this.retryTimers.set(timer, rec)
    this.hooks.onRetry(this.toError(f, rec.attempts, true), rec, delay)
  }

  private toError(f: AttemptFailure, attempts: number, retryable: boolean): TransportError {
    return toTransportError(f, attempts, retryable, this.opts.timeoutMs)
  }

  private afterSettle(): void {
    if (this.pending === 0) {
      this.refTimers(false)
      for (const w of [...this.waiters]) w()
      this.hooks.onDrained()
    } else {
      this.pump()
    }
  }
}
