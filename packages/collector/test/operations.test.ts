/**
 * Health, readiness and Prometheus metrics of a real collector: /metrics is parsed with a
 * Prometheus text-format parser and its figures follow real traffic.
 */
import { type Collector, SqliteRecordStore, startCollector } from '@convotrack/collector'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStream, type Receiver, say, startReceiver } from './support/team'

const METRICS = 'metrics_0123456789abcdef'
const ADMIN = 'tok_admin_0123456789abcdef'
let collector: Collector
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver()
  collector = await startCollector({
    port: 0,
    log: false,
    bots: [{ name: 'shop', apiKey: 'shop-key', pauseWebhookUrl: `${receiver.url}/pause` }],
    auth: { tokens: [{ name: 'admin', token: ADMIN, role: 'admin', bots: ['*'] }], metricsToken: METRICS },
  })
})
afterAll(async () => {
  await collector?.close()
  await receiver?.close()
})

async function scrape(): Promise<Map<string, ReturnType<typeof parsePrometheusTextFormat>[number]>> {
  const res = await fetch(`${collector.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/text\/plain/)
  return new Map(parsePrometheusTextFormat(await res.text()).map((f) => [f.name, f]))
}
const value = (
  families: Awaited<ReturnType<typeof scrape>>,
  name: string,
  labels: Record<string, string> = {},
): number => {
  const family = families.get(name)
  if (!family) return 0
  let total = 0
  // This parser flattens a labelled histogram into its buckets (labels, _count and _sum dropped):
  // the +Inf bucket is the count. Only one route is observed here, so that is the /track count.
  if (family.type === 'HISTOGRAM') return family.metrics.reduce((t, m) => t + Number(m.buckets?.['+Inf'] ?? 0), 0)
  for (const m of family.metrics)
    if (Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)) total += Number(m.value ?? m.count ?? 0)
  return total
}

describe('health', () => {
  it('/healthz and /readyz answer without sign-in', async () => {
    const h = await fetch(`${collector.url}/healthz`)
    expect(h.status).toBe(200)
    expect(await h.json()).toEqual({ status: 'ok' })
    const r = await fetch(`${collector.url}/readyz`)
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ status: 'ready' })
  })

  it('/readyz answers 503 when the store does not answer', async () => {
    const store = new SqliteRecordStore(':memory:')
    const c = await startCollector({ port: 0, log: false, store })
    try {
      await store.close()
      const r = await fetch(`${c.url}/readyz`)
      expect(r.status).toBe(503)
      expect(await r.json()).toMatchObject({ error: { code: 'not_ready' } })
      expect((await fetch(`${c.url}/healthz`)).status).toBe(200)
    } finally {
      await c.close()
    }
  })
})

describe('/metrics', () => {
  it('needs the metrics token when auth is set', async () => {
    expect((await fetch(`${collector.url}/metrics`)).status).toBe(401)
    expect((await fetch(`${collector.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(
      401,
    )
  })

  it('figures move with traffic: accepted, refused by reason, latency, streams, webhooks, store errors', async () => {
    const before = await scrape()
    for (const name of [
      'convotrack_records_accepted_total',
      'convotrack_records_refused_total',
      'convotrack_batch_size',
      'convotrack_ingest_duration_seconds',
      'convotrack_store_errors_total',
      'convotrack_live_streams',
      'convotrack_webhook_calls_total',
    ])
      expect(before.has(name), name).toBe(true)
    expect(before.get('convotrack_ingest_duration_seconds')?.type).toBe('HISTOGRAM')

    await say(collector.url, 'shop-key', 'u1', 'one')
    await say(collector.url, 'shop-key', 'u1', 'two')
    const bad = await fetch(`${collector.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(bad.status).toBe(401)
    const stream = await openStream(`${collector.url}/api/stream`, { authorization: `Bearer ${ADMIN}` })
    const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    const pause = await fetch(`${collector.url}/api/pause`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ bot: 'shop', thread: 'u1', paused: true }),
    })
    expect(pause.status).toBe(200)
    const noHook = await fetch(`${collector.url}/api/operator-message`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ bot: 'shop', thread: 'u1', text: 'hi' }),
    })
    expect(noHook.status).toBe(409)

    const after = await scrape()
    stream.close()
    expect(value(after, 'convotrack_records_accepted_total', { bot: 'shop', route: '/track' })).toBe(
      value(before, 'convotrack_records_accepted_total', { bot: 'shop', route: '/track' }) + 2,
    )
    expect(value(after, 'convotrack_records_refused_total', { reason: 'invalid_api_key' })).toBe(
      value(before, 'convotrack_records_refused_total', { reason: 'invalid_api_key' }) + 1,
    )
    expect(value(after, 'convotrack_ingest_duration_seconds')).toBe(
      value(before, 'convotrack_ingest_duration_seconds') + 3,
    )
    expect(value(after, 'convotrack_live_streams')).toBe(1)
    expect(value(after, 'convotrack_webhook_calls_total', { kind: 'pause', outcome: 'ok' })).toBe(1)
    expect(value(after, 'convotrack_webhook_calls_total', { kind: 'operator-message', outcome: 'no_webhook' })).toBe(1)
    expect(value(after, 'convotrack_store_errors_total')).toBe(0)
  })

  it('store errors are counted', async () => {
    const store = new SqliteRecordStore(':memory:')
    const c = await startCollector({ port: 0, log: false, store })
    try {
      await store.close()
      expect((await fetch(`${c.url}/api/stats`)).status).toBe(500)
      const text = await c.metrics.registry.metrics()
      const family = parsePrometheusTextFormat(text).find((f) => f.name === 'convotrack_store_errors_total')
      expect(family?.metrics.find((m) => m.labels?.method === 'counts')?.value).toBe('1')
    } finally {
      await c.close()
    }
  })

  it('is open on a loopback collector without auth', async () => {
    const c = await startCollector({ port: 0, log: false })
    try {
      const res = await fetch(`${c.url}/metrics`)
      expect(res.status).toBe(200)
      expect(parsePrometheusTextFormat(await res.text()).length).toBeGreaterThan(5)
    } finally {
      await c.close()
    }
  })
})
