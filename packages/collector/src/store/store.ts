import type { RecordPlatform, StoredRecordType } from '../ingest/legacy-records'
import type { NormalizedMessage } from '../ingest/normalize'
import type {
  FunnelLine,
  FunnelStep,
  OverviewReport,
  PathLine,
  RetentionReport,
  RetentionZoneState,
} from '../reports/analytics-types'
import type { Period } from '../reports/periods'
import type { HandoffEntry, HandoffNote, HandoffStore } from './handoff-records'

/** A record as accepted by `POST /track` (or the Messenger webhook). */
export interface IncomingRecord {
  bot: string
  /** The spec's platforms, and the dashbot SDK's others (`microsoft`, `webchat`…). */
  platform: RecordPlatform
  /** `incoming` / `outgoing` / `event`, and the dashbot SDK's `all` (Messenger `log()`) and `connect` (Slack bot metadata, no message). */
  type: StoredRecordType
  /** As sent: any `MAJOR.MINOR.PATCH-suffix`. */
  v: string
  /** The JSON body as received, with platform credentials blanked. */
  raw: string
  /** Collector clock, epoch ms. */
  receivedAt: number
  /**
   * Event time, epoch ms: when the record's own shape says it happened (see `ingest/event-time.ts`).
   * Absent: `receivedAt`. Reports, transcripts and the chart use it.
   */
  eventTs?: number | undefined
  /**
   * The sender's per-record id (`Idempotency-Key` header, or a batch record's `idempotencyKey`):
   * a record whose (bot, key) is already stored is not stored again. Absent: always stored.
   */
  idempotencyKey?: string | undefined
  /**
   * With an `idempotencyKey`: a hash of what was sent under it (platform, type, `v`, body), kept
   * with the record and after its erasure, so the key cannot be reused for another record.
   */
  fingerprint?: string | undefined
}

/** What storing one record gave: its id, whether it was a repeat, its stored messages (none for a repeat). */
export interface AddResult {
  id: number
  /** The (bot, idempotencyKey) was already stored: `id` is the stored record's, nothing new was stored. */
  duplicate: boolean
  messages: StoredMessage[]
  /** For a repeat: the fingerprint stored under its key (absent for records stored without one). */
  fingerprint?: string
}

/** A stored message as the read API returns it. */
export interface StoredMessage extends NormalizedMessage {
  id: number
  /** Id of the record it came from (`GET /api/records/:id` gives the raw JSON). */
  recordId: number
  bot: string
  /** Event time, epoch ms: the record's own time where its shape carries one, else {@link receivedAt}. */
  ts: number
  /** Collector clock when the record arrived, epoch ms. */
  receivedAt: number
}

/** A stored record: its metadata and the raw platform JSON. */
export interface StoredRecord extends IncomingRecord {
  id: number
}

/** A transcript's summary in the conversations list. */
export interface ConversationSummary {
  bot: string
  platform: RecordPlatform
  thread: string
  userId: string
  messages: number
  lastText: string | null
  /** Event time of the thread's latest message. */
  lastTs: number
  paused: boolean
  /** Event time of the thread's first message. */
  firstTs: number
  /** The thread's inputs counted in the NotHandled report. */
  notHandled: number
  /** Keyset cursor: pass as `cursor` for the page after this row. */
  cursor: string
}

/** One line of the NotHandled report: the same input, counted. */
export interface NotHandledLine {
  text: string
  count: number
  users: number
  lastTs: number
  bots: string[]
}

/** One line of the intents roll-up. */
export interface IntentLine {
  intent: string
  count: number
  incoming: number
  outgoing: number
  /** Average over the messages that carried a confidence; null when none did. */
  avgConfidence: number | null
}

/** The events report. */
export interface EventsReport {
  custom: Array<{ name: string; count: number }>
  revenue: { total: number; count: number; byName: Array<{ name: string; total: number; count: number }> }
  shares: { count: number; byName: Array<{ name: string; count: number }> }
  pageLaunches: Array<{ page: string; count: number }>
  referrals: Array<{ source: string; count: number }>
}

/** Users counted by the values of one `platformUserJson` field (latest metadata per user). */
export interface Segment {
  field: string
  values: Array<{ value: string; users: number }>
}

/** Messages per time bucket. */
export interface TimelineBucket {
  /** Bucket start, epoch ms. */
  t: number
  incoming: number
  outgoing: number
  events: number
}

/** A message whose text matched a search. */
export interface SearchHit {
  id: number
  bot: string
  thread: string
  userId: string
  direction: 'incoming' | 'outgoing' | 'event'
  text: string
  /** Event time. */
  ts: number
}

/** Options every store takes. */
export interface StoreOptions {
  /**
   * A session ends after this many minutes without a message of the user (an explicit
   * `sessionId` starts a new one). Sessions are joined at ingest: a change applies to what is
   * stored after it. Default 30.
   */
  sessionGapMinutes?: number
  /**
   * IANA time zones whose retention cohorts are kept at ingest (day, week and month periods in
   * each), so `GET /api/reports/retention?tz=` in one of them reads the cohort table; another
   * zone is answered from each cohort user's active hours. Every collector on one database must
   * name the same zones; a start with other zones derives the cohorts again. Default `['UTC']`.
   */
  retentionZones?: readonly string[]
  /**
   * How many zones outside `retentionZones` a dashboard's request may make kept (recorded in the
   * database, so every collector and restart agrees; prepared in the background, then kept at
   * ingest like the option's). Beyond it, other zones are answered from active hours. Default 8;
   * 0 keeps none on demand.
   */
  retentionZonesOnDemand?: number
  /** Users per chunk of an on-demand zone's preparation (default: adaptive, about 100 ms a chunk). */
  retentionChunkUsers?: number
  /** Called after each chunk of an on-demand zone's preparation commits, awaited before the next (tests step through it). */
  onRetentionChunk?: (state: RetentionZoneState) => void | Promise<void>
}

/** The session gap in ms of these options (validated). */
export function sessionGapMs(options: StoreOptions): number {
  const m = options.sessionGapMinutes
  if (m === undefined) return 30 * 60_000
  if (typeof m !== 'number' || !Number.isFinite(m) || m <= 0)
    throw new TypeError(`sessionGapMinutes must be a positive number of minutes (got ${String(m)})`)
  return Math.round(m * 60_000)
}

/**
 * One line of the LLM usage report: the answers of one day and model whose records carry
 * token counts (`platformJson.usage`, written by `POST /v1/traces`), summed.
 */
export interface UsageLine {
  /** `YYYY-MM-DD` of the day in the filter's `tz` (default UTC), by event time. */
  day: string
  /** `platformJson.model`, or null when the record names none. */
  model: string | null
  /** Answers counted. */
  messages: number
  /** Conversations (bot and thread) they belong to. */
  conversations: number
  inputTokens: number
  outputTokens: number
}

/** Filters shared by the read queries. */
export interface ReadFilter {
  /**
   * Event time from (epoch ms, inclusive). Absent: all time. Reports read hourly rollups: their
   * range is widened to whole hours (`from` rounded down, `to` up).
   */
  from?: number | undefined
  /** Event time to (epoch ms, exclusive). Absent or null: no end. */
  to?: number | null | undefined
  /** IANA time zone of day buckets (timeline `day`). Default UTC. */
  tz?: string | undefined
  /** Only this bot's records. */
  bot?: string
  /** Only these bots' records (the signed-in user's scope); combined with `bot`. An empty list matches nothing. */
  bots?: readonly string[]
}

/** One line of the audit log: who did what to which bot's conversation. */
export interface AuditEntry {
  id: number
  /** Epoch ms. */
  ts: number
  /** User or token name; `local` without auth. */
  actor: string
  /** `pause`, `resume`, `operator-message`, `messenger-page`, `erase`. */
  action: string
  bot: string | null
  /** The conversation, user or page acted on. */
  target: string | null
  /** Action details (the operator's text, the count erased). */
  detail: Record<string, unknown> | null
}

/** What {@link RecordStore.eraseUser} removed. */
export interface ErasureResult {
  /** Records removed. */
  removed: number
  /** Messages (and events) removed. */
  messages: number
  /** Conversations (threads) the user had: stream entries of these are dropped by dashboards. */
  threads: string[]
}

/** One page of a transcript: the latest `limit` messages older than `beforeId`. */
export interface TranscriptPage {
  /** At most this many messages (default 500, at most 5000). */
  limit?: number
  /** Only messages with an id below this one (the cursor of the page before). */
  beforeId?: number
}

/** Pause state of one transcript. */
export interface PauseState {
  bot: string
  thread: string
  paused: boolean
  updatedAt: number
}

/** A change made through another process sharing the store (see {@link RecordStore.subscribe}). */
export type StoreChange =
  | { kind: 'messages'; messages: StoredMessage[] }
  | { kind: 'pause'; state: PauseState }
  | { kind: 'messenger-pages' }
  /** An end user was erased ({@link RecordStore.eraseUser}): dashboards drop their lines. */
  | { kind: 'erase'; bot: string; userId: string; threads: string[] }
  /** Retention deleted these bots' records received before `before` (epoch ms). */
  | { kind: 'expire'; bots: string[]; before: number }
  /** A conversation entered or left the handoff queue, or changed hands (`entry` undefined: it left). */
  | { kind: 'handoff'; bot: string; thread: string; entry: HandoffEntry | undefined }
  /** An operator added a note to a conversation. */
  | { kind: 'note'; note: HandoffNote }

/**
 * Where the collector keeps records. SQLite ({@link SqliteRecordStore}) is the default; a
 * server database can implement the same interface. Methods may return promises.
 *
 * @example const collector = await startCollector({ store: new SqliteRecordStore('records.db') })
 */
export interface RecordStore extends HandoffStore {
  /**
   * Stores a record and its messages atomically; returns the stored messages (with ids). Honours
   * `idempotencyKey`: a repeat gives the stored record's id, `duplicate: true`, no messages and
   * the stored `fingerprint` — also for a key whose record was erased ({@link eraseUser} keeps
   * the key and its fingerprint).
   */
  add(
    record: IncomingRecord,
    messages: NormalizedMessage[],
  ): Promise<{ id: number; messages: StoredMessage[]; duplicate?: boolean; fingerprint?: string }>
  /**
   * Stores records with their messages in ONE transaction, in order. A record whose
   * (bot, idempotencyKey) is already stored (or appears earlier in `items`) is not stored again:
   * its result has the stored id, `duplicate: true` and `messages: []`.
   */
  addMany(items: ReadonlyArray<{ record: IncomingRecord; messages: NormalizedMessage[] }>): Promise<AddResult[]>
  /** A record with its raw JSON. */
  record(id: number): Promise<StoredRecord | undefined>
  /** Latest messages (event time in the range), newest last; `afterId` for paging forward. */
  recent(filter: ReadFilter & { limit?: number; afterId?: number }): Promise<StoredMessage[]>
  /** Transcripts, most recently active first. */
  /**
   * Transcripts active in the range (first message before `to`, last at or after `from`), most
   * recently active first (event time); `cursor` (a row's `cursor`) gives the page after it.
   */
  conversations(filter: ReadFilter & { limit?: number; cursor?: string }): Promise<ConversationSummary[]>
  /**
   * The latest `limit` (default 500) messages of a transcript with id < `beforeId` (when given),
   * returned in arrival order (oldest first). Page back with `beforeId` = the first id returned.
   */
  transcript(bot: string, thread: string, options?: TranscriptPage): Promise<StoredMessage[]>
  /** NotHandled inputs by phrase, most frequent first: at most `limit` lines (default 500, at most 5 000). */
  notHandled(filter: ReadFilter & { limit?: number }): Promise<NotHandledLine[]>
  /**
   * The overview (users, sessions, messages, NotHandled, handoffs, feedback) with per-day figures in `tz`.
   * `budgetMs`: the statement bound when it runs off the request path (as the funnel's).
   */
  overview(filter: ReadFilter & { budgetMs?: number }): Promise<OverviewReport>
  /**
   * Messages whose text matches `q` (words, "quoted phrases", prefix*; every term), newest first:
   * `limit` (default 50) hits after `cursor` (the last hit's `ts:id`). Throws SearchQueryError
   * for a query without a word.
   */
  search(filter: ReadFilter & { q: string; limit?: number; cursor?: string }): Promise<SearchHit[]>
  /**
   * Users who did each step in order within the range (`steps`: intents of incoming messages, event names).
   * `budgetMs`: the statement bound of this read when it runs off the request path (PostgreSQL:
   * instead of `queryTimeoutMs`; SQLite has none).
   */
  funnel(filter: ReadFilter & { steps: readonly FunnelStep[]; budgetMs?: number }): Promise<FunnelLine[]>
  /**
   * The newest stored message's id (0 when there is none): a cheap mark of what the store holds,
   * which tells a kept report answer whether messages came since (from any process).
   */
  lastMessageId?(): Promise<number>
  /** The most common first `depth` incoming intents of sessions started in the range (at most `limit` paths). */
  paths(filter: ReadFilter & { depth: number; limit: number }): Promise<PathLine[]>
  /** Retention cohorts by `period` (day, week, month in `tz`); `now` ends an open range. */
  retention(filter: ReadFilter & { period: Period; now: number }): Promise<RetentionReport>
  /**
   * Whether `zone`'s retention cohorts are kept, and ready. A zone that is not kept becomes kept
   * on demand (recorded in the database, maintained at ingest from then on, its history derived
   * in the background) unless `retentionZonesOnDemand` zones already are; `kept: null` then.
   * Optional: a store without it answers every zone from {@link retention}.
   */
  retentionZone?(zone: string): Promise<RetentionZoneState>
  /** Resolves when `zone` (kept, or made kept on demand) is prepared; rejects when it cannot be kept or its preparation fails. */
  retentionZoneReady?(zone: string): Promise<void>
  intents(filter: ReadFilter): Promise<IntentLine[]>
  events(filter: ReadFilter): Promise<EventsReport>
  segments(filter: ReadFilter): Promise<Segment[]>
  timeline(filter: ReadFilter & { bucketMs: number; since?: number }): Promise<TimelineBucket[]>
  /**
   * LLM tokens per day (in `tz`, default UTC; event time) and model within the range, from
   * `since` (epoch ms) at the earliest, oldest day first. Read from a summary kept at ingest.
   */
  usage(filter: ReadFilter & { since?: number }): Promise<UsageLine[]>
  setPaused(bot: string, thread: string, paused: boolean): Promise<PauseState>
  paused(bot: string, thread: string): Promise<boolean>
  /** Messenger page connections added from the dashboard, kept across restarts. */
  saveMessengerPage(page: MessengerPageConfig): Promise<void>
  messengerPages(): Promise<MessengerPageConfig[]>
  /** Counts, for the dashboard header and the benchmark; within `filter` when given. */
  counts(filter?: ReadFilter): Promise<{ records: number; messages: number }>
  /**
   * Erases one end user of one bot: every record, message and event, the pause state of their
   * threads; audit details about them are blanked. The idempotency keys of the erased records
   * stay taken (key, fingerprint and id only), so a late retry does not store them again.
   */
  eraseUser(bot: string, userId: string): Promise<ErasureResult>
  /** One user's records in arrival order, read in pages (bounded memory), for data portability. */
  exportUser(bot: string, userId: string): AsyncIterable<StoredRecord>
  /**
   * Retention: deletes at most `limit` of the oldest records received before `before` (of `bot`, or of
   * every bot but `exceptBots`), with their messages; returns how many. Called in small steps.
   */
  deleteOlderThan(opts: {
    before: number
    bot?: string
    exceptBots?: readonly string[]
    limit: number
  }): Promise<number>
  /** Appends to the audit log. */
  addAudit(entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry>
  /** Audit log, newest first; `bots` limits it to those bots' entries (a user scoped to every bot passes no `bots`). */
  audit(filter: { bots?: readonly string[]; limit?: number; beforeId?: number }): Promise<AuditEntry[]>
  /** Cheap liveness probe of the database (readiness). */
  ping(): Promise<void>
  /**
   * Optional, for stores shared by several collector processes (a server database): calls
   * `listener` with what OTHER processes stored or changed, so every instance's live feed shows
   * it. Returns the unsubscribe function.
   */
  subscribe?(listener: (change: StoreChange) => void): () => void
  close(): Promise<void>
}

/**
 * What a Messenger page connection needs: what Facebook's OAuth flow would produce (spec:
 * "What the service does", item 6). Messenger then posts the page's live traffic to
 * `{collector.url}/messenger/webhook`.
 *
 * @example { pageId: '1234567890', appSecret: process.env.FB_APP_SECRET!, verifyToken: 'my-verify-token' }
 */
export interface MessengerPageConfig {
  /** The Facebook page id (`entry[].id` of the webhook body). */
  pageId: string
  /** The app secret: `X-Hub-Signature-256` is an HMAC of the raw body with it. Never shown or logged. */
  appSecret: string
  /** The token you typed into the app's webhook settings; the subscription challenge must present it. */
  verifyToken: string
  /** Name of the bot the page's records belong to. Default `messenger-<pageId>` (registered on the fly). */
  bot?: string
}
