import type { MessengerPageConfig, RecordStore } from './store/store'

/**
 * A bot registered with the collector: records posted with its `apiKey` belong to it, and the
 * dashboard's Pause / Unpause and operator messages go to its URLs.
 *
 * @example { name: 'shop-bot', apiKey: 'k_123', pauseWebhookUrl: 'http://127.0.0.1:3000/convotrack/pause', webhookSecret: 'whsec_…' }
 */
export interface BotConfig {
  /** Shown in the dashboard; unique. */
  name: string
  /** The tracking key the bot's tracker sends as `apiKey`. Never shown or logged. */
  apiKey: string
  /** Where Pause / Unpause POST `{ userId, paused }` (spec 4.5). Without it the dashboard can't pause this bot. */
  pauseWebhookUrl?: string
  /** Secret (`whsec_…`) the webhook calls are signed with (Standard Webhooks). Unsigned calls when omitted. */
  webhookSecret?: string
  /** Where the operator's message box POSTs `{ userId, text }`, signed like the pause webhook ("send as the bot"). */
  operatorMessageUrl?: string
  /** Keep this bot's records this many days (overrides the collector's `retainDays`). */
  retainDays?: number
  /** This bot's handoff rules: each field given overrides the collector's `handoff` for this bot. */
  handoff?: HandoffOptions
}

/**
 * When a conversation needs a person (the handoff queue) and when a paused bot takes over again.
 * Every field is optional; the defaults are shown.
 *
 * @example { intents: ['human', 'agent'], keywords: ['human', 'agent', 'real person', 'talk to someone'], notHandledStreak: 2, autoResumeMinutes: 30 }
 */
export interface HandoffOptions {
  /** An incoming message with one of these intents asks for a person. Default `['human', 'agent']`. */
  intents?: string[]
  /**
   * An incoming message containing one of these (whole words, any case) asks for a person.
   * Default `['human', 'agent', 'real person', 'talk to someone']`.
   */
  keywords?: string[]
  /** This many NotHandled incoming messages in a row put the conversation in the queue; `0` never. Default 2. */
  notHandledStreak?: number
  /**
   * A paused conversation with no user or operator message for this many minutes (fractions
   * allowed) is resumed: the bot answers again. `0` never. Default 30.
   */
  autoResumeMinutes?: number
}

/**
 * Where the collector POSTs an alert when a conversation enters the handoff queue.
 *
 * @example { url: 'https://hooks.slack.com/services/T…/B…/…', events: ['handoff.waiting'] }
 */
export interface AlertOptions {
  /** An http(s) URL (a Slack incoming webhook works as is). */
  url: string
  /** Which events go there. Only `handoff.waiting` exists. */
  events: Array<'handoff.waiting'>
  /** `whsec_…`: alerts are signed like the pause webhook (Standard Webhooks). Unsigned when omitted. */
  secret?: string
}

export type { MessengerPageConfig } from './store/store'

/** Retry policy of webhook calls (pause, unpause, operator message). */
export interface WebhookRetryOptions {
  /** Attempts in all, the first included. Default 3. */
  attempts?: number
  /** Delay step before the second attempt, doubled each time (core's backoff: half fixed, half random). Default 250 ms. */
  baseDelayMs?: number
  /** Deadline of one attempt. Default 5 000 ms. */
  timeoutMs?: number
}

/** Options of {@link startCollector}. */
export interface CollectorOptions {
  /** TCP port; 0 picks a free one. Default 8787 (the SDK's default `baseUrl`). */
  port?: number
  /**
   * Interface to listen on. Default `127.0.0.1`. A non-loopback address needs `auth` (or an
   * explicit `noAuth: true`): the collector refuses to start otherwise.
   */
  host?: string
  /** Sign-in, roles and bot scopes for a shared collector. Without it the dashboard is open to whoever reaches it. */
  auth?: AuthOptions
  /** Listen on a non-loopback address without `auth` (a warning is logged). Default false. */
  noAuth?: boolean
  /**
   * Host names the dashboard answers to besides loopback names, the listen address and this
   * machine's names (DNS-rebinding guard), e.g. `['convotrack.example.com']`.
   */
  allowedHosts?: string[]
  /** Delete records older than this many days (per bot: `BotConfig.retainDays`). Default: keep forever. */
  retainDays?: number
  /** How often the retention sweep runs, ms. Default 3 600 000 (hourly; also once at start). */
  retentionSweepMs?: number
  /**
   * Structured JSON logs (pino), secrets redacted: a level (on stdout), `{ level, stream }`, your
   * own pino logger, or false for none. Default level `warn`; the CLI logs `info` (one line per request).
   */
  log?: import('./ops/logging').LogOption
  /**
   * SQLite file path, `:memory:`, or a PostgreSQL URL (`postgres://user:pass@host:5432/db`) for
   * several collectors on one database. Default `:memory:`. Ignored when `store` is given.
   */
  db?: string
  /**
   * PostgreSQL store options when `db` is a PostgreSQL URL: pool size, connection wait, statement
   * bound (`queryTimeoutMs`, default 3 000 ms), LISTEN heartbeat. Ignored for SQLite.
   *
   * @example startCollector({ db: 'postgres://…', postgres: { queryTimeoutMs: 5_000 } })
   */
  postgres?: import('./store/postgres/pg-store').PgStoreOptions
  /**
   * Sessions (overview, paths): a user's session ends after this many minutes without a message;
   * an explicit `sessionId` in a record starts a new one. Default 30. Ignored when `store` is given
   * (pass it to the store).
   */
  sessionGapMinutes?: number
  /**
   * Retention: IANA zones whose cohort tables are kept at ingest (a dashboard in another zone is
   * answered from users' active hours, exact to the hour). Default `['UTC']`. Ignored when `store`
   * is given (pass it to the store).
   */
  retentionZones?: readonly string[]
  /**
   * Retention: how many other zones a dashboard's request may make kept (recorded in the
   * database, prepared in the background — the route answers 202 `{ preparing: true }` with
   * `Retry-After` meanwhile — then kept at ingest like `retentionZones`). Beyond it, other zones
   * are answered from users' active hours. Default 8; 0 keeps none on demand. Ignored when `store`
   * is given (pass it to the store).
   */
  retentionZonesOnDemand?: number
  /** Another storage implementation (a server database); default a SQLite store on `db`. */
  store?: RecordStore
  /** Registered bots. */
  bots?: BotConfig[]
  /** Register the `demo` bot (apiKey `demo-key`) unless a bot already uses that name or key. Default true. */
  demoBot?: boolean
  /** No-code Messenger connections. */
  messengerPages?: MessengerPageConfig[]
  /** Largest accepted `POST /track` body in bytes; larger → 413. Default 1 MiB. */
  maxBodyBytes?: number
  /**
   * Most records one `POST /track/batch` may carry; more → 413. Advertised to trackers in the
   * `Convotrack-Batch` header of every `/track` answer. Default 500.
   *
   * @example startCollector({ maxBatchRecords: 1000 })
   */
  maxBatchRecords?: number
  /**
   * Largest accepted `POST /track/batch` body in bytes; larger → 413. Advertised with
   * `maxBatchRecords`. Each record's body inside a batch is still held to `maxBodyBytes`. Default 4 MiB.
   *
   * @example startCollector({ maxBatchBytes: 8 * 1024 * 1024 })
   */
  maxBatchBytes?: number
  /**
   * Longest a client may take to send a whole request (headers and body), in ms; after it the
   * request is answered 408 and its connection closed. Default 30 000 (Node's own is 300 000:
   * a client announcing a body it never sends held a connection for five minutes).
   *
   * @example startCollector({ requestTimeoutMs: 60_000 }) // slow links, big batches
   */
  requestTimeoutMs?: number
  /** Longest a client may take to send a request's headers, in ms (at most `requestTimeoutMs`). Default 10 000. */
  headersTimeoutMs?: number
  /**
   * Largest `POST /v1/traces` (OTLP) body in bytes, on the wire and once decompressed; larger →
   * 413. Default 8 MiB.
   */
  maxOtlpBytes?: number
  /**
   * Link from a transcript message to its trace in your tracing UI: a URL with `{traceId}` (and
   * optionally `{spanId}`), filled from the record's `platformJson.traceId` (set by
   * `@convotrack/otel`, and by `POST /v1/traces`). Default: no link.
   *
   * @example startCollector({ traceUrl: 'http://localhost:16686/trace/{traceId}' }) // Jaeger
   */
  traceUrl?: string
  /**
   * Prices of LLM models, to show the cost of LLM conversations next to their tokens: per model
   * id (as the spans name it, e.g. `gpt-4o-mini`), US dollars per million input and output tokens.
   *
   * @example startCollector({ llmPrices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } } })
   */
  llmPrices?: Record<string, LlmPrice>
  /** Webhook retry policy. */
  webhookRetry?: WebhookRetryOptions
  /** Handoff rules of every bot (a bot's own `handoff` overrides them field by field). See {@link HandoffOptions}. */
  handoff?: HandoffOptions
  /** How often the auto-resume check runs, ms. Default 5 000. */
  handoffCheckMs?: number
  /**
   * How long a funnel or overview request waits for its answer (ms, default 2 000). A funnel
   * follows every user of its first step and the overview of a past range counts the distinct
   * users of its days, so over a large audience their count runs off the request path: past this
   * wait the route answers with the previous answer (`refreshing: true`, `asOf`) or, the first
   * time, `202 { preparing: true }` with `Retry-After`, and the dashboard asks again.
   *
   * @example startCollector({ db: 'postgres://…', reportWaitMs: 1_000 })
   */
  reportWaitMs?: number
  /** Alerts when a conversation enters the handoff queue. */
  alerts?: AlertOptions[]
  /** Retry policy of alerts. Default 5 attempts, 500 ms backoff step, 5 s per attempt. */
  alertRetry?: WebhookRetryOptions
  /** The dashboard's address as people reach it (alerts link to conversations with it). Default the collector's own `url`. */
  publicUrl?: string
  /** Folder of the dashboard's static files. Default the package's `public/`. */
  publicDir?: string
}

/** A model's price in US dollars per million tokens. */
export interface LlmPrice {
  input: number
  output: number
}

/** What a user or token may do: `viewer` reads, `operator` also pauses and sends operator messages, `admin` also manages bots, pages, erasure and export. */
export type Role = 'viewer' | 'operator' | 'admin'

/**
 * A person who signs in on the login page.
 *
 * @example { name: 'ada', passwordHash: 'scrypt$16384$8$1$…', role: 'operator', bots: ['shop'] }
 */
export interface AuthUser {
  /** Sign-in name (with `trustProxyHeader`: the value the proxy sends, e.g. an email). */
  name: string
  /** From `convotrack-collector hash-password` (scrypt). Omit for a proxy-only user. */
  passwordHash?: string
  role: Role
  /** Bot names this user sees, or `['*']` for all. */
  bots: string[]
}

/**
 * A machine credential sent as `Authorization: Bearer <token>`.
 *
 * @example { name: 'grafana', token: process.env.CONVOTRACK_GRAFANA_TOKEN!, role: 'viewer', bots: ['*'] }
 */
export interface AuthToken {
  name: string
  /** At least 16 characters. Never logged. */
  token: string
  role: Role
  bots: string[]
}

/**
 * Sign-in for a shared collector.
 *
 * @example { users: [{ name: 'ada', passwordHash, role: 'admin', bots: ['*'] }], metricsToken: process.env.METRICS_TOKEN }
 */
export interface AuthOptions {
  users?: AuthUser[]
  tokens?: AuthToken[]
  /**
   * A header set by an authenticating proxy (oauth2-proxy: `X-Forwarded-Email`) naming the
   * signed-in person; mapped to the user of that name. Honoured only from `trustProxyFrom`.
   */
  trustProxyHeader?: string
  /** Remote addresses the proxy header is accepted from. Default loopback only. */
  trustProxyFrom?: string[]
  /** Bearer token `GET /metrics` needs (when `auth` is set, /metrics answers 401 without it). */
  metricsToken?: string
  /** Signs session cookies; default a random key per process (restarts sign everyone out). */
  sessionSecret?: string
  /** Session lifetime in hours. Default 12. */
  sessionHours?: number
}
