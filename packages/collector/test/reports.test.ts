import { type Collector, startCollector } from '@convotrack/collector'
import { createTracker, type Tracker } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Records go in through a real tracker; the read API is what the dashboard shows.
let collector: Collector
let tracker: Tracker

beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    bots: [
      { name: 'shop', apiKey: 'shop-key' },
      { name: 'other', apiKey: 'other-key' },
    ],
  })
  tracker = createTracker({ apiKey: 'shop-key', baseUrl: collector.url })
  const other = createTracker({ apiKey: 'other-key', baseUrl: collector.url })
  const u = tracker.universal
  u.logIncoming(
    { text: 'Where is my order?', userId: 'ada', platformUserJson: { locale: 'en_GB', plan: 'pro' } },
    { notHandled: true },
  )
  u.logIncoming(
    { text: 'where is my order?  ', userId: 'bob', platformUserJson: { locale: 'de_DE', plan: 'pro' } },
    { notHandled: true },
  )
  u.logIncoming({ text: 'asdfgh', userId: 'ada' }, { notHandled: true })
  u.logIncoming(
    { text: 'buy shoes', userId: 'ada', platformUserJson: { locale: 'fr_FR' } },
    { intent: { name: 'shop', confidence: 0.8 } },
  )
  u.logIncoming({ text: 'buy a hat', userId: 'bob' }, { intent: { name: 'shop', confidence: 0.6 } })
  u.logOutgoing({ text: 'Which size?', userId: 'bob' }, { intent: { name: 'shop' } })
  u.logOutgoing({ text: 'Sorry?', userId: 'ada', conversationId: 'c-ada' })
  tracker.logEvent({ type: 'revenueEvent', name: 'purchase', userId: 'ada', amount: 20 })
  tracker.logEvent({ type: 'revenueEvent', name: 'purchase', userId: 'bob', amount: 5.5 })
  tracker.logEvent({ type: 'revenueEvent', name: 'tip', userId: 'bob', amount: 1 })
  tracker.logEvent({ type: 'shareEvent', name: 'share', userId: 'ada', sharedMessage: { text: 'x' } })
  tracker.logEvent({ type: 'customEvent', name: 'signup', userId: 'ada' })
  tracker.logEvent({ type: 'customEvent', name: 'signup', userId: 'bob' })
  tracker.logEvent({
    type: 'pageLaunchEvent',
    name: 'launch',
    userId: 'ada',
    extraInfo: { url: 'https://shop.example/' },
  })
  tracker.logEvent({
    type: 'pageLaunchEvent',
    name: 'launch',
    userId: 'bob',
    extraInfo: { url: 'https://shop.example/' },
  })
  tracker.logEvent({ type: 'referralEvent', name: 'ref', userId: 'ada', source: 'ADS' })
  tracker.logEvent({ type: 'referralEvent', name: 'ref', userId: 'bob', source: 'ADS' })
  tracker.logEvent({ type: 'referralEvent', name: 'ref', userId: 'cy', source: 'WEB' })
  other.universal.logIncoming({ text: 'Where is my order?', userId: 'zed' }, { notHandled: true })
  await tracker.flush()
  await other.close()
})
afterAll(async () => {
  await tracker.close()
  await collector.close()
})

const get = async (path: string) => {
  const res = await fetch(`${collector.url}/api/${path}`)
  expect(res.status).toBe(200)
  return res.json()
}

describe('read API', () => {
  it('NotHandled report: the same input grouped (case and spaces aside) and counted, per bot or all', async () => {
    expect(await get('reports/not-handled?bot=shop')).toEqual([
      {
        text: expect.stringMatching(/^where is my order\?/i),
        count: 2,
        users: 2,
        lastTs: expect.any(Number),
        bots: ['shop'],
      },
      { text: 'asdfgh', count: 1, users: 1, lastTs: expect.any(Number), bots: ['shop'] },
    ])
    const all = await get('reports/not-handled')
    expect(all[0]).toMatchObject({ count: 3, users: 3 })
    expect(all[0].bots.sort()).toEqual(['other', 'shop'])
  })

  it('intents roll-up: counts by direction and average confidence', async () => {
    expect(await get('reports/intents?bot=shop')).toEqual([
      { intent: 'NotHandled', count: 3, incoming: 3, outgoing: 0, avgConfidence: null },
      { intent: 'shop', count: 3, incoming: 2, outgoing: 1, avgConfidence: expect.closeTo(0.7, 5) },
    ])
  })

  it('events: custom counts, revenue totals, shares, page launches, referrals by source', async () => {
    expect(await get('reports/events?bot=shop')).toEqual({
      custom: [{ name: 'signup', count: 2 }],
      revenue: {
        total: 26.5,
        count: 3,
        byName: expect.arrayContaining([
          { name: 'purchase', total: 25.5, count: 2 },
          { name: 'tip', total: 1, count: 1 },
        ]),
      },
      shares: { count: 1, byName: [{ name: 'share', count: 1 }] },
      pageLaunches: [{ page: 'https://shop.example/', count: 2 }],
      referrals: [
        { source: 'ADS', count: 2 },
        { source: 'WEB', count: 1 },
      ],
      // The range it covers: the last 30 days (from a whole hour), open-ended, days in UTC.
      from: expect.any(Number),
      to: null,
      tz: 'UTC',
    })
  })

  it('audience segments: each user counted once, by their latest metadata', async () => {
    const segments = await get('reports/segments?bot=shop')
    const byField = Object.fromEntries(segments.map((s: { field: string; values: unknown[] }) => [s.field, s.values]))
    // ada's latest metadata says fr_FR (and no plan); bob's says de_DE / pro.
    expect(byField.locale).toEqual(
      expect.arrayContaining([
        { value: 'fr_FR', users: 1 },
        { value: 'de_DE', users: 1 },
      ]),
    )
    expect(byField.locale).toHaveLength(2)
    expect(byField.plan).toEqual([{ value: 'pro', users: 1 }])
  })

  it('timeline: messages per minute bucket, split by direction', async () => {
    const rows = await get('reports/timeline?bucket=minute&bot=shop')
    const sum = (k: string) => rows.reduce((t: number, r: Record<string, number>) => t + r[k]!, 0)
    expect(sum('incoming')).toBe(5)
    expect(sum('outgoing')).toBe(2)
    expect(sum('events')).toBe(11)
    for (const r of rows) expect(r.t % 60_000).toBe(0)
  })

  it('conversations and transcripts: one per thread (conversation id, else user id), in arrival order', async () => {
    const convs = await get('conversations?bot=shop')
    // cy only sent an event: an event makes no conversation of its own.
    expect(convs.map((c: { thread: string }) => c.thread).sort()).toEqual(['ada', 'bob', 'c-ada'])
    const t = await get('transcript?bot=shop&thread=bob')
    expect(t.bot).toEqual({ name: 'shop', canPause: false, signed: false, canMessage: false })
    expect(t.paused).toBe(false)
    expect(
      t.messages.filter((m: { direction: string }) => m.direction !== 'event').map((m: { text: string }) => m.text),
    ).toEqual(['where is my order?  ', 'buy a hat', 'Which size?'])
  })

  it('raw JSON on demand: GET /api/records/:id', async () => {
    // Different users' records may arrive in any order: look the event up by its user.
    const messages = await get('messages?bot=shop')
    const m = messages.find(
      (x: { userId?: string; thread?: string; eventType?: string }) => (x.userId ?? x.thread) === 'cy',
    )
    const record = await get(`records/${m.recordId}`)
    expect(record).toMatchObject({ id: m.recordId, bot: 'shop', platform: 'generic', type: 'event', v: '11.1.0-rest' })
    expect(record.raw).toEqual({ type: 'referralEvent', name: 'ref', userId: 'cy', source: 'WEB' })
  })

  it('unknown routes and records answer JSON 404s', async () => {
    for (const path of ['records/999999', 'nope']) {
      const res = await fetch(`${collector.url}/api/${path}`)
      expect(res.status).toBe(404)
      expect((await res.json()).error.code).toBe('not_found')
    }
  })

  it('serves the dashboard at /', async () => {
    const res = await fetch(`${collector.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(await res.text()).toContain('<script type="module" src="app.js">')
  })
})
