import { EventEmitter } from 'node:events'
import { buildChannels, eventShape, type RecordShape } from './channels'
import { clockOf } from './clock'
import {
  ConfigError,
  ConvotrackError,
  DroppedRecordError,
  type DropReason,
  InvalidRecordError,
  type TransportError,
} from './errors'
import { type ExitCause, type ExitParticipant, exitFlushMs, exitWatch } from './exit-flush'
import { type Feedback, feedbackEvent } from './feedback'
import { HeldRecords, type HeldTurn } from './held-records'
import { toWireJson } from './json'
import { Ledger } from './ledger'
import { DropSummary, info, maskApiKey } from './loss-report'
import { MemoryPauseStore } from './pause/memory-store'
import type { PauseStore } from './pause/store'
import { describeUndelivered } from './pending-report'
import { NOT_HANDLED, type SerializeContext, type WireRecord } from './platforms/context'
import { type RecordOutlet, TransportOutlet } from './record-outlet'
import {
  type CallOptions,
  DEFAULT_BASE_URL,
  type EventOptions,
  type FlushResult,
  type RecordHandle,
  type RecordHook,
  type RecordInfo,
  type RecordOutcome,
  type RecordTransport,
  type SerializedRecord,
  type Tracker,
  type TrackerEvents,
  type TrackerOptions,
  type TrackerStats,
  type UniversalChannel,
  VERSION,
} from './tracker-types'
import { Transport } from './transport'
import type { RecordMeta } from './transport-types'
import { TurnScope, type TurnState } from './turn-scope'
import type { ApiVersion, Intent, JsonObject, Platform, RecordType, TrackedEvent } from './types'
import { PLATFORMS } from './types'
import { isObject, validateIntent } from './validate'
import { WarnLimiter } from './warn-limiter'

/** A caller's `onRecord`, and what settles one record's outcome. */
type Ask = (record: RecordHandle) => void
type Fate = (outcome: RecordOutcome) => void

class TrackerImpl extends EventEmitter implements Tracker {
  readonly pauses: PauseStore
  readonly universal: UniversalChannel
  readonly sms: UniversalChannel
  readonly generic: UniversalChannel
  readonly twitter: Tracker['twitter']
  readonly messenger: Tracker['messenger']
  readonly slack: Tracker['slack']
  readonly kik: Tracker['kik']
  readonly alexa: Tracker['alexa']
  private readonly transport: Transport
  private readonly turns = new TurnScope()
  private readonly queryCache = new Map<string, string>()
  private readonly apiKey: string
  private readonly v: ApiVersion
  private readonly ignore: ((userId: string, info: RecordInfo) => boolean) | undefined
  private readonly logger: Pick<Console, 'log' | 'warn'>
  private readonly warnings: WarnLimiter
  /** Where records go: the HTTP transport, or a RecordTransport (`transport` option, `useSink`). */
  private outlet: RecordOutlet
  /** addRecordHook(): copied on change, so a hook removed while hooks run doesn't skip another. */
  private hooks: readonly RecordHook[] = []
  private isClosed = false
  /** After close()'s flush: records are dropped (`closed`), not sent. */
  private refusing = false
  private readonly held: HeldRecords
  private readonly exitFlushMs: number
  private watchingExit = false
  /** Every count of what happened to records (see ledger.ts). */
  private readonly ledger = new Ledger()
  private readonly fullDrops = new DropSummary((n, record) => this.reportFull(n, record))
  /** What the shapes' `users` read while the queue is full, when there is no ignore list (no object per call). */
  private readonly fullCtx: SerializeContext
  /** Request paths by platform and type for the tracker's own `v` (no string building per call). */
  private readonly paths: Partial<Record<Platform, Partial<Record<RecordType, string>>>> = {}

  constructor(private readonly opts: TrackerOptions) {
    super()
    const apiKey = opts.apiKey ?? process.env.CONVOTRACK_API_KEY
    if (!apiKey || typeof apiKey !== 'string')
      throw new ConfigError(
        'apiKey is required: pass createTracker({ apiKey }) or set CONVOTRACK_API_KEY (the key of the bot or skill)',
      )
    this.apiKey = apiKey
    const baseUrl = opts.baseUrl ?? process.env.CONVOTRACK_URL ?? DEFAULT_BASE_URL
    try {
      const u = new URL(baseUrl)
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol')
    } catch {
      throw new ConfigError(
        `baseUrl must be an http(s) URL such as ${DEFAULT_BASE_URL} (got ${JSON.stringify(baseUrl)})`,
      )
    }
    this.exitFlushMs = exitFlushMs(opts.flushOnExit)
    if (Number.isNaN(this.exitFlushMs))
      throw new ConfigError(
        `flushOnExit must be true, false or a number of ms ≥ 0 (got ${JSON.stringify(opts.flushOnExit)})`,
      )
    this.v = opts.v ?? '11.1.0-rest'
    this.logger = opts.logger ?? console
    this.warnings = new WarnLimiter(this.logger)
    const list = opts.ignoreUserIds
    this.ignore =
      typeof list === 'function'
        ? list
        : list && list.length > 0
          ? (
              (ids) => (u: string) =>
                ids.has(u)
            )(new Set(list))
          : undefined
    this.fullCtx = { messengerEvents: opts.messengerEvents }
    this.pauses = opts.pauses ?? new MemoryPauseStore()
    this.transport = new Transport(
      {
        baseUrl,
        apiKey,
        maxQueueSize: opts.maxQueueSize,
        maxQueueBytes: opts.maxQueueBytes ?? 64 * 1024 * 1024,
        concurrency: opts.concurrency ?? 256,
        batch: opts.batch !== false,
        timeoutMs: opts.timeoutMs ?? 10_000,
        retry: opts.retry ?? {},
        dispatcher: opts.dispatcher,
        userAgent: `convotrack-node/${VERSION} node/${process.versions.node}`,
        secrets: [apiKey],
      },
      {
        onSent: (meta, status) => {
          meta.fate?.({ status: 'sent' })
          if (this.opts.debug) this.logger.log(`[convotrack] delivered ${meta.platform}/${meta.type} (${status})`)
          if (this.listenerCount('sent') > 0) this.safeEmit('sent', info(meta, true), status)
        },
        onFailed: (error, meta) => {
          meta.fate?.({ status: 'failed', error })
          this.reportLost(error, meta, undefined)
        },
        onRetry: (error, meta, delay) => {
          if (this.opts.debug)
            this.logger.log(`[convotrack] retry ${meta.platform}/${meta.type} in ${delay} ms: ${error.message}`)
          this.safeEmit('retry', error, info(meta, false), delay)
        },
        wantsRetry: () => this.opts.debug === true || this.listenerCount('retry') > 0,
        onDrained: () => {
          this.unwatchExitIfIdle()
          this.safeEmit('drained')
        },
      },
      this.ledger,
      clockOf(opts),
    )
    this.outlet = opts.transport ? this.outletFor(opts.transport) : this.transport
    this.held = new HeldRecords({
      inTurn: (state, fn) => (state ? this.turns.run(fn, state) : fn()),
      report: (error) => this.reportError(error),
      abandon: (count) => this.ledger.abandoned(count, 'closed'),
      onHeld: () => this.watchExit(),
      onSettled: () => this.unwatchExitIfIdle(),
    })
    const channels = buildChannels((platform, type, o, shape, a, b) => this.track(platform, type, o, shape, a, b))
    this.universal = channels.universal
    this.sms = channels.sms
    this.generic = channels.generic
    this.twitter = channels.twitter
    this.messenger = channels.messenger
    this.slack = channels.slack
    this.kik = channels.kik
    this.alexa = channels.alexa
  }

  get closed(): boolean {
    return this.isClosed
  }

  get sendPlatformCredentials(): boolean {
    return this.opts.sendPlatformCredentials === true
  }

  logEvent(event: TrackedEvent, options: EventOptions = {}): boolean {
    const platform = options.platform ?? 'generic'
    if (!PLATFORMS.includes(platform))
      return this.rejectInvalid(
        new InvalidRecordError('platform', `must be one of ${PLATFORMS.join(', ')}`, 'event'),
        'generic',
        'event',
        options.onRecord,
      )
    return this.track(platform, 'event', options, eventShape, event, undefined)
  }

  feedback(feedback: Feedback, options: EventOptions = {}): boolean {
    let event: TrackedEvent
    try {
      event = feedbackEvent(feedback)
    } catch (error) {
      return this.rejectInvalid(error, options.platform ?? 'generic', 'event', options.onRecord)
    }
    return this.logEvent(event, options)
  }

  setNotHandled(): void {
    this.turns.writable().notHandled = true
  }

  setOutgoingIntent(intent: Intent): void {
    if (this.validSetting(() => validateIntent(intent, 'intent', 'setOutgoingIntent')))
      this.turns.writable().outgoingIntent = intent
  }

  setIncomingIntent(intent: Intent): void {
    if (this.validSetting(() => validateIntent(intent, 'intent', 'setIncomingIntent')))
      this.turns.writable().incomingIntent = intent
  }

  setUserMetadata(metadata: JsonObject): void {
    if (
      !this.validSetting(() => {
        if (!isObject(metadata))
          throw new InvalidRecordError('metadata', 'must be an object of user fields', 'setUserMetadata')
      })
    )
      return
    const turn = this.turns.writable()
    turn.userMetadata = { ...turn.userMetadata, ...metadata }
  }

  withTurn<T>(fn: () => T, state?: TurnState): T {
    return this.turns.run(fn, state)
  }

  currentTurn(options?: { includeLoose?: boolean }): TurnState | undefined {
    return options?.includeLoose ? this.turns.readable() : this.turns.active()
  }

  holdTurn(state?: TurnState): HeldTurn {
    return this.held.open(state ?? this.turns.active())
  }

  heldTurn(): HeldTurn | undefined {
    return this.held.of(this.turns.active())
  }

  holdWork(work: PromiseLike<unknown>): void {
    this.held.add(work)
  }

  async isPaused(key: string | undefined): Promise<boolean> {
    if (!key) return false
    try {
      return (await this.pauses.isPaused(key)) === true
    } catch (error) {
      this.reportError(
        new ConvotrackError(
          'pause_store',
          `pause store failed; answering as not paused: ${(error as Error)?.message ?? error}`,
          { cause: error },
        ),
      )
      return false
    }
  }

  async flush(timeoutMs = 10_000): Promise<FlushResult> {
    this.fullDrops.flush()
    const lostBefore = this.ledger.beginFlush()
    const mark = this.ledger.mark()
    const started = Date.now()
    // Held records first (they become queued records), then delivery, within one timeout.
    const settled = await this.held.settled(timeoutMs)
    const drained = await this.transport.drain(Math.max(0, timeoutMs - (Date.now() - started)))
    const s = this.transport.stats()
    return {
      delivered: settled && drained && lostBefore === 0 && this.ledger.lostSince(mark) === 0,
      pending: this.transport.pending,
      held: this.held.size,
      sent: s.sent,
      failed: s.failed,
      dropped: s.dropped,
    }
  }

  async close(timeoutMs = 10_000): Promise<FlushResult> {
    // Records held by adapters and records logged while close() waits still go out; after the
    // flush, new records are dropped (`closed`).
    this.isClosed = true
    const flushed = await this.flush(timeoutMs)
    this.refusing = true
    const mark = this.ledger.mark()
    const facts = this.undelivered()
    const heldAtDeadline = this.held.abandonAll()
    const abandoned = await this.transport.destroy()
    exitWatch.unwatch(this.exitHook)
    if (abandoned.length > 0 || heldAtDeadline > 0) {
      const error = new ConvotrackError(
        'closed_with_pending',
        `closed with ${describeUndelivered(facts)} after waiting ${timeoutMs} ms`,
      )
      for (const rec of abandoned) rec.fate?.({ status: 'failed', error })
      this.reportError(error, abandoned.length > 0 ? info(abandoned[0] as RecordMeta, true) : undefined)
    }
    const s = this.transport.stats()
    return {
      delivered: flushed.delivered && this.ledger.lostSince(mark) === 0,
      pending: this.transport.pending,
      held: heldAtDeadline + this.held.pendingWork,
      sent: s.sent,
      failed: s.failed,
      dropped: s.dropped,
    }
  }

  stats(): TrackerStats {
    return {
      ...this.transport.stats(),
      ignored: this.ledger.counts.ignored,
      invalid: this.ledger.counts.invalid,
      refused: this.ledger.counts.refused,
      abandoned: this.ledger.counts.abandoned,
      batching: this.transport.batching,
      held: this.held.size,
    }
  }

  reportError(error: unknown, record?: RecordInfo & { body?: string }): void {
    const err =
      error instanceof ConvotrackError
        ? error
        : new ConvotrackError('adapter', error instanceof Error ? error.message : String(error), { cause: error })
    this.safeEmit('error', err, record)
    try {
      if (this.opts.onError) this.opts.onError(err, record)
      else this.warnings.warn(err)
    } catch {
      // a throwing onError must not reach the bot
    }
  }

  useSink(sink: ((record: SerializedRecord) => void) | undefined): void {
    this.outlet = sink ? this.outletFor({ send: sink }) : this.transport
  }

  private outletFor(transport: RecordTransport): RecordOutlet {
    return new TransportOutlet(transport, (error, meta) => {
      this.ledger.failed()
      const err =
        error instanceof ConvotrackError
          ? error
          : new ConvotrackError('transport', error instanceof Error ? error.message : String(error), { cause: error })
      meta.fate?.({ status: 'failed', error: err })
      this.reportError(err, info(meta, true))
    })
  }

  addRecordHook(hook: RecordHook): () => void {
    if (typeof hook !== 'function') throw new ConfigError('addRecordHook needs a function (record) => body | undefined')
    this.hooks = [...this.hooks, hook]
    return () => {
      this.hooks = this.hooks.filter((h) => h !== hook)
    }
  }

  /** The hooks' say on one record: each sees the body the previous one returned; a throwing hook is reported and skipped. */
  private hooked(platform: Platform, type: RecordType, rec: WireRecord): WireRecord {
    let body = rec.body
    for (const hook of this.hooks) {
      try {
        const out = hook({ platform, type, userId: rec.userId, body, conversation: rec.conversation })
        if (isObject(out)) body = out as JsonObject
      } catch (error) {
        this.reportError(
          new ConvotrackError(
            'record_hook',
            `a record hook threw; the record goes out unchanged: ${(error as Error)?.message ?? error}`,
            {
              cause: error,
            },
          ),
          { platform, type, userId: rec.userId },
        )
      }
    }
    return body === rec.body ? rec : { ...rec, body }
  }

  trackSerialized(record: SerializedRecord): boolean {
    if (this.refusing) return this.refuse(record.platform, record.type, record.userId)
    if (this.outlet.full) return this.dropFull(record.platform, record.type, record.userId)
    return this.enqueue(record.platform, record.type, record.v ?? this.v, record.userId, record.body)
  }

  /** The hot path: resolve turn state, serialize, filter, snapshot, enqueue. */
  private track<A, B>(
    platform: Platform,
    type: RecordType,
    o: CallOptions | undefined,
    shape: RecordShape<A, B>,
    a: A,
    b: B,
  ): boolean {
    if (this.refusing) return this.refuse(platform, type, undefined, o?.onRecord)
    // Full: the call is dropped before any work is spent on it, one drop per record it would make.
    if (this.outlet.full) return this.dropCallFull(platform, type, shape, a, b, o?.onRecord)
    try {
      const turn = this.turns.readable()
      const ctx: SerializeContext = {
        sendPlatformCredentials: this.opts.sendPlatformCredentials,
        messengerEvents: this.opts.messengerEvents,
        platformUserJson: o?.userMetadata ?? turn?.userMetadata,
      }
      const fromTurn = o?.turnIntent === false ? undefined : turn
      if (o?.intent) ctx.intent = validateIntent(o.intent, 'intent', `${platform} ${type}`)
      else if (type === 'incoming')
        ctx.intent = o?.notHandled || fromTurn?.notHandled ? NOT_HANDLED : fromTurn?.incomingIntent
      else if (type === 'outgoing') ctx.intent = fromTurn?.outgoingIntent
      const ignore = this.ignore
      if (ignore) ctx.isIgnored = (userId) => ignore(userId, { platform, type, userId })
      const out = shape.serialize(a, b, ctx, type)
      const v = o?.v ?? this.v
      const ask = o?.onRecord
      if (!Array.isArray(out)) return this.queueRecord(platform, type, v, out as WireRecord, ask)
      if (out.length === 0) {
        this.ledger.ignored()
        if (ask) this.handle(ask, platform, type, undefined, '')({ status: 'dropped', reason: 'ignored' })
        return false
      }
      let queued = false
      for (const rec of out as readonly WireRecord[]) if (this.queueRecord(platform, type, v, rec, ask)) queued = true
      return queued
    } catch (error) {
      return this.rejectInvalid(error, platform, type, o?.onRecord)
    }
  }

  /**
   * A handle for a record its caller asked about (`onRecord`): returns what settles it. Only
   * ever built when asked, so the hot path pays nothing for it.
   */
  private handle(ask: Ask, platform: Platform, type: RecordType, userId: string | undefined, key: string): Fate {
    let settle: Fate = () => {}
    const outcome = new Promise<RecordOutcome>((resolve) => {
      settle = resolve
    })
    try {
      ask({ key, platform, type, userId, outcome })
    } catch (error) {
      this.reportError(error) // the caller's callback must not break the call
    }
    return settle
  }

  /**
   * A record that cannot be sent (a broken rule, a getter that throws, JSON that cannot carry
   * it): counted `invalid`, then thrown with `strict`, else reported and the call returns.
   */
  private rejectInvalid(error: unknown, platform: Platform, type: RecordType, ask: Ask | undefined): false {
    this.ledger.invalid()
    const err =
      error instanceof ConvotrackError
        ? error
        : Object.assign(
            new InvalidRecordError(
              '',
              `could not be read: ${error instanceof Error ? error.message : String(error)}`,
              `${platform} ${type}`,
            ),
            { cause: error },
          )
    if (ask) this.handle(ask, platform, type, undefined, '')({ status: 'dropped', reason: 'invalid', error: err })
    if (this.opts.strict) throw error
    this.reportError(err, { platform, type, userId: undefined })
    return false
  }

  /** A turn setting's check: true when it passed; else thrown with `strict`, or reported. */
  private validSetting(check: () => void): boolean {
    try {
      check()
      return true
    } catch (error) {
      if (this.opts.strict) throw error
      this.reportError(error)
      return false
    }
  }

  /** One serialized record: the ignore list, the wire JSON, `redact`, then the queue. */
  private queueRecord(
    platform: Platform,
    type: RecordType,
    v: ApiVersion,
    wire: WireRecord,
    ask: Ask | undefined,
  ): boolean {
    const ignore = this.ignore
    if (ignore && wire.userId !== undefined && ignore(wire.userId, { platform, type, userId: wire.userId })) {
      this.ledger.ignored()
      if (ask) this.handle(ask, platform, type, wire.userId, '')({ status: 'dropped', reason: 'ignored' })
      return false
    }
    const rec = this.hooks.length > 0 ? this.hooked(platform, type, wire) : wire
    {
      let body: string
      try {
        body = JSON.stringify(rec.body)
      } catch {
        body = toWireJson(rec.body, `${platform} ${type}`) // names the field, or throws
      }
      if (this.opts.redact) {
        const meta = { platform, type, userId: rec.userId }
        const redacted = this.opts.redact(JSON.parse(body) as JsonObject, meta)
        if (redacted === null || redacted === undefined) {
          this.drop('redacted', { ...meta, body }, ask)
          return false
        }
        body = toWireJson(redacted, `${platform} ${type} (after redact)`)
      }
      return this.enqueue(platform, type, v, rec.userId, body, rec.conversation, ask)
    }
  }

  private enqueue(
    platform: Platform,
    type: RecordType,
    v: ApiVersion,
    userId: string | undefined,
    body: string,
    conversation?: string,
    ask?: Ask,
  ): boolean {
    const path = this.path(platform, type, v)
    if (this.opts.debug) this.logger.log(`[convotrack] queued POST ${maskApiKey(path)} ${body}`)
    let key: string | undefined
    let fate: Fate | undefined
    if (ask) {
      key = this.transport.newKey()
      fate = this.handle(ask, platform, type, userId, key)
    }
    if (!this.outlet.enqueue(path, v, { platform, type, userId, body, conversation, key, fate })) {
      this.dropFull(platform, type, userId)
      fate?.({ status: 'dropped', reason: 'queue_full' })
      return false
    }
    if (!this.watchingExit) this.watchExit()
    return true
  }

  /** A record after close(): counted as dropped (`closed`) and reported, never thrown at the bot. */
  private refuse(platform: Platform, type: RecordType, userId: string | undefined, ask?: Ask): false {
    this.drop('closed', { platform, type, userId }, ask)
    return false
  }

  /** What is still undelivered, in the terms of the loss report. */
  private undelivered() {
    return {
      ...this.transport.pendingSummary(),
      held: this.held.records,
      queueFull: this.ledger.counts.droppedByReason.queue_full,
    }
  }

  /** The process end, as this tracker sees it (see exit-flush.ts). */
  private readonly exitHook: ExitParticipant = {
    pendingCount: () => this.transport.pending + this.held.size,
    exitFlush: () => (this.exitFlushMs > 0 ? this.flush(this.exitFlushMs) : Promise.resolve()),
    reportExitLoss: (cause: ExitCause) => this.reportExitLoss(cause),
  }

  private watchExit(): void {
    if (this.watchingExit || this.refusing) return
    this.watchingExit = true
    exitWatch.watch(this.exitHook)
  }

  private unwatchExitIfIdle(): void {
    if (!this.watchingExit || this.transport.pending > 0 || this.held.size > 0) return
    this.watchingExit = false
    exitWatch.unwatch(this.exitHook)
  }

  /** Said once, synchronously, as the process ends with records undelivered. */
  private reportExitLoss(cause: ExitCause): void {
    const facts = this.undelivered()
    const how =
      cause === 'exit'
        ? 'process.exit() was called'
        : this.exitFlushMs > 0
          ? `the process is ending after waiting up to ${this.exitFlushMs} ms for delivery (flushOnExit)`
          : 'the process is ending (flushOnExit is off)'
    this.ledger.lostAtExit(facts.records + facts.held)
    this.logger.warn(
      `[convotrack] ${how} with ${describeUndelivered(facts)}. To wait for delivery, call \`await tracker.close()\` before the process ends.`,
    )
  }

  /** `/track?platform&v&type&apiKey`, built once per platform, type and `v`. */
  private path(platform: Platform, type: RecordType, v: ApiVersion): string {
    const byType = v === this.v ? this.paths[platform] : undefined
    const known = byType?.[type]
    if (known !== undefined) return known
    const key = `${platform}|${type}|${v}`
    let path = this.queryCache.get(key)
    if (path === undefined) {
      const q = new URLSearchParams({ platform, v, type, apiKey: this.apiKey }).toString()
      path = this.transport.trackPath(q)
      this.queryCache.set(key, path)
    }
    if (v === this.v) {
      const forPlatform = this.paths[platform] ?? {}
      forPlatform[type] = path
      this.paths[platform] = forPlatform
    }
    return path
  }

  /**
   * A call made while the queue is full: one drop per record it would have produced (counted by
   * the shape's `users`, no serialization), each a `dropped` event. Records the call would not
   * have produced (echoes, receipts, the bot's own DMs, ignored users) are counted as `ignored`,
   * as when the queue has room.
   */
  private dropCallFull<A, B>(
    platform: Platform,
    type: RecordType,
    shape: RecordShape<A, B>,
    a: A,
    b: B,
    ask: Ask | undefined,
  ): false {
    const ignore = this.ignore
    const ctx: SerializeContext = ignore
      ? {
          messengerEvents: this.opts.messengerEvents,
          isIgnored: (userId) => ignore(userId, { platform, type, userId }),
        }
      : this.fullCtx
    const users = shape.users(a, b, ctx, type)
    if (users.length === 0) {
      this.ledger.ignored()
      if (ask) this.handle(ask, platform, type, undefined, '')({ status: 'dropped', reason: 'ignored' })
      return false
    }
    for (let i = 0; i < users.length; i++) {
      const userId = users[i]
      if (ignore && userId !== undefined && ignore(userId, { platform, type, userId })) {
        this.ledger.ignored()
        if (ask) this.handle(ask, platform, type, userId, '')({ status: 'dropped', reason: 'ignored' })
      } else {
        this.dropFull(platform, type, userId)
        if (ask)
          this.handle(ask, platform, type, userId, this.transport.newKey())({ status: 'dropped', reason: 'queue_full' })
      }
    }
    return false
  }

  /** A record the full queue refused: counted exactly, a `dropped` event, and a summary on `onError`. */
  private dropFull(platform: Platform, type: RecordType, userId: string | undefined): false {
    this.ledger.dropped('queue_full')
    if (this.listenerCount('dropped') > 0) this.safeEmit('dropped', 'queue_full', { platform, type, userId })
    this.fullDrops.add(platform, type, userId)
    return false
  }

  private reportFull(count: number, record: RecordInfo | undefined): void {
    const message =
      count === 1
        ? 'queue full: record dropped (the service is unreachable or slower than the bot; raise maxQueueBytes or check the service)'
        : `queue full: ${count} records dropped in the last second (the service is unreachable or slower than the bot; raise maxQueueBytes or check the service)`
    this.reportError(new DroppedRecordError('queue_full', message, count), record)
  }

  private drop(reason: DropReason, meta: RecordInfo & { body?: string }, ask?: Ask): void {
    this.ledger.dropped(reason)
    if (ask) this.handle(ask, meta.platform, meta.type, meta.userId, '')({ status: 'dropped', reason })
    this.safeEmit('dropped', reason, info(meta, false))
    if (reason === 'redacted') return // deliberate: counted, not an error
    const message =
      reason === 'closed'
        ? 'the tracker is closed: record dropped (create a new tracker to track more records)'
        : `record dropped (${reason})`
    this.reportLost(new DroppedRecordError(reason, message), meta, meta.body)
  }

  /** A lost record, reported (the ledger counted it). */
  private reportLost(
    error: ConvotrackError | TransportError,
    meta: RecordInfo & { body?: string },
    body: string | undefined,
  ): void {
    this.reportError(error, { ...info(meta, false), body: body ?? meta.body })
  }

  private safeEmit<E extends keyof TrackerEvents>(event: E, ...args: TrackerEvents[E]): void {
    if (this.listenerCount(event) === 0) return
    try {
      this.emit(event, ...args)
    } catch {
      // a throwing listener must not reach the bot or the transport
    }
  }
}

/**
 * Creates a tracker for one bot.
 *
 * @example
 * const tracker = createTracker({ apiKey: process.env.CONVOTRACK_API_KEY })
 * tracker.universal.logIncoming({ text: 'hi', userId: 'u1' })
 */
export function createTracker(options: TrackerOptions = {}): Tracker {
  return new TrackerImpl(options)
}
