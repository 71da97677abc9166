import type { Dispatcher } from 'undici'
import { Attempt, type AttemptOwner } from './attempt'
import { type BatchLimits, batchBody, parseBatchHeader, parseBatchResults, recordBytes } from './batch-protocol'
import type { Clock, ClockTimer } from './clock'
import { Connections } from './connections'
import { Deadlines } from './deadlines'
import { type AttemptFailure, refusedRecordError, scrub, toTransportError } from './delivery-errors'
import type { TransportError } from './errors'
import { decideFailure, NO_ANSWER_BURST_MS, servedReopens } from './failure-policy'
import { Fifo } from './fifo'
import { Gate } from './gate'
import { IdempotencyKeys } from './idempotency'
import { Lanes } from './lanes'
import type { Ledger } from './ledger'
import { ConcurrencyLimiter } from './limiter'
import { RatePacer } from './pacer'
import { DEFAULT_RETRY, isConnectError, parseRetryAfter, type RetryOptions } from './retry'
import type {
  Pending,
  PendingSummary,
  RecordMeta,
  Shipment,
  TransportHooks,
  TransportOptions,
  TransportStats,
} from './transport-types'
import type { ApiVersion } from './types'
import { waitOrTimeout } from './waiters'

export type { RecordMeta, TransportHooks, TransportOptions, TransportStats } from './transport-types'

/** Floor and starting point of the adaptive concurrency limit. */
const MIN_CONCURRENCY = 4
const INITIAL_CONCURRENCY = 16
/** Batches in flight at once: more only splits the backlog into smaller batches. */
const BATCHES_IN_FLIGHT = 8

/**
 * Delivers records off the hot path: per-conversation lanes bounded by bytes (and optionally a
 * count), requests in flight up to an adaptive limit (see {@link ConcurrencyLimiter}) over
 * keep-alive connections, pacing after rate limits (see {@link RatePacer}), retries with
 * backoff, a global gate while the service is unreachable (see {@link Gate}), and batches when
 * the service advertises them (`Convotrack-Batch`).
 */
export class Transport implements AttemptOwner {
  private readonly lanes = new Lanes()
  /** Requests back for another attempt (the gate closed on them, or their retry delay passed). */
  private readonly returned = new Fifo<Shipment>()
  private returnedRecords = 0
  private readonly gate: Gate
  private readonly limiter: ConcurrencyLimiter
  private readonly pacer = new RatePacer()
  private readonly deadlines: Deadlines
  private readonly keys = new IdempotencyKeys()
  private anonymous = 0
  /** Records in flight, and requests in flight. */
  private inFlight = 0
  private requests = 0
  private retrying = 0
  private queuedBytes = 0
  private pumpScheduled = false
  private paceTimer: ClockTimer | undefined
  /** Requests sent so far: each send's `seq` (order, not time — one kick sends several in a millisecond). */
  private sends = 0
  /**
   * `seq` of the newest request the service answered (any status): a request that fails without
   * an answer while nothing sent after it was answered met a service that went away, not a fault
   * of its own.
   */
  private answeredSeq = 0
  /** `seq` of the newest request the service served (any answer but a 503). */
  private servedSeq = 0
  /** When the last failure without an answer came. */
  private noAnswerAt = 0
  /**
   * The shipment of that failure, if it spent an attempt: when another failure without an answer
   * follows within {@link NO_ANSWER_BURST_MS}, it was the first of a burst and gets it back.
   */
  private lone: Shipment | undefined
  /** Records handed over per second (measured over ~250 ms), for Little's law. */
  private arrivals = 0
  private arrivalsAt = 0
  private arrivalRate = 0
  private limitedRun = 0
  private batchLimits: BatchLimits | undefined
  /** Batches may be used (`batch !== false`, and `/track/batch` never answered 404/405). */
  private batchAllowed: boolean
  private readonly waiters = new Set<() => void>()
  private readonly retryTimers = new Map<ClockTimer, Shipment>()
  private destroyed = false
  /** The user's dispatcher (a proxy agent, a MockAgent), else undefined: our own connections. */
  private readonly dispatcher: Dispatcher | undefined
  private readonly connections: Connections | undefined
  private readonly origin: string
  private readonly basePath: string
  private readonly batchPath: string
  private readonly retry: Required<RetryOptions>
  private readonly userAgent: string
  private readonly batchHeaders: string[]
  constructor(
    private readonly opts: TransportOptions,
    private readonly hooks: TransportHooks,
    /** Where every count goes (the tracker's: see ledger.ts). */
    private readonly ledger: Ledger,
    /** Time for every delivery rule (real time unless a test drives it: see clock.ts). */
    private readonly clock: Clock,
  ) {
    this.gate = new Gate(clock)
    const url = new URL(opts.baseUrl)
    this.origin = url.origin
    this.basePath = url.pathname.replace(/\/+$/, '')
    this.batchPath = `${this.basePath}/track/batch?${new URLSearchParams({ apiKey: opts.apiKey })}`
    this.retry = { ...DEFAULT_RETRY, ...opts.retry }
    this.deadlines = new Deadlines(opts.timeoutMs, clock)
    const cap = Math.max(1, opts.concurrency)
    this.limiter = new ConcurrencyLimiter(Math.min(MIN_CONCURRENCY, cap), cap, INITIAL_CONCURRENCY)
    this.dispatcher = opts.dispatcher
    // Connections open on demand, one per request in flight, so they follow the limit.
    this.connections = opts.dispatcher ? undefined : new Connections(this.origin, { keepAliveTimeout: 30_000 })
    this.userAgent = opts.userAgent
    this.batchAllowed = opts.batch
    this.batchHeaders = ['content-type', 'application/json', 'user-agent', opts.userAgent]
  }

  /** Records handed over and not yet delivered or failed. */
  get pending(): number {
    return this.lanes.waiting + this.returnedRecords + this.retrying + this.inFlight
  }

  /** True when a new record would be dropped: check before serializing it. */
  get full(): boolean {
    return (
      this.queuedBytes >= this.opts.maxQueueBytes ||
      (this.opts.maxQueueSize !== undefined && this.pending >= this.opts.maxQueueSize)
    )
  }

  /** Whether records go in batches (the service advertised them and `batch` is not false). */
  get batching(): boolean {
    return this.batchLimits !== undefined
  }

  /** Current adaptive concurrency limit and pacing rate (for benchmarks and debugging). */
  get limits(): { concurrency: number; rate: number } {
    return { concurrency: this.limiter.limit, rate: this.pacer.rate }
  }

  /** What is pending, for the loss report at close and at exit. */
  pendingSummary(): PendingSummary {
    return {
      records: this.pending,
      conversations: this.lanes.size,
      retrying: this.retrying + this.returnedRecords + (this.gate.until > this.clock.now() ? this.lanes.waiting : 0),
      unreachable: this.gate.connectFailures > 0,
    }
  }

  /** A fresh idempotency key (for a record whose caller asked for it at the call). */
  newKey(): string {
    return this.keys.next()
  }

  /** Path + query of the tracking endpoint (spec 4.1), without the origin. */
  trackPath(query: string): string {
    return `${this.basePath}/track?${query}`
  }

  /** Queues one record. Returns false when the queue is full (the caller counts the drop). */
  enqueue(path: string, v: ApiVersion, meta: RecordMeta): boolean {
    if (this.full) return false
    // Every field up front: one object shape for every record.
    const key = meta.conversation ?? meta.userId
    const lane = key === undefined ? `#${this.anonymous++}` : `${meta.platform}:${key}`
    this.lanes.push({
      platform: meta.platform,
      type: meta.type,
      userId: meta.userId,
      body: meta.body,
      conversation: meta.conversation,
      path,
      v,
      key: meta.key ?? '', // made when first sent (off the hot path) unless asked for, then stable across retries
      fate: meta.fate,
      lane,
      bytes: 0,
    })
    this.queuedBytes += meta.body.length
    this.arrivals++
    this.schedulePump()
    return true
  }

  stats(): TransportStats {
    const c = this.ledger.counts
    return {
      queued: this.lanes.waiting + this.returnedRecords + this.retrying,
      inFlight: this.inFlight,
      retrying: this.retrying,
      sent: c.sent,
      retried: c.retried,
      failed: c.failed,
      dropped: c.dropped,
      droppedByReason: { ...c.droppedByReason },
    }
  }

  /** Resolves true when nothing is pending, false at the timeout. Never rejects. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return Promise.resolve(true)
    const drained = waitOrTimeout(this.waiters, timeoutMs, () => {
      if (this.waiters.size === 0) this.refTimers(false)
      return this.pending === 0
    })
    // While someone waits, retries must fire even if nothing else keeps the process up.
    this.refTimers(true)
    return drained
  }

  /**
   * Frees sockets. Records still pending (the caller flushed first and gave up waiting) are
   * counted as failed and returned, so the stats still add up.
   */
  async destroy(): Promise<RecordMeta[]> {
    this.destroyed = true
    const left: RecordMeta[] = this.lanes.clear()
    for (const s of this.returned.takeAll()) left.push(...s.records)
    for (const [t, s] of this.retryTimers) {
      this.clock.clearTimeout(t)
      left.push(...s.records)
    }
    this.retryTimers.clear()
    this.retrying = 0
    this.returnedRecords = 0
    this.queuedBytes = 0
    this.gate.stop()
    this.deadlines.stop()
    if (this.paceTimer) this.clock.clearTimeout(this.paceTimer)
    this.ledger.abandoned(left.length, 'failed')
    await this.connections?.destroy()
    // Requests cut by the teardown end (as failed) before close() reports.
    if (this.inFlight > 0) await this.drain(1_000)
    return left
  }

  private refTimers(ref: boolean): void {
    for (const t of this.retryTimers.keys()) ref ? t.ref() : t.unref()
    this.gate.ref(ref)
    if (this.paceTimer) ref ? this.paceTimer.ref() : this.paceTimer.unref()
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    setImmediate(this.pumpSoon)
  }

  private readonly pumpSoon = (): void => {
    this.pumpScheduled = false
    this.pump()
  }

  private readonly wake = (): void => this.pump()

  private pump(): void {
    if (this.destroyed) return
    const now = this.clock.now()
    if (now - this.arrivalsAt >= 250) {
      const rate = (this.arrivals * 1000) / (now - this.arrivalsAt)
      this.arrivalRate = this.arrivalsAt === 0 ? 0 : (this.arrivalRate + rate) / 2
      this.arrivals = 0
      this.arrivalsAt = now
    }
    if (this.gate.isClosed(now, this.wake, this.waiters.size > 0)) return
    let limit = this.gate.probing ? 1 : this.limiter.limit
    if (this.batchLimits && limit > BATCHES_IN_FLIGHT) limit = BATCHES_IN_FLIGHT
    while (this.requests < limit && (this.returned.length > 0 || this.lanes.hasReady)) {
      const wait = this.pacer.admit(now)
      if (wait > 0) {
        if (!this.paceTimer) {
          this.paceTimer = this.clock.setTimeout(() => {
            this.paceTimer = undefined
            this.pump()
          }, wait)
          if (this.waiters.size === 0) this.paceTimer.unref()
        }
        return
      }
      const back = this.returned.shift()
      if (back) {
        this.returnedRecords -= back.records.length
        this.send(back)
      } else {
        this.send(this.nextShipment() as Shipment)
      }
    }
  }

  /** The next request from the lanes: a batch when batching, else one record. */
  private nextShipment(): Shipment | undefined {
    const limits = this.batchLimits
    if (limits) {
      const records = this.lanes.take(limits.maxRecords, limits.maxBytes - 16, this.batchSize)
      if (records.length === 0) return undefined
      const only = records[0] as Pending
      if (records.length > 1 || recordBytes(only) + 16 <= limits.maxBytes)
        return {
          records,
          batch: true,
          path: this.batchPath,
          body: batchBody(records),
          headers: this.batchHeaders,
          attempts: 0,
          spared: 0,
          round: 0,
          sentAt: 0,
          seq: 0,
        }
      return this.single(only) // too big for a batch: alone, on /track
    }
    const rec = this.lanes.next()
    return rec && this.single(rec)
  }

  /** Bytes of a record in a batch (its key made first: the envelope carries it). */
  private readonly batchSize = (rec: Pending): number => {
    this.keyOf(rec)
    return recordBytes(rec)
  }

  private keyOf(rec: Pending): string {
    if (rec.key === '') rec.key = this.keys.next()
    return rec.key
  }

  private single(rec: Pending): Shipment {
    return {
      records: [rec],
      batch: false,
      path: rec.path,
      body: rec.body,
      headers: ['content-type', 'application/json', 'user-agent', this.userAgent, 'idempotency-key', this.keyOf(rec)],
      attempts: 0,
      spared: 0,
      round: 0,
      sentAt: 0,
      seq: 0,
    }
  }

  private send(s: Shipment): void {
    const saturated = this.requests + 1 >= this.limiter.limit
    this.inFlight += s.records.length
    this.requests++
    s.attempts++
    s.round = this.gate.round
    const now = this.clock.now()
    s.sentAt = now
    s.seq = ++this.sends
    const wantsBatchHeader = !s.batch && this.batchAllowed && this.batchLimits === undefined
    const attempt = new Attempt(this, s, saturated, wantsBatchHeader)
    attempt.startedAt = this.clock.precise()
    this.deadlines.start(attempt, now)
    let via = this.dispatcher
    if (!via) {
      const connections = this.connections as Connections
      via = attempt.client = connections.take()
      attempt.reused = connections.reuses(attempt.client)
    }
    attempt.dispatch(via, { origin: this.origin, path: s.path, method: 'POST', headers: s.headers, body: s.body })
  }

  /** An attempt's deadline passed before it connected: its own connection goes (see Attempt.expire). */
  cut(attempt: Attempt, reason: Error): void {
    if (attempt.client) this.connections?.discard(attempt.client, reason)
  }

  /** An attempt ended: its answer read (`error` undefined), or it failed. Called once per attempt. */
  attemptEnded(attempt: Attempt, error: unknown): void {
    const s = attempt.shipment
    const n = s.records.length
    this.deadlines.done(attempt)
    if (attempt.client) this.connections?.give(attempt.client, this.limiter.limit)
    this.inFlight -= n
    this.requests--
    const now = this.clock.now()
    const status = attempt.status
    let failure: AttemptFailure | undefined
    if (error !== undefined || status === 0) {
      failure = { error, timedOut: attempt.timedOut, stale: attempt.reused && !attempt.timedOut }
    } else {
      if (attempt.batchHeader !== undefined && status < 500 && this.batchAllowed && this.batchLimits === undefined)
        this.batchLimits = parseBatchHeader(attempt.batchHeader)
      if (status >= 200 && status < 300) {
        const results = s.batch ? parseBatchResults(attempt.text(), n) : undefined
        if (s.batch && !results) {
          // An answer we cannot read: maybe stored, maybe not. The keys make a resend safe.
          failure = { status, error: undefined, body: 'batch answer without one result per record' }
        } else {
          this.succeeded(s, status, now, this.clock.precise() - attempt.startedAt, attempt.saturated, results)
          this.afterSettle()
          return
        }
      } else {
        failure = {
          status,
          error: undefined,
          retryAfterMs: parseRetryAfter(attempt.retryAfter, now),
          body: scrub(attempt.text().slice(0, 500), this.opts.secrets),
        }
      }
    }
    this.failed(s, failure, now)
    this.afterSettle()
  }

  private succeeded(
    s: Shipment,
    status: number,
    now: number,
    latencyMs: number,
    saturatedAtSend: boolean,
    results: ReturnType<typeof parseBatchResults>,
  ): void {
    if (s.seq > this.answeredSeq) this.answeredSeq = s.seq
    if (s.seq > this.servedSeq) this.servedSeq = s.seq
    if (servedReopens(s.seq, this.gate.unavailableSeq)) this.gate.reopen()
    this.limitedRun = 0
    this.gate.opened()
    this.pacer.onAccepted(now)
    const waiting = this.returned.length > 0 || this.lanes.hasReady
    this.limiter.onSuccess(
      latencyMs,
      s.sentAt,
      saturatedAtSend && waiting,
      waiting,
      now,
      s.batch ? 0 : this.arrivalRate,
    )
    this.lanes.free(s.records)
    for (let i = 0; i < s.records.length; i++) {
      const rec = s.records[i] as Pending
      this.queuedBytes -= rec.body.length
      const r = results?.[i]
      if (r?.status === 'refused') {
        this.ledger.failed(1, true)
        this.hooks.onFailed(refusedRecordError(r.error, s.attempts), rec)
      } else {
        this.ledger.sent()
        this.hooks.onSent(rec, status)
      }
    }
  }

  /** A failed attempt: the failure policy decides, this applies the decision. */
  private failed(s: Shipment, f: AttemptFailure, now: number): void {
    const gate = this.gate
    const lone = this.lone
    const d = decideFailure(
      {
        status: f.status,
        retryAfterMs: f.retryAfterMs,
        connectFailed: f.status === undefined && isConnectError(f.error),
        stale: f.stale,
      },
      s,
      {
        shuttingDown: this.destroyed,
        maxAttempts: this.retry.maxAttempts,
        answeredSeq: this.answeredSeq,
        servedSeq: this.servedSeq,
        noAnswerAt: this.noAnswerAt,
        lone: lone && { isThis: lone === s, spared: lone.spared },
        limitedRun: this.limitedRun,
        gateRound: gate.round,
        probing: gate.probing,
        connectFailures: gate.connectFailures,
      },
      now,
      this.retry,
    )
    const next = d.next
    this.answeredSeq = next.answeredSeq
    this.servedSeq = next.servedSeq
    this.noAnswerAt = next.noAnswerAt
    this.limitedRun = next.limitedRun
    gate.probing = next.probing
    gate.connectFailures = next.connectFailures
    if (d.verdict === 'unbatch') {
      this.batchLimits = undefined
      this.batchAllowed = false
      this.lanes.giveBack(s.records)
      return
    }
    if (d.spareLone && lone) {
      lone.attempts--
      lone.spared++
    }
    if (d.lone !== 'keep') this.lone = d.lone === 'this' ? s : undefined
    if (d.pace) this.pacer.onLimited(now)
    if (d.shrink) this.limiter.onCongestion(s.sentAt, now)
    if (!d.spendAttempt) s.attempts--
    if (d.spare) s.spared++
    if (d.closeGateMs !== undefined) gate.close(now, d.closeGateMs, d.closedByUnavailable ? s.seq : undefined)
    if (d.verdict === 'fail') this.fail(s, f, d.retryable)
    else if (d.verdict === 'gate') this.behindGate(s, f, now)
    else this.later(s, f, d.delayMs, d.judge)
  }

  /** Back in the queue of returned requests, behind the gate. */
  private behindGate(s: Shipment, f: AttemptFailure, now: number): void {
    this.ledger.retried(s.records.length)
    this.returned.push(s)
    this.returnedRecords += s.records.length
    this.retryEvent(s, f, Math.max(0, this.gate.until - now))
  }

  /**
   * Retried after `delay` ms. With `judge` (its last attempt failed, alone so far) it fails then,
   * unless a burst gave the attempt back meanwhile: then it is retried at once.
   */
  private later(s: Shipment, f: AttemptFailure, delay: number, judge = false): void {
    const n = s.records.length
    this.retrying += n
    const timer = this.clock.setTimeout(() => {
      this.retryTimers.delete(timer)
      this.retrying -= n
      if (judge) {
        if (this.lone === s) this.lone = undefined
        if (s.attempts >= this.retry.maxAttempts) {
          this.fail(s, f, true)
          this.afterSettle()
          return
        }
        this.ledger.retried(n)
        this.retryEvent(s, f, 0)
      }
      this.returned.push(s)
      this.returnedRecords += n
      this.pump()
    }, delay)
    if (this.waiters.size === 0) timer.unref()
    this.retryTimers.set(timer, s)
    if (judge) return
    this.ledger.retried(n)
    this.retryEvent(s, f, delay)
  }

  private retryEvent(s: Shipment, f: AttemptFailure, delay: number): void {
    if (!this.hooks.wantsRetry()) return
    const error = this.toError(f, s.attempts, true)
    for (const rec of s.records) this.hooks.onRetry(error, rec, delay)
  }

  private fail(s: Shipment, f: AttemptFailure, retryable: boolean): void {
    this.lanes.free(s.records)
    const error = this.toError(f, s.attempts, retryable)
    for (const rec of s.records) {
      this.queuedBytes -= rec.body.length
      this.ledger.failed()
      this.hooks.onFailed(error, rec)
    }
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
