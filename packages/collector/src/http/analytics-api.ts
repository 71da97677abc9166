/**
 * The analytics routes of the dashboard API (overview, retention, NotHandled clusters), each
 * scoped and ranged like the other reports and answering `?format=csv` with the rows its view
 * shows.
 */
import type { Request, Router } from 'express'
import { RequestError } from '../errors'
import type { LiveFeed } from '../live/live-feed'
import {
  type FunnelStep,
  FunnelStepsError,
  PATH_DEPTH_LIMIT,
  parseFunnelSteps,
  type RetentionReport,
} from '../reports/analytics-queries'
import type { FunnelLine, OverviewReport } from '../reports/analytics-types'
import { AnswerCache } from '../reports/answer-cache'
import { PERIODS, type Period, periodStart } from '../reports/periods'
import { clusterPhrases } from '../reports/phrase-clusters'
import { HOUR_MS, hourRange } from '../reports/range'
import { parseSearchCursor, SearchQueryError, searchCursor } from '../reports/search-query'
import type { RecordStore } from '../store/store'
import type { CsvColumn } from './csv'
import { col, intParam, isoTime, readOf, sendReport } from './read-params'

/** Seconds a client waits before asking again for a retention zone being prepared. */
export const PREPARING_RETRY_S = 2

/** Distinct NotHandled inputs the clusters are made of: the range's most frequent. */
export const CLUSTER_PHRASES = 1_000

function periodOf(req: Request): Period {
  const p = req.query.period
  if (p === undefined || p === '') return 'week'
  if (typeof p === 'string' && (PERIODS as readonly string[]).includes(p)) return p as Period
  throw new RequestError(400, 'invalid_request', 'query `period` must be day, week or month', 'period')
}

/** How long a funnel or overview request waits for its count before answering without it (`reportWaitMs`). */
export const DEFAULT_REPORT_WAIT_MS = 2_000

/** The statement bound of a read counted off the request path (PostgreSQL), at least `queryTimeoutMs`. */
export const KEPT_READ_BUDGET_MS = 60_000

/** A kept answer is counted again this long after its count even when no change was seen (writes of other processes). */
export const KEPT_ANSWER_MAX_AGE_MS = 60_000

/**
 * Events of the live feed that change what the kept answers count: deletions (messages also move
 * the store's newest id, which the mark reads).
 */
const KEPT_ANSWER_CHANGES = new Set(['message', 'erase', 'expire'])

/** One CSV row of the overview: the report with its range. */
type OverviewRow = OverviewReport & { from: number; to: number | null }

const OVERVIEW_COLUMNS: ReadonlyArray<CsvColumn<OverviewRow>> = [
  col('from', (r) => isoTime(r.from)),
  col('to', (r) => (r.to === null ? '' : isoTime(r.to))),
  col('users', (r) => r.users),
  col('newUsers', (r) => r.newUsers),
  col('returningUsers', (r) => r.returningUsers),
  col('sessions', (r) => r.sessions),
  col('conversations', (r) => r.conversations),
  col('messages', (r) => r.messages),
  col('incoming', (r) => r.incoming),
  col('outgoing', (r) => r.outgoing),
  col('notHandled', (r) => r.notHandled),
  col('notHandledRate', (r) => r.notHandledRate),
  col('handoffs', (r) => r.handoffs),
  col('containmentRate', (r) => r.containmentRate),
  col('feedbackCount', (r) => r.feedback.count),
  col('feedbackAverage', (r) => r.feedback.average),
]

/**
 * The store's mark of what it holds: its newest message id ('' for a store without one: the feed
 * and the age then), and with `audit` the audit log's newest entry (the overview's handoffs are
 * its pauses, operator messages and claims, written as the action answers — after the live feed
 * told the dashboards).
 */
async function markOf(store: RecordStore, audit = false): Promise<string> {
  const id = String((await store.lastMessageId?.()) ?? '')
  return audit ? `${id}:${(await store.audit({ limit: 1 }))[0]?.id ?? 0}` : id
}

/**
 * Adds the analytics routes to the dashboard API router. `changes`: the live feed (every stored
 * message, erasure and expiry, this collector's and, on a shared PostgreSQL, the others'), which
 * tells the kept funnel and overview answers they are behind.
 */
export function analyticsRoutes(
  api: Router,
  store: RecordStore,
  options: { changes?: LiveFeed; reportWaitMs?: number } = {},
): void {
  // A funnel follows each user of its first step, and the overview of a range that ends in the
  // past counts the distinct users of its user-days: over a large audience either can take
  // seconds, so they are counted off the request path and their answers kept (answer-cache.ts).
  const kept = {
    waitMs: options.reportWaitMs ?? DEFAULT_REPORT_WAIT_MS,
    maxAgeMs: KEPT_ANSWER_MAX_AGE_MS,
    maxEntries: 200,
    concurrency: 2,
  }
  const funnels = new AnswerCache<FunnelLine[]>(kept)
  const overviews = new AnswerCache<OverviewReport>(kept)
  options.changes?.watch((event) => {
    if (!KEPT_ANSWER_CHANGES.has(event)) return
    funnels.changed()
    overviews.changed()
  })

  api.get('/reports/overview', async (req, res) => {
    const filter = readOf(req, res)
    // Whole local days that end in the past (a dashboard's custom range): its users are sums over
    // days of a kept retention zone. A zone not kept becomes kept on demand, as the retention view
    // makes it (within `retentionZonesOnDemand`); until it is prepared, the user-days are read.
    // Not a zone whose days start inside an hour (Kolkata's :30): the overview reads whole hours.
    const { from, to, tz } = filter
    if (tz && from !== undefined && typeof to === 'number' && to <= Date.now()) {
      const day = (t: number) => t % HOUR_MS === 0 && periodStart(tz, t, 'day') === t
      if (day(from) && day(to)) await store.retentionZone?.(tz)
    }
    const key = JSON.stringify([filter.bot ?? null, filter.bots ?? null, filter.from, filter.to, filter.tz])
    const answer = await overviews.get(key, await markOf(store, true), () =>
      store.overview({ ...filter, budgetMs: KEPT_READ_BUDGET_MS }),
    )
    const range = { from: filter.from, to: filter.to, tz: filter.tz }
    if (answer.state === 'preparing') {
      res.status(202).setHeader('Retry-After', String(PREPARING_RETRY_S))
      sendReport(req, res, 'overview', { ...range, preparing: true }, [], OVERVIEW_COLUMNS)
      return
    }
    const body = { ...range, ...answer.value, asOf: answer.asOf, refreshing: answer.refreshing }
    sendReport(req, res, 'overview', body, [body], OVERVIEW_COLUMNS)
  })

  api.get('/reports/retention', async (req, res) => {
    const period = periodOf(req)
    const filter = readOf(req, res)
    // A zone not kept yet becomes kept on demand: 202 until its cohorts are prepared.
    const zone = await store.retentionZone?.(filter.tz ?? 'UTC')
    const report: RetentionReport =
      zone && zone.kept !== null && !zone.ready
        ? { period, cohorts: [], preparing: true, progress: zone.progress }
        : await store.retention({ ...filter, period, now: Date.now() })
    if (report.preparing) res.status(202).setHeader('Retry-After', String(PREPARING_RETRY_S))
    const width = Math.max(0, ...report.cohorts.map((c) => c.active.length))
    sendReport(req, res, 'retention', { from: filter.from, to: filter.to, tz: filter.tz, ...report }, report.cohorts, [
      col('start', (c) => isoTime(c.start)),
      col('users', (c) => c.users),
      ...Array.from({ length: width }, (_, k) =>
        col(`${period} ${k}`, (c: (typeof report.cohorts)[number]) => c.active[k]),
      ),
    ])
  })

  api.get('/reports/funnel', async (req, res) => {
    let steps: FunnelStep[]
    try {
      steps = parseFunnelSteps(typeof req.query.steps === 'string' ? req.query.steps : '')
    } catch (e) {
      if (e instanceof FunnelStepsError) throw new RequestError(400, 'invalid_request', e.message, 'steps')
      throw e
    }
    const filter = readOf(req, res)
    // The funnel reads whole hours: requests within the same hours share an answer.
    const hours = hourRange(filter)
    const key = JSON.stringify([filter.bot ?? null, filter.bots ?? null, hours.from, hours.to, steps])
    // Messages stored since (by any process) make a kept answer old; a store without the mark relies on the feed and the age.
    const answer = await funnels.get(key, await markOf(store), () =>
      store.funnel({ ...filter, steps, budgetMs: KEPT_READ_BUDGET_MS }),
    )
    const range = { from: filter.from, to: filter.to, tz: filter.tz }
    if (answer.state === 'preparing') res.status(202).setHeader('Retry-After', String(PREPARING_RETRY_S))
    const lines = answer.state === 'ready' ? answer.value : []
    const body =
      answer.state === 'ready'
        ? { ...range, steps: lines, asOf: answer.asOf, refreshing: answer.refreshing }
        : { ...range, steps: lines, preparing: true }
    sendReport(req, res, 'funnel', body, lines, [col('step', (l) => l.step), col('users', (l) => l.users)])
  })

  api.get('/reports/paths', async (req, res) => {
    const depth = intParam(req, 'depth') ?? 4
    if (!Number.isInteger(depth) || depth < 1 || depth > PATH_DEPTH_LIMIT)
      throw new RequestError(400, 'invalid_request', `query \`depth\` must be a whole 1 … ${PATH_DEPTH_LIMIT}`, 'depth')
    const limit = Math.min(Math.max(1, Math.floor(intParam(req, 'limit') ?? 20)), 200)
    const filter = readOf(req, res)
    const paths = await store.paths({ ...filter, depth, limit })
    sendReport(req, res, 'paths', { from: filter.from, to: filter.to, tz: filter.tz, depth, paths }, paths, [
      col('intents', (p) => p.intents.join(' > ')),
      col('sessions', (p) => p.sessions),
    ])
  })

  api.get('/search', async (req, res) => {
    const q = typeof req.query.q === 'string' ? req.query.q : ''
    if (q.trim() === '') throw new RequestError(400, 'invalid_request', 'query `q` is required', 'q')
    const cursor = typeof req.query.next === 'string' && req.query.next !== '' ? req.query.next : undefined
    if (cursor !== undefined && !parseSearchCursor(cursor))
      throw new RequestError(400, 'invalid_request', "query `next` must be an answer's `next`", 'next')
    const limit = Math.min(Math.max(1, Math.floor(intParam(req, 'limit') ?? 50)), 500)
    const filter = readOf(req, res)
    let hits: Awaited<ReturnType<RecordStore['search']>>
    try {
      hits = await store.search({ ...filter, q, limit, ...(cursor === undefined ? {} : { cursor }) })
    } catch (e) {
      if (e instanceof SearchQueryError) throw new RequestError(400, 'invalid_request', e.message, 'q')
      throw e
    }
    const last = hits[hits.length - 1]
    const next = last && hits.length === limit ? searchCursor(last.ts, last.id) : null
    sendReport(req, res, 'search', { from: filter.from, to: filter.to, tz: filter.tz, hits, next }, hits, [
      col('ts', (h) => isoTime(h.ts)),
      col('bot', (h) => h.bot),
      col('thread', (h) => h.thread),
      col('userId', (h) => h.userId),
      col('direction', (h) => h.direction),
      col('text', (h) => h.text),
      col('id', (h) => h.id),
    ])
  })

  api.get('/reports/not-handled/clusters', async (req, res) => {
    const filter = readOf(req, res)
    const lines = await store.notHandled({ ...filter, limit: CLUSTER_PHRASES })
    const clusters = clusterPhrases(lines).map(({ label, count, users, examples }) => ({
      label,
      count,
      users,
      examples,
    }))
    sendReport(
      req,
      res,
      'not-handled-clusters',
      { from: filter.from, to: filter.to, tz: filter.tz, clusters },
      clusters,
      [
        col('label', (c) => c.label),
        col('count', (c) => c.count),
        col('users', (c) => c.users),
        col('examples', (c) => c.examples),
      ],
    )
  })
}
