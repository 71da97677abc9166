/**
 * The analytics routes of the dashboard API (overview, retention, NotHandled clusters), each
 * scoped and ranged like the other reports and answering `?format=csv` with the rows its view
 * shows.
 */
import type { Request, Router } from 'express'
import { RequestError } from '../errors'
import { PERIODS, type Period } from '../reports/periods'
import { clusterPhrases } from '../reports/phrase-clusters'
import type { RecordStore } from '../store/store'
import { col, isoTime, readOf, sendReport } from './read-params'

/** Distinct NotHandled inputs the clusters are made of: the range's most frequent. */
export const CLUSTER_PHRASES = 1_000

function periodOf(req: Request): Period {
  const p = req.query.period
  if (p === undefined || p === '') return 'week'
  if (typeof p === 'string' && (PERIODS as readonly string[]).includes(p)) return p as Period
  throw new RequestError(400, 'invalid_request', 'query `period` must be day, week or month', 'period')
}

/** Adds the analytics routes to the dashboard API router. */
export function analyticsRoutes(api: Router, store: RecordStore): void {
  api.get('/reports/overview', async (req, res) => {
    const filter = readOf(req, res)
    const report = await store.overview(filter)
    const body = { from: filter.from, to: filter.to, tz: filter.tz, ...report }
    sendReport(
      req,
      res,
      'overview',
      body,
      [body],
      [
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
      ],
    )
  })

  api.get('/reports/retention', async (req, res) => {
    const period = periodOf(req)
    const filter = readOf(req, res)
    const report = await store.retention({ ...filter, period, now: Date.now() })
    const width = Math.max(0, ...report.cohorts.map((c) => c.active.length))
    sendReport(req, res, 'retention', { from: filter.from, to: filter.to, tz: filter.tz, ...report }, report.cohorts, [
      col('start', (c) => isoTime(c.start)),
      col('users', (c) => c.users),
      ...Array.from({ length: width }, (_, k) =>
        col(`${period} ${k}`, (c: (typeof report.cohorts)[number]) => c.active[k]),
      ),
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
