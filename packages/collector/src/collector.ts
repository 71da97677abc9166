import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import express, { type Express, type NextFunction, type Request, type Response } from 'express'
import type { Logger } from 'pino'
import { accessControl, validateAuth } from './access/auth'
import { type BotInfo, BotRegistry, DEMO_BOT } from './access/bot-registry'
import { RequestError } from './errors'
import { DEFAULT_REPORT_WAIT_MS } from './http/analytics-api'
import { dashboardApi } from './http/dashboard-api'
import { handoffApi } from './http/handoff-api'
import { checkLlmOptions } from './http/llm-details'
import { MESSENGER_WEBHOOK_PATH, messengerWebhook } from './http/messenger-webhook'
import { DEFAULT_OTLP_MAX_BYTES, otlpTracesRoute } from './http/otlp-traces-route'
import { BATCH_HEADER, batchAdvertisement, DEFAULT_BATCH_LIMITS, trackBatchRoute } from './http/track-batch-route'
import { trackRoute } from './http/track-route'
import { HandoffAlerts, validateAlerts } from './live/alerts'
import { AutoResume } from './live/auto-resume'
import { HandoffQueue } from './live/handoff-queue'
import { validateHandoffOptions } from './live/handoff-rules'
import { LiveFeed } from './live/live-feed'
import { Takeover } from './live/takeover'
import { operationsRoutes } from './ops/health'
import { lifecycleApi, startRetention } from './ops/lifecycle'
import { createLogger, requestLogger } from './ops/logging'
import { CollectorMetrics, instrumentStore } from './ops/metrics'
import type { BotConfig, CollectorOptions, MessengerPageConfig } from './options'
import type { ResumedConversation } from './store/handoff-records'
import { openStore } from './store/open-store'
import type { RecordStore } from './store/store'
import { StoreUnavailableError } from './store/store-unavailable'

/** The default port: core's `DEFAULT_BASE_URL` is `http://127.0.0.1:8787`. */
export const DEFAULT_PORT = 8787

/** A running collector. */
export interface Collector {
  /** `http://host:port` — dashboard at `/`, tracking at `/track`. */
  readonly url: string
  readonly port: number
  readonly host: string
  /** Where records are kept. */
  readonly store: RecordStore
  /** Registered bots (public view: no keys or secrets). */
  bots(): BotInfo[]
  /** Registers another bot while running. */
  addBot(bot: BotConfig): void
  /** Connects a Messenger page (no-code connection); its traffic goes to `{url}/messenger/webhook`. */
  connectMessengerPage(page: MessengerPageConfig): Promise<{ pageId: string; bot: string }>
  /** Every route the collector's app answers (method and path), for the access table's test. */
  routes(): Array<{ method: string; path: string }>
  /** Runs the retention sweep now (it also runs every `retentionSweepMs`); resolves to the records deleted. */
  sweepRetention(): Promise<number>
  /** The Prometheus registry behind `GET /metrics`. */
  readonly metrics: CollectorMetrics
  /**
   * Runs the auto-resume check now (it also runs every `handoffCheckMs`) as of `now` (epoch ms,
   * default the clock's): resolves to the conversations this call resumed. With `now`, a check
   * already running (the timer's) is waited for, then this one runs as of `now`.
   */
  resumeIdle(now?: number): Promise<ResumedConversation[]>
  /** Stops listening, ends live streams and closes the store it opened. */
  close(): Promise<void>
}

/** True for addresses only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '')
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || /^::ffff:127\./.test(h)
}

/** What to do when the collector would listen on the network with no sign-in. */
export const NO_AUTH_HELP = `the collector would listen on a network address with no sign-in: anyone who reaches the port could read every transcript and send messages as your bots.
Add a user: run \`convotrack-collector hash-password\` and put it in your --config file:
  { "auth": { "users": [{ "name": "you", "passwordHash": "scrypt$…", "role": "admin", "bots": ["*"] }] } }
or pass --no-auth (option noAuth: true) to run it open anyway.`

function allowedHostNames(listenHost: string, extra: readonly string[]): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '::1', listenHost.toLowerCase(), hostname().toLowerCase()])
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase())
  for (const h of extra) names.add(h.toLowerCase())
  return names
}

/** Method and path of every route of an Express app, mounted routers included. */
function listRoutes(app: Express): Array<{ method: string; path: string }> {
  type Layer = {
    route?: { path: string; methods: Record<string, boolean> }
    handle?: { stack?: Layer[] }
    rawPath?: unknown
  }
  const out: Array<{ method: string; path: string }> = []
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route)
        for (const m of Object.keys(layer.route.methods))
          if (m !== '_all') out.push({ method: m.toUpperCase(), path: prefix + layer.route.path })
      if (layer.handle?.stack)
        walk(
          layer.handle.stack,
          prefix + (typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : ''),
        )
    }
  }
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '')
  return out
}

function defaultPublicDir(): string {
  // src/ (tests, tsx) and dist/ (published) both sit next to public/.
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url))
  return join(here, '..', 'public')
}

/**
 * Starts the local tracking service: `POST /track`, the dashboard and its API, the Messenger
 * webhook. Resolves once listening.
 *
 * @example
 * const collector = await startCollector({ port: 0, db: ':memory:', bots: [{ name: 'demo', apiKey: 'demo-key' }] })
 * console.log(collector.url) // http://127.0.0.1:PORT
 */
export async function startCollector(options: CollectorOptions = {}): Promise<Collector> {
  const host = options.host ?? '127.0.0.1'
  const log: Logger = createLogger(options.log)
  if (options.auth !== undefined) validateAuth(options.auth)
  if (!options.auth && !isLoopbackHost(host)) {
    if (!options.noAuth) throw new Error(NO_AUTH_HELP)
    log.warn(
      { host },
      'listening on a network address with no sign-in (noAuth): anyone who reaches it can read and act',
    )
  }
  for (const key of ['retainDays', 'retentionSweepMs'] as const) {
    const v = options[key]
    if (v !== undefined && !(typeof v === 'number' && v > 0)) throw new TypeError(`${key} must be a positive number`)
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
  const limits = {
    maxRecords: positiveInt(options.maxBatchRecords, 'maxBatchRecords') ?? DEFAULT_BATCH_LIMITS.maxRecords,
    maxBytes: positiveInt(options.maxBatchBytes, 'maxBatchBytes') ?? DEFAULT_BATCH_LIMITS.maxBytes,
  }
  const handoffOptions = validateHandoffOptions(options.handoff, 'handoff')
  for (const [i, b] of (options.bots ?? []).entries()) validateHandoffOptions(b?.handoff, `bots[${i}].handoff`)
  const alertTargets = validateAlerts(options.alerts)
  const handoffCheckMs = options.handoffCheckMs ?? 5_000
  if (!(typeof handoffCheckMs === 'number' && handoffCheckMs > 0))
    throw new TypeError('handoffCheckMs must be a positive number')
  const reportWaitMs = options.reportWaitMs ?? DEFAULT_REPORT_WAIT_MS
  if (!(typeof reportWaitMs === 'number' && Number.isFinite(reportWaitMs) && reportWaitMs >= 0))
    throw new TypeError('reportWaitMs must be a number of milliseconds, 0 or more')
  if (options.publicUrl !== undefined && !/^https?:\/\//.test(options.publicUrl))
    throw new TypeError('publicUrl must be an http(s) URL')
  checkLlmOptions(options)
  const otlpMaxBytes = positiveInt(options.maxOtlpBytes, 'maxOtlpBytes') ?? DEFAULT_OTLP_MAX_BYTES
  const bots = new BotRegistry(options.bots ?? [])
  if (options.demoBot !== false && !bots.has(DEMO_BOT.name) && !bots.hasKey(DEMO_BOT.apiKey)) bots.add(DEMO_BOT)
  const ownStore = !options.store
  const feed = new LiveFeed()
  const metrics = new CollectorMetrics(() => feed.size)
  const store: RecordStore = instrumentStore(
    options.store ??
      (await openStore(options.db, {
        ...options.postgres,
        ...(options.sessionGapMinutes === undefined ? {} : { sessionGapMinutes: options.sessionGapMinutes }),
        ...(options.retentionZones === undefined ? {} : { retentionZones: options.retentionZones }),
        ...(options.retentionZonesOnDemand === undefined
          ? {}
          : { retentionZonesOnDemand: options.retentionZonesOnDemand }),
      })),
    metrics,
  )
  let url = ''
  let queue: HandoffQueue | undefined
  const takeover = new Takeover({
    bots,
    store,
    feed,
    retry: options.webhookRetry,
    onPause: (state) => queue?.onPause(state),
  })
  const alerts = new HandoffAlerts({
    alerts: alertTargets,
    retry: options.alertRetry,
    metrics,
    log,
    baseUrl: () => options.publicUrl ?? url,
  })
  queue = new HandoffQueue({ bots, store, feed, takeover, options: handoffOptions, alerts, metrics, log })
  const handoffs = queue
  const autoResume = new AutoResume({
    store,
    feed,
    takeover,
    bots,
    config: (bot) => handoffs.config(bot),
    metrics,
    log,
  })
  const onStored = (messages: Parameters<HandoffQueue['observe']>[0]) => handoffs.observe(messages)

  const pages = new Map<string, MessengerPageConfig>()
  const botForPage = (page: MessengerPageConfig) => page.bot ?? `messenger-${page.pageId}`
  const connect = async (page: MessengerPageConfig, persist: boolean) => {
    for (const key of ['pageId', 'appSecret', 'verifyToken'] as const)
      if (typeof page[key] !== 'string' || page[key] === '')
        throw new TypeError(`messenger page: ${key} must be a non-empty string`)
    const bot = botForPage(page)
    // A page's records need a bot to belong to; one is made for it (its key is random: only the webhook feeds it).
    if (!bots.has(bot)) bots.add({ name: bot, apiKey: `page_${randomBytes(16).toString('hex')}` })
    pages.set(page.pageId, { ...page })
    if (persist) await store.saveMessengerPage(page)
    feed.publish('messenger', { pageId: page.pageId, bot }, bot)
    return { pageId: page.pageId, bot }
  }
  try {
    for (const page of await store.messengerPages()) await connect(page, false)
    for (const page of options.messengerPages ?? []) await connect(page, false)
  } catch (e) {
    if (ownStore) await store.close()
    throw e
  }
  // A store shared by several collectors: what the others store reaches this one's dashboards too.
  const unsubscribe = store.subscribe?.(
    feed.bridge({
      reloadMessengerPages: async () => {
        for (const page of await store.messengerPages())
          if (!pages.has(page.pageId) || pages.get(page.pageId)?.appSecret !== page.appSecret)
            await connect(page, false)
      },
    }),
  )

  const publicDir = options.publicDir ?? defaultPublicDir()
  let hosts = allowedHostNames(host, options.allowedHosts ?? [])
  const access = accessControl({ auth: options.auth, store, feed, hosts: () => hosts, publicDir, log })
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(requestLogger(log))
  app.use(metrics.middleware())
  app.use(access.gate)
  app.use(operationsRoutes({ store, metrics }))
  app.use(trackBatchRoute({ bots, store, feed, onStored, maxBodyBytes, limits }))
  app.use(trackRoute({ bots, store, feed, onStored, maxBodyBytes, advertise: batchAdvertisement(limits) }))
  app.use(otlpTracesRoute({ bots, store, feed, metrics, maxBytes: otlpMaxBytes, maxBodyBytes, onStored }))
  app.use(messengerWebhook({ pages: () => [...pages.values()], botFor: botForPage, store, feed, onStored }))
  app.use(access.routes)
  app.use('/api', lifecycleApi({ store, feed, bots }))
  app.use('/api', handoffApi({ queue: handoffs }))
  app.use(
    '/api',
    dashboardApi({
      bots,
      store,
      feed,
      takeover,
      handoffs,
      traceUrl: options.traceUrl,
      llmPrices: options.llmPrices,
      reportWaitMs,
      messenger: {
        list: () => [...pages.values()].map((p) => ({ pageId: p.pageId, bot: botForPage(p) })),
        connect: async (page) => {
          try {
            return await connect(page, true)
          } catch (e) {
            throw e instanceof TypeError ? new RequestError(400, 'invalid_request', e.message, '') : e
          }
        },
      },
      webhookUrl: () => `${url}${MESSENGER_WEBHOOK_PATH}`,
    }),
  )
  if (existsSync(publicDir)) app.use(express.static(publicDir, { index: 'index.html', maxAge: 0 }))
  app.use((req: Request, _res: Response) => {
    throw new RequestError(404, 'not_found', `nothing at ${req.method} ${req.path}`, '')
  })
  app.use(errorHandler(log))

  const requestTimeoutMs = positiveInt(options.requestTimeoutMs, 'requestTimeoutMs') ?? 30_000
  const headersTimeoutMs = Math.min(
    positiveInt(options.headersTimeoutMs, 'headersTimeoutMs') ?? 10_000,
    requestTimeoutMs,
  )
  const server = await new Promise<Server>((resolve, reject) => {
    // A client that announces a body and never sends it (or dribbles its headers) is answered
    // 408 and disconnected after these, not after Node's 300 s; the check runs often enough
    // for the bounds to hold.
    const s = createServer(
      {
        requestTimeout: requestTimeoutMs,
        headersTimeout: headersTimeoutMs,
        connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
      },
      app,
    )
    s.once('error', reject)
    s.listen(options.port ?? DEFAULT_PORT, host, () => resolve(s))
  }).catch(async (e) => {
    unsubscribe?.()
    feed.close()
    if (ownStore) await store.close()
    throw e
  })
  server.keepAliveTimeout = 65_000
  const port = (server.address() as AddressInfo).port
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  hosts = allowedHostNames(host, options.allowedHosts ?? [])
  const retention = startRetention({
    store,
    feed,
    retainDays: options.retainDays,
    perBot: () => bots.list().map((b) => ({ name: b.name, retainDays: bots.get(b.name)?.retainDays })),
    intervalMs: options.retentionSweepMs ?? 3_600_000,
    log,
  })
  autoResume.start(handoffCheckMs)
  let closing: Promise<void> | undefined

  return {
    url,
    port,
    host,
    store,
    bots: () => bots.list(),
    addBot: (bot) => {
      validateHandoffOptions(bot?.handoff, `bot "${bot?.name}".handoff`)
      bots.add(bot)
    },
    connectMessengerPage: (page) => connect(page, true),
    routes: () => listRoutes(app),
    sweepRetention: () => retention.sweep(),
    metrics,
    resumeIdle: (now) => autoResume.check(now),
    close: () => {
      closing ??= (async () => {
        await retention.stop()
        await autoResume.stop()
        unsubscribe?.()
        feed.close()
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
        await handoffs.settled()
        if (ownStore) await store.close()
      })()
      return closing
    },
  }
}

function positiveInt(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  if (!Number.isSafeInteger(value) || value < 1)
    throw new TypeError(`${name} must be a positive integer (got ${value})`)
  return value
}

/** The 413 of a body over its route's limit, naming that limit (the dashboard API's is not `maxBodyBytes`). */
function tooLarge(path: string, limit: unknown): RequestError {
  const p = path.toLowerCase()
  const which = p.startsWith('/api/')
    ? 'the dashboard API takes at most 64 kB'
    : p.startsWith(MESSENGER_WEBHOOK_PATH)
      ? 'the Messenger webhook takes at most 1 MiB'
      : 'maxBodyBytes'
  const bytes = typeof limit === 'number' ? ` (${limit} bytes)` : ''
  return new RequestError(
    413,
    'payload_too_large',
    `the body is larger than the collector accepts: ${which}${bytes}`,
    '',
  )
}

/** Every failure answers JSON `{ error: { code, message, path } }`; the code is kept in `res.locals.errorCode` for logs and metrics. */
const errorHandler =
  (log: Logger) =>
  (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let e: RequestError
    const bodyErr = err as { type?: string; status?: number }
    if (err instanceof RequestError) e = err
    else if (err instanceof StoreUnavailableError) {
      // The database is away (restarting, unreachable): nothing was acknowledged, the client retries.
      res.setHeader('retry-after', String(err.retryAfterSeconds))
      e = new RequestError(503, 'store_unavailable', 'the collector cannot reach its database; retry later', '')
    } else if (bodyErr?.type === 'entity.too.large') e = tooLarge(req.path, (err as { limit?: unknown }).limit)
    else if (bodyErr?.type === 'entity.parse.failed')
      e = new RequestError(400, 'invalid_json', 'the body is not valid JSON', '')
    else if (bodyErr?.type === 'encoding.unsupported' || bodyErr?.type === 'charset.unsupported')
      e = new RequestError(415, 'unsupported_media_type', 'unsupported content encoding or charset', 'content-encoding')
    else if (typeof bodyErr?.status === 'number' && bodyErr.status >= 400 && bodyErr.status < 500)
      e = new RequestError(bodyErr.status, 'invalid_request', (err as Error).message ?? 'bad request', '')
    else {
      log.error({ err, reqId: res.locals.requestId, path: req.path }, 'unexpected error')
      res.locals.errorCode = 'internal_error'
      if (res.headersSent) {
        res.end()
        return
      }
      res.removeHeader(BATCH_HEADER)
      res.status(500).json({ error: { code: 'internal_error', message: 'unexpected collector failure', path: '' } })
      return
    }
    if (res.headersSent) {
      res.end()
      return
    }
    res.locals.errorCode = e.code
    // The batch advertisement is on 2xx/4xx answers only: a failing collector promises nothing.
    if (e.status >= 500) res.removeHeader(BATCH_HEADER)
    if (e.status === 413) res.setHeader('connection', 'close')
    res.status(e.status).json(e.toJSON())
  }
