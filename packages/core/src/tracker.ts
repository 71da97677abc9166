import { EventEmitter } from 'node:events'
import type { Dispatcher } from 'undici'
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
import { MemoryPauseStore } from './pause/memory-store'
import type { PauseStore } from './pause/store'
import { serializeAlexaIncoming, serializeAlexaOutgoing } from './platforms/alexa'
import { NOT_HANDLED, type SerializeContext, type WireRecord } from './platforms/context'
import { serializeEvent } from './platforms/events'
import { serializeKik } from './platforms/kik'
import { serializeMessengerIncoming, serializeMessengerOutgoing } from './platforms/messenger'
import { serializeSlack } from './platforms/slack'
import { serializeTwitterIncoming, serializeTwitterOutgoing } from './platforms/twitter'
import { serializeUniversal } from './platforms/universal'
import type { RetryOptions } from './retry'
import { TurnScope, type TurnState } from './scope'
import { type RecordMeta, Transport, type TransportStats } from './transport'
import type {
  AlexaRequestEnvelope,
  AlexaResponseEnvelope,
  ApiVersion,
  Intent,
  JsonObject,
  KikIncomingMessage,
  KikOutgoingMessage,
  KikRecord,
  MessengerSendRequest,
  MessengerSendResponse,
  MessengerWebhookBody,
  Platform,
  RecordType,
  SlackRecord,
  TrackedEvent,
  TwitterDmPayload,
  UniversalMessage,
} from './types'
import { PLATFORMS } from './types'
import { isObject, validateIntent } from './validate'

/** Version of this package, sent in the User-Agent. */
export const VERSION = '0.1.0'

/** Where records go when no `baseUrl` or `CONVOTRACK_URL` is given: the local collector's default address. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787'

/** What the ignore list, `redact` and `onError` learn about a record. */
export interface RecordInfo {
  platform: Platform
  type: RecordType
  userId: string | undefined
}

/** A record after serialization, as handed to a custom sink (see {@link Tracker.useSink}). */
export interface SerializedRecord extends RecordInfo {
  v: ApiVersion
  /** The JSON body exactly as it would be posted. */
  body: string
}

/** Options of {@link createTracker}. */
export interface TrackerOptions {
  /** The bot's tracking key. Default: `process.env.CONVOTRACK_API_KEY`. Never logged. */
  apiKey?: string
  /** The service's base address; records go to `{baseUrl}/track`. Default: `process.env.CONVOTRACK_URL`, else `http://127.0.0.1:8787`. */
  baseUrl?: string
  /** `v` query value. Default `11.1.0-rest`; `10.1.1-rest` for third-party imports. */
  v?: ApiVersion
  /** Most records held (queued + retrying + in flight); beyond, new records are dropped and reported. Default 10 000. */
  maxQueueSize?: number
  /** Requests in flight at once (keep-alive connections); needs ≥ records/s × service latency in s. Default 16. */
  concurrency?: number
  /** Absolute deadline of one request, connect to last byte, in ms. Default 10 000. */
  timeoutMs?: number
  /** Retry policy: attempts, backoff, Retry-After cap. */
  retry?: RetryOptions
  /** An undici dispatcher to send through (a proxy agent, a MockAgent in tests). Default: a keep-alive pool. */
  dispatcher?: Dispatcher
  /** Keep platform secrets (messenger `qs.access_token`, kik `apiKey`, slack `token`, Alexa tokens) in records. Default false. */
  sendPlatformCredentials?: boolean
  /** Users whose records are not sent: a list of ids or a predicate. */
  ignoreUserIds?: readonly string[] | ((userId: string, info: RecordInfo) => boolean)
  /** Rewrites a record before it leaves the process (it gets a private copy), or returns null to drop it (counted, reason `redacted`). */
  redact?: (body: JsonObject, info: RecordInfo) => JsonObject | null | undefined
  /** Called for every problem: invalid records in middleware, failed deliveries, drops. Default: a rate-limited warning on the logger. */
  onError?: (error: ConvotrackError, record?: RecordInfo & { body?: string }) => void
  /** Log each record (API key masked) and each delivery. */
  debug?: boolean
  /** Where `debug` and the default `onError` write. Default `console`. */
  logger?: Pick<Console, 'log' | 'warn'>
  /** Pause state. Default: a {@link MemoryPauseStore}. */
  pauses?: PauseStore
  /** Messenger incoming: `'user'` (default) leaves out echoes and delivery/read receipts; `'all'` keeps them. */
  messengerEvents?: 'user' | 'all'
}

/** Per-call options of every tracking call. */
export interface CallOptions {
  /** Intent of this record (wins over the turn's). */
  intent?: Intent
  /** Incoming: mark this message NotHandled. */
  notHandled?: boolean
  /** User metadata for this record (`platformUserJson` / `serviceUser`). */
  userMetadata?: JsonObject
  /** `v` for this record. */
  v?: ApiVersion
  /** `false`: don't apply the turn's NotHandled / outgoing intent to this record (its own or `intent` still apply). Default true. */
  turnIntent?: boolean
}

/** Options of {@link Tracker.logEvent}. */
export interface EventOptions {
  /** `platform` query value; events share one body shape on every platform. Default `generic`. */
  platform?: Platform
  v?: ApiVersion
}

/** Result of {@link Tracker.flush}. */
export interface FlushResult {
  /** True when nothing is pending and no record failed or was dropped since the previous flush. */
  delivered: boolean
  pending: number
  sent: number
  failed: number
  dropped: number
}

/** Snapshot of the tracker's counters. */
export interface TrackerStats extends TransportStats {
  /** Records not sent on purpose: the ignore list, or nothing left to send (Messenger echoes and receipts, the bot's own DMs). */
  ignored: number
  /** Records rejected as invalid at the call. */
  invalid: number
}

/** Events of the tracker's emitter. */
export interface TrackerEvents {
  /** A problem (same as `onError`). */
  error: [error: ConvotrackError, record: (RecordInfo & { body?: string }) | undefined]
  /** A record was delivered. */
  sent: [record: RecordInfo & { body: string }, status: number]
  /** A record was dropped. */
  dropped: [reason: DropReason, record: RecordInfo]
  /** A delivery attempt failed and will be retried after `delayMs`. */
  retry: [error: ConvotrackError, record: RecordInfo, delayMs: number]
  /** Nothing is pending any more. */
  drained: []
}

/** Incoming and outgoing calls of a universal-shaped platform. */
export interface UniversalChannel {
  /** Tracks a message from the user. Throws {@link InvalidRecordError} for a bad record. */
  logIncoming(message: UniversalMessage, options?: CallOptions): boolean
  /** Tracks a message from the bot. */
  logOutgoing(message: UniversalMessage, options?: CallOptions): boolean
}

/**
 * The tracker: one per bot. Every tracking call validates and snapshots the record
 * synchronously and returns; delivery happens in the background.
 */
export interface Tracker {
  /** Any interface: the universal shape. */
  readonly universal: UniversalChannel
  /** Text messaging: the universal shape with `platform=sms`. */
  readonly sms: UniversalChannel
  /** The universal shape with `platform=generic`. */
  readonly generic: UniversalChannel
  /** Short-post DMs: the platform's DM payload; `text`, `userId`, `buttons` pulled to the top. */
  readonly twitter: {
    logIncoming(payload: TwitterDmPayload, options?: CallOptions): boolean
    logOutgoing(payload: TwitterDmPayload, options?: CallOptions): boolean
  }
  /** Social messenger: the webhook body, and the Send API request with its response. */
  readonly messenger: {
    logIncoming(body: MessengerWebhookBody, options?: CallOptions): boolean
    logOutgoing(request: MessengerSendRequest, responseBody?: MessengerSendResponse, options?: CallOptions): boolean
  }
  /** Team chat records. */
  readonly slack: {
    logIncoming(record: SlackRecord, options?: CallOptions): boolean
    logOutgoing(record: SlackRecord, options?: CallOptions): boolean
  }
  /** Mobile chat records. */
  readonly kik: {
    logIncoming(record: KikRecord<KikIncomingMessage>, options?: CallOptions): boolean
    logOutgoing(record: KikRecord<KikOutgoingMessage>, options?: CallOptions): boolean
  }
  /** Voice assistant: the request envelope (+ Lambda context), and the response envelope. */
  readonly alexa: {
    logIncoming(event: AlexaRequestEnvelope, context?: unknown, options?: CallOptions): boolean
    logOutgoing(
      event: AlexaRequestEnvelope,
      response: AlexaResponseEnvelope & { intent?: Intent },
      options?: CallOptions,
    ): boolean
  }
  /** Tracks a conversation event (custom, revenue, share, page launch, referral). */
  logEvent(event: TrackedEvent, options?: EventOptions): boolean
  /** Marks the current turn's incoming message NotHandled (call before `logIncoming`). */
  setNotHandled(): void
  /** Attaches an intent to the current turn's outgoing records. */
  setOutgoingIntent(intent: Intent): void
  /** Attaches the intent the bot understood to the current turn's incoming record (NotHandled wins). */
  setIncomingIntent(intent: Intent): void
  /** Sets user metadata (`platformUserJson`) for the current turn's records. */
  setUserMetadata(metadata: JsonObject): void
  /**
   * Runs `fn` as one conversation turn: per-turn state set inside never leaks to other turns.
   * Pass `state` (from {@link Tracker.currentTurn}) to re-enter a known turn later.
   */
  withTurn<T>(fn: () => T, state?: TurnState): T
  /**
   * The current turn's state, if a turn is active (for adapters). With `includeLoose`, also the
   * state set outside any turn during the current synchronous run.
   */
  currentTurn(options?: { includeLoose?: boolean }): TurnState | undefined
  /** Pause state, shared with the pause receiver. */
  readonly pauses: PauseStore
  /** Asks the pause store; a failing store is reported and counts as not paused (the bot keeps answering). */
  isPaused(key: string | undefined): Promise<boolean>
  /** Waits until everything handed over is delivered or failed, at most `timeoutMs` (default 10 000). Never rejects. */
  flush(timeoutMs?: number): Promise<FlushResult>
  /** Flushes (at most `timeoutMs`), frees sockets and refuses new records. */
  close(timeoutMs?: number): Promise<FlushResult>
  /** True after `close()`. */
  readonly closed: boolean
  /** Whether platform secrets are kept in records (`sendPlatformCredentials`), for adapters that build records themselves. */
  readonly sendPlatformCredentials: boolean
  /** Counter snapshot. */
  stats(): TrackerStats
  /** Reports a problem through `onError` and the `error` event (for adapters). */
  reportError(error: unknown, record?: RecordInfo & { body?: string }): void
  /** Sends serialized records somewhere other than the service (e.g. a log line), or back to the service with `undefined`. */
  useSink(sink: ((record: SerializedRecord) => void) | undefined): void
  /** Hands over an already-serialized record (a forwarded log line, an import) without re-serializing. */
  trackSerialized(record: SerializedRecord): boolean
  on<E extends keyof TrackerEvents>(event: E, listener: (...args: TrackerEvents[E]) => void): Tracker
  once<E extends keyof TrackerEvents>(event: E, listener: (...args: TrackerEvents[E]) => void): Tracker
  off<E extends keyof TrackerEvents>(event: E, listener: (...args: TrackerEvents[E]) => void): Tracker
}

/** Masks the `apiKey` query value for logs. */
export function maskApiKey(pathOrUrl: string): string {
  return pathOrUrl.replace(/([?&]apiKey=)[^&]*/g, '$1***')
}

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
  private sink: ((record: SerializedRecord) => void) | undefined
  private isClosed = false
  private ignored = 0
  private invalid = 0
  private totalLoss = 0
  private lossSinceFlush = 0
  private readonly warnedAt = new Map<string, { at: number; suppressed: number }>()

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
        maxQueueSize: opts.maxQueueSize ?? 10_000,
        concurrency: opts.concurrency ?? 16,
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
        onDrained: () => this.safeEmit('drained'),
      },
    )

    const universalChannel = (platform: Platform): UniversalChannel => ({
      logIncoming: (m, o) => this.track(platform, 'incoming', o, (ctx) => [serializeUniversal(m, ctx)]),
      logOutgoing: (m, o) => this.track(platform, 'outgoing', o, (ctx) => [serializeUniversal(m, ctx)]),
    })
    this.universal = universalChannel('universal')
    this.sms = universalChannel('sms')
    this.generic = universalChannel('generic')
    this.twitter = {
      logIncoming: (p, o) => this.track('twitter', 'incoming', o, (ctx) => serializeTwitterIncoming(p, ctx)),
      logOutgoing: (p, o) => this.track('twitter', 'outgoing', o, (ctx) => serializeTwitterOutgoing(p, ctx)),
    }
    this.messenger = {
      logIncoming: (b, o) => this.track('facebook', 'incoming', o, (ctx) => serializeMessengerIncoming(b, ctx)),
      logOutgoing: (r, res, o) =>
        this.track('facebook', 'outgoing', o, (ctx) => [serializeMessengerOutgoing(r, res, ctx)]),
    }
    this.slack = {
      logIncoming: (r, o) => this.track('slack', 'incoming', o, (ctx) => [serializeSlack(r, 'incoming', ctx)]),
      logOutgoing: (r, o) => this.track('slack', 'outgoing', o, (ctx) => [serializeSlack(r, 'outgoing', ctx)]),
    }
    this.kik = {
      logIncoming: (r, o) => this.track('kik', 'incoming', o, (ctx) => [serializeKik(r, 'incoming', ctx)]),
      logOutgoing: (r, o) => this.track('kik', 'outgoing', o, (ctx) => [serializeKik(r, 'outgoing', ctx)]),
    }
    this.alexa = {
      logIncoming: (e, c, o) => this.track('alexa', 'incoming', o, (ctx) => [serializeAlexaIncoming(e, c, ctx)]),
      logOutgoing: (e, r, o) => this.track('alexa', 'outgoing', o, (ctx) => [serializeAlexaOutgoing(e, r, ctx)]),
    }
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
    return this.track(platform, 'event', { v: options.v }, () => [serializeEvent(event)])
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
    const lossBefore = this.lossSinceFlush
    this.lossSinceFlush = 0
    const totalAtStart = this.totalLoss
    const drained = await this.transport.drain(timeoutMs)
    const s = this.transport.stats()
    return {
      delivered: drained && lossBefore === 0 && this.totalLoss === totalAtStart,
      pending: this.transport.pending,
      sent: s.sent,
      failed: s.failed,
      dropped: s.dropped,
    }
  }

  async close(timeoutMs = 10_000): Promise<FlushResult> {
    this.isClosed = true
    const flushed = await this.flush(timeoutMs)
    const lossBefore = this.totalLoss
    const abandoned = await this.transport.destroy()
    if (abandoned.length > 0) {
      this.totalLoss += abandoned.length
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
      delivered: flushed.delivered && this.totalLoss === lossBefore,
      pending: this.transport.pending,
      sent: s.sent,
      failed: s.failed,
      dropped: s.dropped,
    }
  }

  stats(): TrackerStats {
    return { ...this.transport.stats(), ignored: this.ignored, invalid: this.invalid }
  }

  reportError(error: unknown, record?: RecordInfo & { body?: string }): void {
    const err =
      error instanceof ConvotrackError
        ? error
        : new ConvotrackError('adapter', error instanceof Error ? error.message : String(error), { cause: error })
    this.safeEmit('error', err, record)
    try {
      if (this.opts.onError) this.opts.onError(err, record)
      else this.defaultOnError(err)
    } catch {
      // a throwing onError must not reach the bot
    }
  }

  useSink(sink: ((record: SerializedRecord) => void) | undefined): void {
    this.sink = sink
  }

  trackSerialized(record: SerializedRecord): boolean {
    if (this.isClosed) throw new TrackerClosedError()
    return this.enqueue(record.platform, record.type, record.v ?? this.v, record.userId, record.body)
  }

  /** The hot path: resolve turn state, serialize, filter, snapshot, enqueue. */
  private track(
    platform: Platform,
    type: RecordType,
    o: CallOptions | undefined,
    serialize: (ctx: SerializeContext) => WireRecord[],
  ): boolean {
    if (this.isClosed) throw new TrackerClosedError()
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
    let records: WireRecord[]
    try {
      records = serialize(ctx)
    } catch (error) {
      this.invalid++
      throw error
    }
    if (records.length === 0) {
      this.ignored++
      return false
    }
    let queued = false
    const v = o?.v ?? this.v
    for (const rec of records) {
      const meta = { platform, type, userId: rec.userId }
      if (rec.userId !== undefined && ignore?.(rec.userId, meta)) {
        this.ignored++
        continue
      }
      let body: string
      try {
        body = toWireJson(rec.body, `${platform} ${type}`)
      } catch (error) {
        this.invalid++
        throw error
      }
      if (this.opts.redact) {
        const redacted = this.opts.redact(JSON.parse(body) as JsonObject, meta)
        if (redacted === null || redacted === undefined) {
          this.drop('redacted', { ...meta, body })
          continue
        }
        body = toWireJson(redacted, `${platform} ${type} (after redact)`)
      }
      if (this.enqueue(platform, type, v, rec.userId, body, rec.conversation)) queued = true
    }
    return queued
  }

  private enqueue(
    platform: Platform,
    type: RecordType,
    v: ApiVersion,
    userId: string | undefined,
    body: string,
    conversation?: string,
  ): boolean {
    const meta: RecordMeta = { platform, type, userId, body, conversation }
    if (this.sink) {
      this.sink({ platform, type, userId, v, body })
      return true
    }
    const key = `${platform}|${type}|${v}`
    let path = this.queryCache.get(key)
    if (path === undefined) {
      const q = new URLSearchParams({ platform, v, type, apiKey: this.apiKey }).toString()
      path = this.transport.trackPath(q)
      this.queryCache.set(key, path)
    }
    if (this.opts.debug) this.logger.log(`[convotrack] queued POST ${maskApiKey(path)} ${body}`)
    if (!this.transport.enqueue(path, meta)) {
      this.drop('queue_full', meta)
      return false
    }
    return true
  }

  private drop(reason: DropReason, meta: RecordInfo & { body?: string }): void {
    const c = this.transport.counters
    c.dropped++
    c.droppedByReason[reason]++
    this.safeEmit('dropped', reason, info(meta, false))
    if (reason === 'redacted') return // deliberate: counted, not an error
    const message =
      reason === 'queue_full'
        ? 'queue full: record dropped (the service is unreachable or slower than the bot; raise maxQueueSize or check the service)'
        : `record dropped (${reason})`
    this.lose(new DroppedRecordError(reason, message), meta, meta.body)
  }

  private lose(
    error: ConvotrackError | TransportError,
    meta: RecordInfo & { body?: string },
    body: string | undefined,
  ): void {
    this.totalLoss++
    this.lossSinceFlush++
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

  /** At most one line per error code per 10 s, with a count of the ones held back. */
  private defaultOnError(err: ConvotrackError): void {
    const now = Date.now()
    const seen = this.warnedAt.get(err.code)
    if (seen && now - seen.at < 10_000) {
      seen.suppressed++
      return
    }
    const more = seen?.suppressed ? ` (+${seen.suppressed} similar)` : ''
    this.warnedAt.set(err.code, { at: now, suppressed: 0 })
    this.logger.warn(`[convotrack] ${err.name} ${err.code}: ${err.message}${more}`)
  }
}

function info(meta: RecordInfo & { body?: string }, withBody: true): RecordInfo & { body: string }
function info(meta: RecordInfo, withBody: false): RecordInfo
function info(meta: RecordInfo & { body?: string }, withBody: boolean): RecordInfo & { body?: string } {
  const out: RecordInfo & { body?: string } = { platform: meta.platform, type: meta.type, userId: meta.userId }
  if (withBody) out.body = meta.body ?? ''
  return out
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
