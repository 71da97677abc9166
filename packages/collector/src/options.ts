import type { RecordStore } from './store'

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

/** Retry policy of webhook calls (pause, unpause, operator message). */
export interface WebhookRetryOptions {
  /** Attempts in all, the first included. Default 3. */
  attempts?: number
  /** Delay before the second attempt, doubled each time (±20 % jitter). Default 250 ms. */
  baseDelayMs?: number
  /** Deadline of one attempt. Default 5 000 ms. */
  timeoutMs?: number
}

/** Options of {@link startCollector}. */
export interface CollectorOptions {
  /** TCP port; 0 picks a free one. Default 8787 (the SDK's default `baseUrl`). */
  port?: number
  /** Interface to listen on. Default `127.0.0.1`: the dashboard has no login, keep it local. */
  host?: string
  /**
   * SQLite file path, `:memory:`, or a PostgreSQL URL (`postgres://user:pass@host:5432/db`) for
   * several collectors on one database. Default `:memory:`. Ignored when `store` is given.
   */
  db?: string
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
  /** Webhook retry policy. */
  webhookRetry?: WebhookRetryOptions
  /** Folder of the dashboard's static files. Default the package's `public/`. */
  publicDir?: string
}
