// Date ranges on the read API: `from` / `to` / `tz` / `all` on every report and list route, the
// range each answer says it covers, bad parameters refused by name, and imported history (a
// `platformJson.timestamp` from a past month) shown in that month, not today.
import { type Collector, startCollector } from '@convotrack/collector'
import { createTracker } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let collector: Collector
const HOUR = 3_600_000
const DAY = 24 * HOUR
/** A conversation from "last year": 2025-03-14, imported with its own times. */
const PAST = Date.UTC(2025, 2, 14, 9, 0, 0)

beforeAll(async () => {
  collector = await startCollector({ port: 0, bots: [{ name: 'shop', apiKey: 'shop-key' }] })
  const tracker = createTracker({ apiKey: 'shop-key', baseUrl: collector.url })
  const u = tracker.universal
  u.logIncoming(
    { text: 'old question', userId: 'ada', platformJson: { timestamp: new Date(PAST).toISOString() } },
    {
      notHandled: true,
    },
  )
  u.logOutgoing({ text: 'old answer', userId: 'ada', platformJson: { timestamp: PAST + 60_000 } })
  u.logIncoming({ text: 'new question', userId: 'bob' }, { notHandled: true })
  u.logIncoming({ text: 'buy', userId: 'bob' }, { intent: { name: 'shop' } })
  tracker.logEvent({ type: 'customEvent', name: 'signup', userId: 'bob' })
  await tracker.close()
})
afterAll(async () => {
  await collector?.close()
})

const api = (path: string) => fetch(`${collector.url}/api/${path}`)
async function get(path: string) {
  const res = await api(path)
  expect(res.status).toBe(200)
  return { body: await res.json(), headers: res.headers }
}

const MARCH = `from=2025-03-01&to=2025-04-01`

describe('report ranges', () => {
  it('default: the last 30 days, said in X-Range-* headers (arrays) and from/to/tz fields (objects)', async () => {
    const before = Date.now()
    const stats = await get('stats?bot=shop')
    expect(stats.body).toMatchObject({ records: 3, messages: 3, bot: 'shop', to: null, tz: 'UTC' })
    expect(stats.body.from).toBeLessThanOrEqual(before - 30 * DAY)
    expect(stats.body.from).toBeGreaterThan(before - 30 * DAY - 2 * HOUR)
    expect(stats.body.from % HOUR).toBe(0)
    const nh = await get('reports/not-handled?bot=shop')
    expect(nh.body.map((l: { text: string }) => l.text)).toEqual(['new question'])
    expect(Number(nh.headers.get('x-range-from'))).toBe(stats.body.from)
    expect(nh.headers.get('x-range-to')).toBeNull()
    expect(nh.headers.get('x-range-tz')).toBe('UTC')
    const events = await get('reports/events?bot=shop')
    expect(events.body).toMatchObject({ custom: [{ name: 'signup', count: 1 }], from: stats.body.from, to: null })
  })

  it('an imported conversation from a past month shows in that month, not today', async () => {
    const convs = await get(`conversations?bot=shop&${MARCH}`)
    expect(convs.body).toEqual([
      expect.objectContaining({
        thread: 'ada',
        messages: 2,
        lastText: 'old answer',
        firstTs: PAST,
        lastTs: PAST + 60_000,
      }),
    ])
    expect(convs.headers.get('x-range-from')).toBe(String(Date.UTC(2025, 2, 1)))
    expect(convs.headers.get('x-range-to')).toBe(String(Date.UTC(2025, 3, 1)))
    expect((await get('conversations?bot=shop')).body.map((c: { thread: string }) => c.thread)).toEqual(['bob'])
    expect((await get(`reports/not-handled?${MARCH}`)).body).toEqual([
      { text: 'old question', count: 1, users: 1, lastTs: PAST, bots: ['shop'] },
    ])
    expect((await get(`stats?${MARCH}`)).body).toMatchObject({ records: 2, messages: 2 })
    expect((await get(`messages?${MARCH}`)).body.map((m: { text: string }) => m.text)).toEqual([
      'old question',
      'old answer',
    ])
    expect((await get(`reports/timeline?bucket=day&${MARCH}`)).body).toEqual([
      { t: Date.UTC(2025, 2, 14), incoming: 1, outgoing: 1, events: 0 },
    ])
    // The transcript: event time, and when the collector received it.
    const t = await get('transcript?bot=shop&thread=ada')
    expect(t.body.messages.map((m: { ts: number }) => m.ts)).toEqual([PAST, PAST + 60_000])
    for (const m of t.body.messages) expect(m.receivedAt).toBeGreaterThan(PAST + 300 * DAY)
  })

  it('all=1 (or from=0) covers all time; ISO 8601 and epoch ms both work; tz names the day buckets', async () => {
    const all = await get('stats?bot=shop&all=1')
    expect(all.body).toMatchObject({ records: 5, messages: 5, from: 0, to: null })
    expect((await get('stats?bot=shop&from=0')).body).toMatchObject({ records: 5, from: 0 })
    const ms = await get(`stats?bot=shop&from=${Date.UTC(2025, 2, 1)}&to=${Date.UTC(2025, 3, 1)}`)
    expect(ms.body).toMatchObject({ records: 2, from: Date.UTC(2025, 2, 1), to: Date.UTC(2025, 3, 1) })
    // In Auckland (+13:00 in March) the conversation is on 14 March local time too, from 11:00 UTC the day before.
    const nz = await get(`reports/timeline?bucket=day&${MARCH}&tz=Pacific/Auckland`)
    expect(nz.body).toEqual([{ t: Date.UTC(2025, 2, 13, 11), incoming: 1, outgoing: 1, events: 0 }])
    expect(nz.headers.get('x-range-tz')).toBe('Pacific/Auckland')
    expect((await get('reports/intents?all=1')).body.map((l: { intent: string }) => l.intent).sort()).toEqual([
      'NotHandled',
      'shop',
    ])
    expect((await get(`reports/segments?${MARCH}`)).body).toEqual([])
  })

  it('conversations in keyset pages: X-Next-Cursor when the page is full, cursor= gives the next', async () => {
    const first = await get('conversations?all=1&limit=1')
    expect(first.body.map((c: { thread: string }) => c.thread)).toEqual(['bob'])
    const cursor = first.headers.get('x-next-cursor')
    expect(cursor).toBe(first.body[0].cursor)
    const second = await get(`conversations?all=1&limit=1&cursor=${encodeURIComponent(cursor ?? '')}`)
    expect(second.body.map((c: { thread: string }) => c.thread)).toEqual(['ada'])
    const third = await get(`conversations?all=1&limit=1&cursor=${encodeURIComponent(second.body[0].cursor)}`)
    expect(third.body).toEqual([])
    expect(third.headers.get('x-next-cursor')).toBeNull()
  })

  it('bad from / to / tz / all / cursor: 400 naming the parameter, on every route', async () => {
    const routes = [
      'stats',
      'conversations',
      'messages',
      'reports/not-handled',
      'reports/intents',
      'reports/events',
      'reports/segments',
      'reports/timeline?bucket=hour',
    ]
    const cases: Array<[string, string]> = [
      ['from=yesterday', 'from'],
      ['to=2025-13-45', 'to'],
      ['from=2025-03-02&to=2025-03-01', 'to'],
      ['tz=Mars/Olympus', 'tz'],
      ['all=maybe', 'all'],
      ['from=1&from=2', 'from'],
    ]
    for (const route of routes)
      for (const [query, param] of cases) {
        const res = await api(`${route}${route.includes('?') ? '&' : '?'}${query}`)
        expect(res.status, `${route} ${query}`).toBe(400)
        expect((await res.json()).error).toMatchObject({ code: 'invalid_request', path: param })
      }
    const res = await api('conversations?cursor=abc')
    expect(res.status).toBe(400)
    expect((await res.json()).error.path).toBe('cursor')
    // Minute buckets read the messages: at most 7 days.
    const long = await api('reports/timeline?bucket=minute&all=1')
    expect(long.status).toBe(400)
    expect((await long.json()).error.path).toBe('from')
    expect((await api('reports/timeline?bucket=minute')).status).toBe(200)
  })
})
