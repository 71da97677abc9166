import { EventEmitter } from 'node:events'
import { type Dispatcher, Pool } from 'undici'
import { TransportError } from './errors'
import {
  backoffDelay,
  DEFAULT_RETRY,
  isConnectError,
  isRetryableStatus,
  parseRetryAfter,
  type RetryOptions,
} from './retry'
import type { Platform, RecordType } from './types'

/** Abort handle of one request: undici aborts it on `'abort'`. */
class RequestDeadline extends EventEmitter {
  timedOut = false
  at = 0
}

/** What the transport knows of a record, handed to `onError` and the events. */
export interface RecordMeta {
  platform: Platform
  type: RecordType
  userId: string | undefined
  /** The JSON body as it is (or was to be) sent. */
  body: string
  /** Delivery order is kept per conversation: this key, else the user. */
  conversation?: string | undefined
}

/** A record waiting to be delivered. */
interface Pending extends RecordMeta {
  path: string
  attempts: number
  /** The gate round the last attempt was sent in (see `gateRound`). */
  round: number
  /** Its ordering lane: the platform and conversation (else user), so they arrive in order. */
  lane: string
}

/** Counters of the transport; see `tracker.stats()`. */
export interface TransportStats {
  /** Waiting to be sent (including those waiting out a retry delay). */
  queued: number
  inFlight: number
  /** Of `queued`, those waiting out a retry delay. */
  retrying: number
  sent: number
  /** Retry attempts made (one record may count several). */
  retried: number
  failed: number
  dropped: number
  droppedByReason: { queue_full: number; redacted: number; closed: number }
}

export interface TransportHooks {
  onSent(meta: RecordMeta, status: number): void
  onFailed(error: TransportError, meta: RecordMeta): void
  onRetry(error: TransportError, meta: RecordMeta, delayMs: number): void
  onDrained(): void
}

export interface TransportOptions {
  baseUrl: string
  maxQueueSize: number
  concurrency: number
  timeoutMs: number
  retry: RetryOptions
  dispatcher?: Dispatcher | undefined
  userAgent: string
  /** Values never quoted in an error (the tracking key): a service page may echo the request URL. */
  secrets?: readonly string[]
}

/**
 * Delivers records off the hot path: a bounded queue, at most `concurrency` requests in
 * flight over keep-alive connections, retries with backoff, and a global gate that holds
 * every request while the service is unreachable or rate-limiting (429 + Retry-After), so
 * a down service costs one probe per backoff step, not one failed request per record.
 */
export class Transport {
  /**
   * Records waiting, one FIFO lane per conversation (else per user): its records go out in
   * order, one at a time (the service orders a transcript by arrival), while different
   * conversations go in parallel.
   */
  private readonly lanes = new Map<string, Pending[]>()
  /** Lanes with a record to send and none in flight or waiting out a retry, in turn order. */
  private readonly runnable: string[] = []
  private runHead = 0
  /** Lanes whose record came back from a failed attempt: served before the others. */
  private readonly returning: string[] = []
  /** Lanes with a record in flight or waiting out a retry. */
  private readonly busy = new Set<string>()
  private waiting = 0
  private anonymous = 0
  private inFlight = 0
  private retrying = 0
  private pumpScheduled = false
  private gateUntil = 0
  private gateTimer: NodeJS.Timeout | undefined
  private connectFailures = 0
  /** Bumped each time the gate closes: failures of requests sent in an earlier round are that round's, not new ones. */
  private gateRound = 0
  /** Half-open after the gate: one request probes the service before the rest follow. */
  private probing = false
  private readonly waiters = new Set<() => void>()
  private readonly retryTimers = new Map<NodeJS.Timeout, Pending>()
  /** In-flight requests and their absolute deadlines, checked by one sweeper timer. */
  private readonly deadlines = new Set<RequestDeadline>()
  private readonly spareDeadlines: RequestDeadline[] = []
  private sweeper: NodeJS.Timeout | undefined
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
    this.ownsDispatcher = !opts.dispatcher
    this.dispatcher =
      opts.dispatcher ?? new Pool(this.origin, { connections: opts.concurrency, keepAliveTimeout: 30_000 })
    this.headers = { 'content-type': 'application/json', 'user-agent': opts.userAgent }
  }

  /** Records handed over and not yet delivered or failed. */
  get pending(): number {
    return this.waiting + this.retrying + this.inFlight
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
    this.toLane({
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
      queued: this.waiting + this.retrying,
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
    const left: RecordMeta[] = [...[...this.lanes.values()].flat(), ...this.retryTimers.values()]
    for (const t of this.retryTimers.keys()) clearTimeout(t)
    this.retryTimers.clear()
    this.retrying = 0
    this.lanes.clear()
    this.runnable.length = 0
    this.runHead = 0
    this.returning.length = 0
    this.busy.clear()
    this.waiting = 0
    if (this.gateTimer) clearTimeout(this.gateTimer)
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = undefined
    this.counters.failed += left.length
    if (this.ownsDispatcher) await this.dispatcher.destroy().catch(() => {})
    // Requests cut by the teardown settle (as failed) before close() reports.
    if (this.inFlight > 0) await this.drain(1_000)
    return left
  }

  /**
   * The absolute per-request deadline (connect to last byte). One sweeper timer checks every
   * in-flight request, and the abort handle is an EventEmitter (which undici accepts as
   * `signal`): on Node 20 a per-request `AbortSignal` costs 35–40 % of delivery throughput and
   * `AbortSignal.timeout` more (measured in bench/).
   */
  private startDeadline(): RequestDeadline {
    // Handles are reused: undici removes its listener when the request settles.
    const deadline = this.spareDeadlines.pop() ?? new RequestDeadline()
    deadline.at = Date.now() + this.opts.timeoutMs
    deadline.timedOut = false
    this.deadlines.add(deadline)
    if (!this.sweeper) {
      const every = Math.max(10, Math.min(250, Math.floor(this.opts.timeoutMs / 4)))
      this.sweeper = setInterval(() => {
        const now = Date.now()
        for (const d of this.deadlines) {
          if (d.at > now) continue
          this.deadlines.delete(d)
          d.timedOut = true
          d.emit('abort')
        }
        if (this.deadlines.size === 0 && this.sweeper) {
          clearInterval(this.sweeper)
          this.sweeper = undefined
        }
      }, every)
      this.sweeper.unref()
    }
    return deadline
  }

  /** The service's own text, quoted in errors, without the tracking key in any spelling. */
  private scrub(text: string): string {
    let out = text.replace(/([?&]apiKey=)[^&\s"'<>]*/g, '$1***')
    for (const secret of this.opts.secrets ?? []) {
      for (const form of new Set([
        secret,
        encodeURIComponent(secret),
        new URLSearchParams({ k: secret }).toString().slice(2),
      ]))
        if (form) out = out.split(form).join('***')
    }
    return out
  }

  private refTimers(ref: boolean): void {
    for (const t of this.retryTimers.keys()) ref ? t.ref() : t.unref()
    if (this.gateTimer) ref ? this.gateTimer.ref() : this.gateTimer.unref()
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    setImmediate(() => {
      this.pumpScheduled = false
      this.pump()
    })
  }

  private pump(): void {
    if (this.destroyed) return
    const now = Date.now()
    if (this.gateUntil > now) {
      if (!this.gateTimer) {
        this.gateTimer = setTimeout(() => {
          this.gateTimer = undefined
          this.pump()
        }, this.gateUntil - now)
        if (this.waiters.size === 0) this.gateTimer.unref()
      }
      return
    }
    const limit = this.probing ? 1 : this.opts.concurrency
    while (this.inFlight < limit) {
      const key = this.returning.shift() ?? this.runnable[this.runHead++]
      if (key === undefined) break
      const lane = this.lanes.get(key) as Pending[]
      const next = lane.shift() as Pending
      if (lane.length === 0) this.lanes.delete(key)
      this.waiting--
      this.busy.add(key)
      void this.send(next)
    }
    if (this.runHead >= this.runnable.length) {
      this.runnable.length = 0
      this.runHead = 0
    } else if (this.runHead > 1024 && this.runHead * 2 > this.runnable.length) {
      this.runnable.splice(0, this.runHead)
      this.runHead = 0
    }
  }

  /** Queues a new record at the end of its lane; a lane that was empty and idle becomes runnable. */
  private toLane(rec: Pending): void {
    let lane = this.lanes.get(rec.lane)
    if (!lane) {
      lane = []
      this.lanes.set(rec.lane, lane)
      if (!this.busy.has(rec.lane)) this.runnable.push(rec.lane)
    }
    lane.push(rec)
    this.waiting++
  }

  /**
   * A lane's record is done: sent or failed for good (the lane's next record may go), or back
   * for another attempt (first in its lane, and its lane served first). A busy lane is in
   * neither list, so it is listed exactly once here.
   */
  private release(rec: Pending, back: boolean): void {
    this.busy.delete(rec.lane)
    if (back) {
      let lane = this.lanes.get(rec.lane)
      if (!lane) {
        lane = []
        this.lanes.set(rec.lane, lane)
      }
      lane.unshift(rec)
      this.waiting++
      this.returning.push(rec.lane)
    } else if (this.lanes.has(rec.lane)) {
      this.runnable.push(rec.lane)
    }
  }

  private async send(rec: Pending): Promise<void> {
    this.inFlight++
    rec.attempts++
    rec.round = this.gateRound
    const deadline = this.startDeadline()
    let outcome:
      | { ok: true; status: number }
      | { ok: false; error: unknown; status?: number; retryAfterMs?: number; body?: string }
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path: rec.path,
        method: 'POST',
        headers: this.headers,
        body: rec.body,
        signal: deadline,
      })
      if (res.statusCode >= 200 && res.statusCode < 300) {
        await res.body.dump()
        outcome = { ok: true, status: res.statusCode }
      } else {
        const text = await res.body.text().catch(() => '')
        outcome = {
          ok: false,
          status: res.statusCode,
          error: undefined,
          retryAfterMs: parseRetryAfter(res.headers['retry-after']),
          body: this.scrub(text.slice(0, 500)),
        }
      }
    } catch (error) {
      const timeout = new DOMException(`no answer within ${this.opts.timeoutMs} ms`, 'TimeoutError')
      outcome = { ok: false, error: deadline.timedOut ? timeout : error }
    }
    this.deadlines.delete(deadline)
    if (!deadline.timedOut && deadline.listenerCount('abort') === 0) this.spareDeadlines.push(deadline)
    this.inFlight--
    if (outcome.ok) {
      this.connectFailures = 0
      this.probing = false
      this.counters.sent++
      this.release(rec, false)
      this.hooks.onSent(rec, outcome.status)
    } else {
      this.handleFailure(rec, outcome)
    }
    this.afterSettle()
  }

  private handleFailure(
    rec: Pending,
    f: { error: unknown; status?: number; retryAfterMs?: number; body?: string },
  ): void {
    const { status } = f
    const connect = status === undefined && isConnectError(f.error)
    if (connect)
      rec.attempts-- // never reached the service: costs no attempt, only waiting
    else this.connectFailures = 0
    if (!connect && status !== 429) this.probing = false // the service answers: open up
    const retryable = status === undefined || isRetryableStatus(status)
    if (!retryable || rec.attempts >= this.retry.maxAttempts || this.destroyed) {
      this.counters.failed++
      this.release(rec, false)
      this.hooks.onFailed(this.toError(f, rec.attempts, retryable), rec)
      return
    }
    this.counters.retried++
    if (connect || status === 429) {
      // The whole service is unreachable or asked us to slow down: hold every request, then
      // let one probe through. The other requests of the same round failing too is one event,
      // not one backoff step each.
      const now = Date.now()
      if (rec.round === this.gateRound) {
        const wait =
          status === 429 && f.retryAfterMs !== undefined
            ? Math.min(f.retryAfterMs, this.retry.maxRetryAfterMs)
            : backoffDelay(connect ? ++this.connectFailures : rec.attempts, this.retry)
        this.gateRound++
        this.gateUntil = Math.max(this.gateUntil, now + wait)
        this.probing = true
      }
      this.release(rec, true)
      this.hooks.onRetry(this.toError(f, rec.attempts, true), rec, Math.max(0, this.gateUntil - now))
      return
    }
    const delay = backoffDelay(rec.attempts, this.retry)
    this.retrying++
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer)
      this.retrying--
      this.release(rec, true)
      this.pump()
    }, delay)
    if (this.waiters.size === 0) timer.unref()
    this.retryTimers.set(timer, rec)
    this.hooks.onRetry(this.toError(f, rec.attempts, true), rec, delay)
  }

  private toError(
    f: { error: unknown; status?: number; body?: string },
    attempts: number,
    retryable: boolean,
  ): TransportError {
    if (f.status !== undefined) {
      const what = retryable
        ? `gave up after ${attempts} attempts`
        : 'not retried (client error: fix the record or the key)'
      return new TransportError(
        `http_${f.status}`,
        `tracking service answered ${f.status}; ${what}${f.body ? `: ${f.body}` : ''}`,
        f.status,
        attempts,
      )
    }
    const err = f.error as { name?: string; code?: string; message?: string } | undefined
    const timeout = err?.name === 'TimeoutError' || err?.name === 'AbortError'
    const reason = timeout
      ? `no answer within ${this.opts.timeoutMs} ms`
      : (err?.code ?? err?.message ?? 'network error')
    return new TransportError(
      timeout ? 'timeout' : 'network',
      `tracking service unreachable (${reason}); ${attempts} attempts`,
      undefined,
      attempts,
      f.error,
    )
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
