import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import express, { type Express, type NextFunction, type Request, type Response } from 'express'
import type { Logger } from 'pino'
import { accessControl, validateAuth } from './access/auth'
import { type BotInfo, BotRegistry, DEMO_BOT } from './access/bot-registry'
import { RequestError } from './errors'
import { dashboardApi } from './http/dashboard-api'
import { MESSENGER_WEBHOOK_PATH, messengerWebhook } from './http/messenger-webhook'
import { BATCH_HEADER, batchAdvertisement, DEFAULT_BATCH_LIMITS, trackBatchRoute } from './http/track-batch-route'
import { trackRoute } from './http/track-route'
import { LiveFeed } from './live/live-feed'
import { Takeover } from './live/takeover'
import { operationsRoutes } from './ops/health'
import { lifecycleApi, startRetention } from './ops/lifecycle'
import { createLogger, requestLogger } from './ops/logging'
import { CollectorMetrics, instrumentStore } from './ops/metrics'
import type { BotConfig, CollectorOptions, MessengerPageConfig } from './options'
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
  const bots = new BotRegistry(options.bots ?? [])
  if (options.demoBot !== false && !bots.has(DEMO_BOT.name) && !bots.hasKey(DEMO_BOT.apiKey)) bots.add(DEMO_BOT)
  const ownStore = !options.store
  const feed = new LiveFeed()
  const metrics = new CollectorMetrics(() => feed.size)
  const store: RecordStore = instrumentStore(options.store ?? (await openStore(options.db, options.postgres)), metrics)
  const takeover = new Takeover({ bots, store, feed, retry: options.webhookRetry })
  let url = ''

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
  app.use(trackBatchRoute({ bots, store, feed, maxBodyBytes, limits }))
  app.use(trackRoute({ bots, store, feed, maxBodyBytes, advertise: batchAdvertisement(limits) }))
  app.use(messengerWebhook({ pages: () => [...pages.values()], botFor: botForPage, store, feed }))
  app.use(access.routes)
  app.use('/api', lifecycleApi({ store, feed, bots }))
  app.use(
    '/api',
    dashboardApi({
      bots,
      store,
      feed,
      takeover,
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

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port ?? DEFAULT_PORT, host, (err?: Error) => (err ? reject(err) : resolve(s)))
    s.once('error', reject)
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
  let closing: Promise<void> | undefined

  return {
    url,
    port,
    host,
    store,
    bots: () => bots.list(),
    addBot: (bot) => {
      bots.add(bot)
    },
    connectMessengerPage: (page) => connect(page, true),
    routes: () => listRoutes(app),
    sweepRetention: () => retention.sweep(),
    metrics,
    close: () => {
      closing ??= (async () => {
        await retention.stop()
        unsubscribe?.()
        feed.close()
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
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
    } else if (bodyErr?.type === 'entity.too.large')
      e = new RequestError(413, 'payload_too_large', 'the body is larger than the collector accepts (maxBodyBytes)', '')
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
