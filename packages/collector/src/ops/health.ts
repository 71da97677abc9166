import express, { type Router } from 'express'
import type { RecordStore } from '../store/store'
import type { CollectorMetrics } from './metrics'

/**
 * `GET /healthz` (the process answers), `GET /readyz` (the store answers, 503 otherwise) and
 * `GET /metrics` (Prometheus text). Sign-in for /metrics is the access gate's (`auth.metricsToken`).
 *
 * @example app.use(operationsRoutes({ store, metrics }))
 */
export function operationsRoutes(deps: { store: RecordStore; metrics: CollectorMetrics }): Router {
  const router = express.Router()
  router.get('/healthz', (_req, res) => {
    res.setHeader('cache-control', 'no-store')
    res.json({ status: 'ok' })
  })
  router.get('/readyz', async (_req, res) => {
    res.setHeader('cache-control', 'no-store')
    try {
      await Promise.race([
        deps.store.ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('store ping timed out')), 2000).unref()),
      ])
      res.json({ status: 'ready' })
    } catch {
      res.status(503).json({ error: { code: 'not_ready', message: 'the store does not answer', path: '' } })
    }
  })
  router.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', deps.metrics.registry.contentType)
    res.setHeader('cache-control', 'no-store')
    res.send(await deps.metrics.registry.metrics())
  })
  return router
}
