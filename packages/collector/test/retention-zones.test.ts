/**
 * `GET /api/reports/retention` in a zone that is not kept, against a real collector: the first
 * request makes it kept on demand and answers 202 `{ preparing: true }` with `Retry-After` (JSON
 * and CSV) while its history is derived; once prepared, the answer is the cohort table, equal to a
 * collector that keeps the zone in `retentionZones`. Beyond `retentionZonesOnDemand`, a zone is
 * answered from active hours. The preparation is held at its first chunk by the store's
 * `onRetentionChunk`, so the test sees the preparing answer whatever the machine's speed.
 */
import { type Collector, SqliteRecordStore, startCollector } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { item } from './store-contract'

const DAY = 86_400_000
const ZONE = 'Asia/Tokyo'
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close()
})

/** Users first seen over three weeks before `now`, some coming back. */
function traffic(now: number) {
  const out: Array<ReturnType<typeof item>> = []
  for (let u = 0; u < 30; u++)
    for (const back of [0, 1, 2].slice(0, 1 + (u % 3)))
      out.push(
        item(
          'demo',
          'universal',
          'incoming',
          { userId: `u${u}`, text: 'hi' },
          { at: now - (20 - (u % 10)) * DAY + back * 7 * DAY + u * 3_600_000 },
        ),
      )
  return out
}

async function start(options: ConstructorParameters<typeof SqliteRecordStore>[1]) {
  const store = new SqliteRecordStore(':memory:', options)
  const collector = await startCollector({ port: 0, store })
  open.push(collector, store)
  return { collector, store }
}

const get = (c: Collector, path: string) => fetch(`${c.url}${path}`)

describe('retention in a zone kept on demand', () => {
  it('answers 202 preparing (JSON and CSV) until prepared, then the cohorts of a collector keeping the zone', async () => {
    const now = Date.now()
    let release: () => void = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    const { collector, store } = await start({ retentionChunkUsers: 7, onRetentionChunk: () => held })
    const kept = await start({ retentionZones: ['UTC', ZONE] })
    for (const s of [store, kept.store]) await s.addMany(traffic(now))

    const path = `/api/reports/retention?period=week&tz=${encodeURIComponent(ZONE)}`
    const first = await get(collector, path)
    expect(first.status).toBe(202)
    expect(first.headers.get('retry-after')).toBe('2')
    const body = (await first.json()) as Record<string, unknown>
    expect(body).toMatchObject({ period: 'week', tz: ZONE, cohorts: [], preparing: true })
    expect(body.progress).toBeGreaterThanOrEqual(0)
    expect(body.progress).toBeLessThan(1)
    const csv = await get(collector, `${path}&format=csv`)
    expect(csv.status).toBe(202)
    expect(csv.headers.get('retry-after')).toBe('2')
    expect((await csv.text()).trim()).toBe('start,users')
    // A kept zone answers at once meanwhile.
    expect((await get(collector, '/api/reports/retention?period=week&tz=UTC')).status).toBe(200)

    release()
    await store.retentionZoneReady(ZONE)
    const ready = await get(collector, path)
    expect(ready.status).toBe(200)
    const answer = (await ready.json()) as { cohorts: unknown[]; preparing?: boolean }
    expect(answer.preparing).toBeUndefined()
    expect(answer.cohorts.length).toBeGreaterThan(1)
    const reference = await (await get(kept.collector, path)).json()
    expect(answer).toEqual(reference)
    for (const period of ['day', 'month'])
      expect(await (await get(collector, `/api/reports/retention?period=${period}&tz=${ZONE}&all=1`)).json()).toEqual(
        await (await get(kept.collector, `/api/reports/retention?period=${period}&tz=${ZONE}&all=1`)).json(),
      )
  })

  it('beyond retentionZonesOnDemand a zone is answered from active hours at once; 0 keeps none', async () => {
    const now = Date.now()
    const { collector, store } = await start({ retentionZonesOnDemand: 0 })
    const kept = await start({ retentionZones: ['UTC', ZONE] })
    for (const s of [store, kept.store]) await s.addMany(traffic(now))
    const path = `/api/reports/retention?period=week&tz=${ZONE}`
    const res = await get(collector, path)
    expect(res.status).toBe(200)
    // Tokyo's weeks start on whole hours: the hours answer is exact there.
    expect(await res.json()).toEqual(await (await get(kept.collector, path)).json())
    expect(await store.retentionZone(ZONE)).toEqual({ zone: ZONE, kept: null, ready: false, progress: 0 })
  })

  it('rejects a bad retentionZonesOnDemand, naming it', () => {
    expect(() => new SqliteRecordStore(':memory:', { retentionZonesOnDemand: -1 })).toThrow(/retentionZonesOnDemand/)
    expect(() => new SqliteRecordStore(':memory:', { retentionChunkUsers: 0 })).toThrow(/retentionChunkUsers/)
  })
})
