import { EventEmitter } from 'node:events'
import { buildChannels, type Serializer } from './channels'
import {
  ConfigError,
  ConvotrackError,
  DroppedRecordError,
  type DropReason,
  InvalidRecordError,
  TrackerClosedError,
  type TransportError,
} from './errors'
import { toWireJson } from './json'
import { DropSummary, info, LossCount, maskApiKey } from './loss-report'
import { MemoryPauseStore } from './pause/memory-store'
import type { PauseStore } from './pause/store'
import { NOT_HANDLED, type SerializeContext, type WireRecord } from './platforms/context'
import { serializeEvent } from './platforms/events'
import { TurnScope, type TurnState } from './scope'
import {
  type CallOptions,
  DEFAULT_BASE_URL,
  type EventOptions,
  type FlushResult,
  type RecordInfo,
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
import type { ApiVersion, Intent, JsonObject, Platform, RecordType, TrackedEvent } from './types'
import { PLATFORMS } from './types'
import { isObject, validateIntent } from './validate'
import { WarnLimiter } from './warn-limiter'

const eventSerializer: Serializer<TrackedEvent, undefined> = (event) => serializeEvent(event)

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
  private readonly scope = new TurnScope()
  private readonly queryCache = new Map<string, string>()
  private readonly apiKey: string
  private readonly v: ApiVersion
  private readonly ignore: ((userId: string, info: RecordInfo) => boolean) | undefined
  private readonly logger: Pick<Console, 'log' | 'warn'>
  private readonly warnings: WarnLimiter
  private sink: ((record: SerializedRecord) => void) | undefined
  private isClosed = false
  private ignored = 0
  private invalid = 0
  private readonly loss = new LossCount()
  private readonly fullDrops = new DropSummary((n, record) => this.reportFull(n, record))
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
          if (this.opts.debug) this.logger.log(`[convotrack] delivered ${meta.platform}/${meta.type} (${status})`)
          if (this.listenerCount('sent') > 0) this.safeEmit('sent', info(meta, true), status)
        },
        onFailed: (error, meta) => this.lose(error, meta, undefined),
        onRetry: (error, meta, delay) => {
          if (this.opts.debug)
            this.logger.log(`[convotrack] retry ${meta.platform}/${meta.type} in ${delay} ms: ${error.message}`)
          this.safeEmit('retry', error, info(meta, false), delay)
        },
        wantsRetry: () => this.opts.debug === true || this.listenerCount('retry') > 0,
        onDrained: () => this.safeEmit('drained'),
      },
    )
    const channels = buildChannels((platform, type, o, serialize, a, b) =>
      this.track(platform, type, o, serialize, a, b),
    )
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
      throw new InvalidRecordError('platform', `must be one of ${PLATFORMS.join(', ')}`, 'event')
    return this.track(platform, 'event', { v: options.v }, eventSerializer, event, undefined)
  }

  setNotHandled(): void {
    this.scope.writable().notHandled = true
  }

  setOutgoingIntent(intent: Intent): void {
    validateIntent(intent, 'intent', 'setOutgoingIntent')
    this.scope.writable().outgoingIntent = intent
  }

  setIncomingIntent(intent: Intent): void {
    validateIntent(intent, 'intent', 'setIncomingIntent')
    this.scope.writable().incomingIntent = intent
  }

  setUserMetadata(metadata: JsonObject): void {
    if (!isObject(metadata))
      throw new InvalidRecordError('metadata', 'must be an object of user fields', 'setUserMetadata')
    const turn = this.scope.writable()
    turn.userMetadata = { ...turn.userMetadata, ...metadata }
  }

  withTurn<T>(fn: () => T, state?: TurnState): T {
    return this.scope.run(fn, state)
  }

  currentTurn(options?: { includeLoose?: boolean }): TurnState | undefined {
    return options?.includeLoose ? this.scope.readable() : this.scope.active()
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
    const lossBefore = this.loss.takeSinceFlush()
    const totalAtStart = this.loss.total
    const drained = await this.transport.drain(timeoutMs)
    const s = this.transport.stats()
    return {
      delivered: drained && lossBefore === 0 && this.loss.total === totalAtStart,
      pending: this.transport.pending,
      sent: s.sent,
      failed: s.failed,
      dropped: s.dropped,
    }
  }

  async close(timeoutMs = 10_000): Promise<FlushResult> {
    this.isClosed = true
    const flushed = await this.flush(timeoutMs)
    const lossBefore = this.loss.total
    const abandoned = await this.transport.destroy()
    if (abandoned.length > 0) {
      this.loss.add(abandoned.length)
      this.reportError(
        new ConvotrackError(
          'closed_with_pending',
          `closed with ${abandoned.length} records undelivered after waiting ${timeoutMs} ms`,
        ),
        info(abandoned[0] as RecordMeta, true),
      )
    }
    const s = this.transport.stats()
    return {
      delivered: flushed.delivered && this.loss.total === lossBefore,
      pending: this.transport.pending,
      sent: s.sent,
      failed: s.failed,
      dropped: s.dropped,
    }
  }

  stats(): TrackerStats {
    return {
      ...this.transport.stats(),
      ignored: this.ignored,
      invalid: this.invalid,
      batching: this.transport.batching,
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
    this.sink = sink
  }

  trackSerialized(record: SerializedRecord): boolean {
    if (this.isClosed) throw new TrackerClosedError()
    if (!this.sink && this.transport.full) return this.dropFull(record.platform, record.type, record.userId)
    return this.enqueue(record.platform, record.type, record.v ?? this.v, record.userId, record.body)
  }

  /** The hot path: resolve turn state, serialize, filter, snapshot, enqueue. */
  private track<A, B>(
    platform: Platform,
    type: RecordType,
    o: CallOptions | undefined,
    serialize: Serializer<A, B>,
    a: A,
    b: B,
  ): boolean {
    if (this.isClosed) throw new TrackerClosedError()
    // Full: the record is dropped before any work is spent on it.
    if (!this.sink && this.transport.full) {
      const userId = (a as { userId?: unknown } | undefined)?.userId
      return this.dropFull(platform, type, typeof userId === 'string' ? userId : undefined)
    }
    const turn = this.scope.readable()
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
    let out: WireRecord | readonly WireRecord[]
    try {
      out = serialize(a, b, ctx, type)
    } catch (error) {
      this.invalid++
      throw error
    }
    const v = o?.v ?? this.v
    if (!Array.isArray(out)) return this.queueRecord(platform, type, v, out as WireRecord)
    if (out.length === 0) {
      this.ignored++
      return false
    }
    let queued = false
    for (const rec of out as readonly WireRecord[]) if (this.queueRecord(platform, type, v, rec)) queued = true
    return queued
  }

  /** One serialized record: the ignore list, the wire JSON, `redact`, then the queue. */
  private queueRecord(platform: Platform, type: RecordType, v: ApiVersion, rec: WireRecord): boolean {
    const ignore = this.ignore
    if (ignore && rec.userId !== undefined && ignore(rec.userId, { platform, type, userId: rec.userId })) {
      this.ignored++
      return false
    }
    {
      let body: string
      try {
        body = JSON.stringify(rec.body)
      } catch {
        try {
          body = toWireJson(rec.body, `${platform} ${type}`) // names the field, or throws
        } catch (error) {
          this.invalid++
          throw error
        }
      }
      if (this.opts.redact) {
        const meta = { platform, type, userId: rec.userId }
        const redacted = this.opts.redact(JSON.parse(body) as JsonObject, meta)
        if (redacted === null || redacted === undefined) {
          this.drop('redacted', { ...meta, body })
          return false
        }
        body = toWireJson(redacted, `${platform} ${type} (after redact)`)
      }
      return this.enqueue(platform, type, v, rec.userId, body, rec.conversation)
    }
  }

  private enqueue(
    platform: Platform,
    type: RecordType,
    v: ApiVersion,
    userId: string | undefined,
    body: string,
    conversation?: string,
  ): boolean {
    if (this.sink) {
      this.sink({ platform, type, userId, v, body })
      return true
    }
    const path = this.path(platform, type, v)
    if (this.opts.debug) this.logger.log(`[convotrack] queued POST ${maskApiKey(path)} ${body}`)
    if (!this.transport.enqueue(path, v, { platform, type, userId, body, conversation })) {
      this.dropFull(platform, type, userId)
      return false
    }
    return true
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

  /** A record the full queue refused: counted exactly, a `dropped` event, and a summary on `onError`. */
  private dropFull(platform: Platform, type: RecordType, userId: string | undefined): false {
    const c = this.transport.counters
    c.dropped++
    c.droppedByReason.queue_full++
    this.loss.add()
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

  private drop(reason: DropReason, meta: RecordInfo & { body?: string }): void {
    const c = this.transport.counters
    c.dropped++
    c.droppedByReason[reason]++
    this.safeEmit('dropped', reason, info(meta, false))
    if (reason === 'redacted') return // deliberate: counted, not an error
    const message = `record dropped (${reason})`
    this.lose(new DroppedRecordError(reason, message), meta, meta.body)
  }

  private lose(
    error: ConvotrackError | TransportError,
    meta: RecordInfo & { body?: string },
    body: string | undefined,
  ): void {
    this.loss.add()
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
