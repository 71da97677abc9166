import type { Dispatcher } from 'undici'
import type { ConvotrackError, DropReason } from './errors'
import type { Feedback } from './feedback'
import type { HeldTurn } from './held-records'
import type { PauseStore } from './pause/store'
import type { RetryOptions } from './retry'
import type { TransportStats } from './transport-types'
import type { TurnState } from './turn-scope'
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

/** Public types of the tracker: options, events, results and the {@link Tracker} interface. */

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

/** A record after serialization, as handed to a {@link RecordTransport}. */
export interface SerializedRecord extends RecordInfo {
  v: ApiVersion
  /** The JSON body exactly as it would be posted. */
  body: string
}

/**
 * Where records go instead of the tracking service (a log line, a test's array): pass it as
 * `createTracker({ transport })`, or switch an existing tracker with `useSink` from
 * `@convotrack/core/adapter`. `send` takes each record as it is logged; a throw is reported
 * through `onError`, never to the bot.
 *
 * @example createTracker({ transport: { send: (r) => console.log(JSON.stringify(r)) } })
 */
export interface RecordTransport {
  send(record: SerializedRecord): void
}

/**
 * A record as a hook sees it (see {@link Tracker.addRecordHook}): serialized to its wire body,
 * not yet redacted, queued or sent.
 */
export interface HookedRecord extends RecordInfo {
  /** The wire body. Don't mutate it: return a new body instead. */
  body: JsonObject
  /** The conversation it belongs to, when the shape names one (universal `conversationId`, Slack channel…). */
  conversation: string | undefined
}

/**
 * Sees every record a tracking call makes; returns a replacement body, or nothing to keep it.
 * A hook that throws is reported through `onError` and the record goes out unchanged.
 */
export type RecordHook = (record: HookedRecord) => JsonObject | undefined

/** Options of {@link createTracker}. */
export interface TrackerOptions {
  /** The bot's tracking key. Default: `process.env.CONVOTRACK_API_KEY`. Never logged. */
  apiKey?: string
  /** The service's base address; records go to `{baseUrl}/track`. Default: `process.env.CONVOTRACK_URL`, else `http://127.0.0.1:8787`. */
  baseUrl?: string
  /** `v` query value. Default `11.1.0-rest`; `10.1.1-rest` for third-party imports. */
  v?: ApiVersion
  /**
   * Most bytes of record bodies held (queued + retrying + in flight); beyond, new records are
   * dropped (counted, reported in a summary) without being serialized. Default 64 MiB.
   */
  maxQueueBytes?: number
  /** Optionally also a most records held. Default: no count limit (the bytes bound memory). */
  maxQueueSize?: number
  /**
   * Cap of the requests in flight. The number in flight adapts between a floor and this cap
   * (grows while records wait and a larger limit delivers more, halves on timeouts and 5xx).
   * Default 256.
   */
  concurrency?: number
  /**
   * Batches when the service advertises them (`Convotrack-Batch` on its `/track` answers);
   * `false` forces one record per request. Default true.
   */
  batch?: boolean
  /** Absolute deadline of one request, connect to last byte, in ms. Default 10 000. */
  timeoutMs?: number
  /** Retry policy: attempts, backoff, Retry-After cap. */
  retry?: RetryOptions
  /** An undici dispatcher to send through (a proxy agent, a MockAgent in tests). Default: keep-alive connections of our own, one per request in flight (they follow the concurrency limit). */
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
  /**
   * When the event loop empties (`beforeExit`) with records pending, deliver what can be
   * delivered within this many ms before the process ends. `false` or `0` turns it off. An
   * idle tracker never keeps a process alive. Whatever is still undelivered when the process
   * ends is said once on the logger either way. Default `true` (3000 ms).
   */
  flushOnExit?: boolean | number
  /**
   * What a direct tracking call does with a record it cannot send (a numeric `userId`, a
   * circular or BigInt `platformJson`, a getter that throws, a bad intent). Default `false`: the
   * bot never sees it — the problem goes to `onError` (an `InvalidRecordError` naming the field
   * and rule), is counted in `stats().invalid`, and the call returns `false`, as Sentry's and
   * PostHog's capture calls do. `true` throws the `InvalidRecordError` out of the call instead:
   * for development and tests, where a bad record should stop the run. Adapters never throw either way.
   */
  strict?: boolean
  /**
   * Send records somewhere other than the tracking service (see {@link RecordTransport}).
   * Default: the tracking service at `baseUrl`, with every delivery guarantee in the README.
   */
  transport?: RecordTransport
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
  /**
   * Asks what becomes of the call's records: called synchronously, inside the call, once per
   * record it makes (also for one it refuses: invalid, ignored, dropped), with a
   * {@link RecordHandle}. Without it a call costs nothing extra.
   *
   * @example tracker.universal.logIncoming(msg, { onRecord: (r) => r.outcome.then((o) => console.log(r.key, o.status)) })
   */
  onRecord?: (record: RecordHandle) => void
}

/** What became of one record. */
export type RecordOutcome =
  /** Stored by the service (`accepted` or `duplicate`), or taken by a `RecordTransport`. */
  | { status: 'sent' }
  /** Failed for good (retries exhausted, not retryable, refused by the service, abandoned at close). */
  | { status: 'failed'; error: ConvotrackError }
  /** Never sent: `queue_full`, `redacted`, `closed`, or `invalid` / `ignored` at the call. */
  | { status: 'dropped'; reason: DropReason | 'invalid' | 'ignored'; error?: ConvotrackError }

/** One record of a tracking call, for a caller that asked (`onRecord`). */
export interface RecordHandle extends RecordInfo {
  /**
   * The record's idempotency key: the `Idempotency-Key` header (or `idempotencyKey` in a batch),
   * the same on every retry. `''` when the call made no record (invalid, ignored).
   */
  readonly key: string
  /** Settles once, with what became of the record. Never rejects. */
  readonly outcome: Promise<RecordOutcome>
}

/** Options of {@link Tracker.logEvent}. */
export interface EventOptions {
  /** `platform` query value; events share one body shape on every platform. Default `generic`. */
  platform?: Platform
  v?: ApiVersion
  /** What becomes of the event's record(s): see {@link CallOptions.onRecord}. */
  onRecord?: (record: RecordHandle) => void
}

/** Result of {@link Tracker.flush}. */
export interface FlushResult {
  /** True when nothing is pending or held and no record failed or was dropped since the previous flush. */
  delivered: boolean
  pending: number
  /**
   * Records adapters still held at the deadline: in turn buffers ({@link Tracker.holdTurn}) plus
   * unfinished work that will produce records ({@link Tracker.holdWork}). After `close()`, those
   * turn-buffer records are counted as dropped (`closed`).
   */
  held: number
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
  /** Of `failed`: records of a batch the service refused (`RefusedRecordError`, not retried). */
  refused: number
  /** Of `failed` and `dropped`: records pending or held when `close()` gave up on them. */
  abandoned: number
  /** Records adapters hold now (turn buffers plus unfinished work that will produce records). */
  held: number
  /** True once the service advertised batches and records go in batches (see the `batch` option). */
  batching: boolean
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
  /**
   * Tracks a message from the user. A bad record is reported through `onError` and the call
   * returns false (with `strict: true` it throws {@link InvalidRecordError}).
   */
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
  /**
   * Tracks a user's rating of the bot's last answer as the spec `customEvent` named `feedback`
   * (`extraInfo: { score, scale, comment? }`), so any tracking service accepts it. `score` is
   * −1 … 1 (thumbs) or a whole 1 … 5 (stars). The collector shows it in the transcript, counts it
   * in the overview and averages it per intent of the answer it rates (the last outgoing message
   * before it); a negative score puts the conversation in the handoff queue.
   *
   * @example tracker.feedback({ userId: 'u1', conversationId: 'c1', score: -1, comment: 'wrong answer' })
   */
  feedback(feedback: Feedback, options?: EventOptions): boolean
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
  /**
   * Opens a buffer for the current turn's records (or the turn `state`'s): an adapter holds a
   * record there until the turn has decided about it (its NotHandled, its intent, the message a
   * reply answers). `flush()` and `close()` wait for held records.
   *
   * @example const held = tracker.holdTurn(); held.hold(() => tracker.kik.logIncoming(record)); next(); held.end()
   *
   * @deprecated For adapters: use `holdTurn` from `@convotrack/core/adapter`.
   */
  holdTurn(state?: TurnState): HeldTurn
  /**
   * The current turn's open buffer from {@link Tracker.holdTurn}, if any (a reply about to go out releases its message).
   *
   * @deprecated For adapters: use `heldTurn` from `@convotrack/core/adapter`.
   */
  heldTurn(): HeldTurn | undefined
  /**
   * Registers work that will hand records to the tracker when it settles (a lookup the records
   * need): `flush()` and `close()` wait for it within their timeout.
   *
   * @example tracker.holdWork(teamInfo.then((name) => tracker.slack.logIncoming({ ...record, team: { id, name } })))
   *
   * @deprecated For adapters: use `holdWork` from `@convotrack/core/adapter`.
   */
  holdWork(work: PromiseLike<unknown>): void
  /**
   * Waits until everything handed over is delivered or failed, at most `timeoutMs` (default
   * 10 000): first for records adapters hold (turn buffers, lookups), then for delivery. Never rejects.
   */
  flush(timeoutMs?: number): Promise<FlushResult>
  /**
   * Flushes (at most `timeoutMs`), frees sockets and refuses new records: a record that arrives
   * afterwards is counted as dropped (`closed`) and reported, never thrown at the bot.
   */
  close(timeoutMs?: number): Promise<FlushResult>
  /** True after `close()`. */
  readonly closed: boolean
  /** Whether platform secrets are kept in records (`sendPlatformCredentials`), for adapters that build records themselves. */
  readonly sendPlatformCredentials: boolean
  /** Counter snapshot. */
  stats(): TrackerStats
  /**
   * Reports a problem through `onError` and the `error` event (for adapters).
   *
   * @deprecated For adapters: use `reportError` from `@convotrack/core/adapter`.
   */
  reportError(error: unknown, record?: RecordInfo & { body?: string }): void
  /**
   * Sends serialized records somewhere other than the service (e.g. a log line), or back to the service with `undefined`.
   *
   * @deprecated For adapters: use `useSink` from `@convotrack/core/adapter`.
   */
  useSink(sink: ((record: SerializedRecord) => void) | undefined): void
  /**
   * Adds a hook that sees every record a tracking call makes, after serialization and before
   * `redact` (so redaction still applies to what a hook adds); returns the function that
   * removes it. Records handed over already serialized ({@link Tracker.trackSerialized}) are
   * not seen. Used by integrations such as `@convotrack/otel`.
   *
   * @example const remove = tracker.addRecordHook(({ body }) => ({ ...body, platformJson: { build: 42 } }))
   */
  addRecordHook(hook: RecordHook): () => void
  /**
   * Hands over an already-serialized record (a forwarded log line, an import) without re-serializing.
   *
   * @deprecated For adapters: use `trackSerialized` from `@convotrack/core/adapter`.
   */
  trackSerialized(record: SerializedRecord): boolean
  on<E extends keyof TrackerEvents>(event: E, listener: (...args: TrackerEvents[E]) => void): Tracker
  once<E extends keyof TrackerEvents>(event: E, listener: (...args: TrackerEvents[E]) => void): Tracker
  off<E extends keyof TrackerEvents>(event: E, listener: (...args: TrackerEvents[E]) => void): Tracker
}
