/**
 * The dashboard's date range in real headless Chromium (a browser in America/New_York, so the
 * browser's days are not the collector's UTC days) against a real collector: the picker changes
 * every view — each report and list request carries the range's from/to/tz and the numbers are
 * those of the records whose event time falls in it — the range lives in the URL and survives a
 * reload and navigation, and a conversation imported from a past month (universal records with
 * `platformJson.timestamp`, as `convotrack import` writes them) shows in that month, not today.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBrowserPage, requireChromium, screenshot } from './support/browser'

const TZ = 'America/New_York'
const DAY = 86_400_000
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })

let collector: Collector
let browser: Browser
let page: Page
let pageErrors: string[] = []
/** The report and list requests the page made since the last `take()`. */
const requests: URL[] = []
const take = () => requests.splice(0)

/** One stored record's part in the reports. */
interface Seed {
  ts: number
  user: string
  kind: 'greet' | 'not-handled' | 'reply' | 'revenue'
}
const seeds: Seed[] = []

// Groups of users whose traffic is `daysAgo` old, each group a different size, so every range
// (today, 7, 30, 90 days, all time) holds a different number of them.
const GROUPS = [
  { daysAgo: 0, users: 1 },
  { daysAgo: 3, users: 2 },
  { daysAgo: 20, users: 3 },
  { daysAgo: 60, users: 4 },
  { daysAgo: 200, users: 5 },
]

/** The 10th of the month two months back, 12:00 UTC (07:00 or 08:00 in New York): the imported conversation. */
function importedTime(now: number): { ts: number; month: { from: string; to: string } } {
  const d = new Date(now)
  const first = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 2, 1))
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0))
  const day = (x: Date) => x.toISOString().slice(0, 10)
  return {
    ts: Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 10, 12),
    month: { from: day(first), to: day(last) },
  }
}

async function postBatch(records: unknown[]): Promise<void> {
  const res = await fetch(`${collector.url}/track/batch?apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ records }),
  })
  const answer = (await res.json()) as { accepted: number; refused: number }
  expect(res.status).toBe(200)
  expect(answer.refused).toBe(0)
}

const record = (type: string, body: Record<string, unknown>) => ({
  platform: 'universal',
  type,
  v: '11.1.0-rest',
  body,
})

/** What the seeds in [from, to) come to, per view. */
function expected(bounds: { from: number; to: number } | 'all') {
  const inRange = seeds.filter((s) => bounds === 'all' || (s.ts >= bounds.from && s.ts < bounds.to))
  const users = (kind: Seed['kind']) => new Set(inRange.filter((s) => s.kind === kind).map((s) => s.user)).size
  const count = (kind: Seed['kind']) => inRange.filter((s) => s.kind === kind).length
  return {
    messages: inRange.length,
    conversations: new Set(inRange.map((s) => s.user)).size,
    greet: count('greet'),
    notHandled: count('not-handled'),
    revenue: count('revenue') * 10,
    locales: users('greet'),
  }
}

/** Hours and minutes of `t` in New York. */
const nyClock = (t: number) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: TZ, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t)

/**
 * Every report and list request since the last check carried the same range, in the browser's
 * zone; returns it (from/to, or 'all').
 */
function rangeOfRequests(): { from: number; to: number } | 'all' {
  const seen = take()
  expect(seen.length).toBeGreaterThan(0)
  const ranges = new Set<string>()
  for (const url of seen) {
    expect(url.searchParams.get('tz'), url.href).toBe(TZ)
    if (url.pathname.endsWith('/reports/timeline')) continue // the chart asks for its own window of the range
    ranges.add(
      url.searchParams.get('all') === '1' ? 'all' : `${url.searchParams.get('from')}-${url.searchParams.get('to')}`,
    )
  }
  expect([...ranges], seen.map((u) => u.href).join('\n')).toHaveLength(1)
  const [only] = ranges
  if (only === 'all') return 'all'
  const [from, to] = (only as string).split('-').map(Number) as [number, number]
  // Local midnights in the browser's zone.
  expect(nyClock(from)).toBe('00:00')
  expect(nyClock(to)).toBe('00:00')
  return { from, to }
}

/**
 * Waits until the view has drawn what the URL names (the router marks `<body data-loaded>` with
 * the hash it loaded): a check that something is absent then sees this load, not the last one.
 */
const drawn = (p: Page = page) =>
  poll(() => p.evaluate(() => document.body.dataset.loaded === location.hash)).toBe(true)

const VIEWS = ['live', 'conversations', 'not-handled', 'intents', 'events', 'audience'] as const

/** Visits every view through the nav and checks its numbers against the range its requests carried. */
async function checkEveryView(rangeKey: string) {
  let bounds: ReturnType<typeof rangeOfRequests> | undefined
  const check = () => {
    const b = rangeOfRequests()
    if (bounds !== undefined) expect(b).toEqual(bounds)
    bounds = b
    return expected(b)
  }
  for (const view of VIEWS) {
    await page.locator(`nav a[data-view=${view}]`).click()
    // The nav's plain links keep the range: it is written back into the URL.
    if (rangeKey !== '30d') await poll(() => page.url()).toContain(`#/${view}?range=${rangeKey}`)
    await poll(() => page.getByTestId(`view-${view}`).getAttribute('class')).toContain('on')
    if (view === 'live') {
      await poll(() => requests.some((u) => u.pathname.endsWith('/api/stats'))).toBe(true)
      await poll(() => page.getByTestId('count-messages').textContent()).toBe(String(check().messages))
    } else if (view === 'conversations') {
      await poll(() => requests.some((u) => u.pathname.endsWith('/api/conversations'))).toBe(true)
      await poll(() => page.locator('#conv-count').textContent()).toMatch(
        new RegExp(`^${check().conversations} conversations`),
      )
    } else if (view === 'not-handled') {
      await poll(() => requests.some((u) => u.pathname.endsWith('/not-handled'))).toBe(true)
      const want = check().notHandled
      const row = page.getByTestId('not-handled-row').filter({ hasText: 'talk to a human' })
      if (want === 0) {
        await drawn()
        expect(await row.count()).toBe(0)
      } else await poll(() => row.getByTestId('not-handled-count').textContent()).toBe(String(want))
    } else if (view === 'intents') {
      await poll(() => requests.some((u) => u.pathname.endsWith('/intents'))).toBe(true)
      const want = check().greet
      const row = page.getByTestId('intent-row').filter({ hasText: 'greet' })
      if (want === 0) {
        await drawn()
        expect(await row.count()).toBe(0)
      } else await poll(() => row.locator('td.num').first().textContent()).toBe(String(want))
    } else if (view === 'events') {
      await poll(() => requests.some((u) => u.pathname.endsWith('/events'))).toBe(true)
      await poll(() => page.getByTestId('revenue-total').textContent()).toBe(String(check().revenue))
    } else {
      await poll(() => requests.some((u) => u.pathname.endsWith('/segments'))).toBe(true)
      const want = check().locales
      const locale = page.getByTestId('segment').filter({ hasText: 'locale' })
      if (want === 0) {
        await drawn()
        expect(await locale.count()).toBe(0)
      } else await poll(() => locale.locator('.n').first().textContent()).toBe(String(want))
    }
  }
  return bounds
}

beforeAll(async () => {
  requireChromium()
  collector = await startCollector({ port: 0, demoBot: false, bots: [{ name: 'shop', apiKey: 'shop-key' }] })
  const now = Date.now()
  const records: unknown[] = []
  for (const g of GROUPS)
    for (let u = 0; u < g.users; u++) {
      const user = `d${g.daysAgo}-u${u}`
      // Today's group is as a live bot sends it (no timestamp: the receive time); the others as an import writes them.
      const ts = now - g.daysAgo * DAY + u * 1000
      const at = (offset: number) => (g.daysAgo === 0 ? {} : { platformJson: { timestamp: ts + offset } })
      records.push(
        record('incoming', {
          text: 'hello',
          userId: user,
          intent: { name: 'greet' },
          platformUserJson: { locale: 'en_US' },
          ...at(0),
        }),
        record('outgoing', { text: 'Hi! How can I help?', userId: user, ...at(100) }),
        record('incoming', { text: 'talk to a human', userId: user, intent: { name: 'NotHandled' }, ...at(200) }),
        record('event', { type: 'revenueEvent', name: 'purchase', userId: user, amount: 10, ...at(300) }),
      )
      seeds.push(
        { ts, user, kind: 'greet' },
        { ts: ts + 100, user, kind: 'reply' },
        { ts: ts + 200, user, kind: 'not-handled' },
        { ts: ts + 300, user, kind: 'revenue' },
      )
    }
  const imported = importedTime(now)
  records.push(
    record('incoming', {
      text: 'is the store open on sunday?',
      userId: 'imported-ann',
      platformJson: { timestamp: new Date(imported.ts).toISOString() },
    }),
    record('outgoing', {
      text: 'Yes, 10 to 4.',
      userId: 'imported-ann',
      platformJson: { timestamp: new Date(imported.ts + 60_000).toISOString() },
    }),
  )
  seeds.push(
    { ts: imported.ts, user: 'imported-ann', kind: 'reply' },
    { ts: imported.ts + 60_000, user: 'imported-ann', kind: 'reply' },
  )
  await postBatch(records)
  ;({ browser, page, pageErrors } = await openBrowserPage())
  // The page of openBrowserPage runs in the machine's zone: this test's page runs in New York.
  await page.close()
  page = await browser.newPage({ viewport: { width: 1280, height: 800 }, timezoneId: TZ })
  page.setDefaultTimeout(10_000)
  page.on('pageerror', (e) => pageErrors.push(e.message))
  page.on('request', (r: Request) => {
    const url = new URL(r.url())
    if (/\/api\/(stats|conversations|messages|reports\/)/.test(url.pathname)) requests.push(url)
  })
})

afterAll(async () => {
  await browser?.close()
  await collector?.close()
})

describe('the dashboard’s date range', () => {
  it('changes every view: each request carries the range, the numbers are those of the range', async () => {
    take()
    await page.goto(`${collector.url}/#/live`)
    expect(await page.getByTestId('range-select').inputValue()).toBe('30d')
    const byRange = new Map<string, ReturnType<typeof expected>>()
    for (const key of ['30d', '7d', 'today', '90d', 'all']) {
      if (key !== '30d') {
        take()
        await page.getByTestId('range-select').selectOption(key)
        await poll(() => page.url()).toContain(`range=${key}`)
      }
      const bounds = await checkEveryView(key)
      if (bounds !== 'all' && bounds !== undefined) {
        const days = { today: 1, '7d': 7, '30d': 30, '90d': 90 }[key] as number
        // `days` local days ending with today (a DST change makes one of them 23 or 25 hours).
        expect(Math.abs(bounds.to - bounds.from - days * DAY)).toBeLessThanOrEqual(3_600_000)
        expect(bounds.from).toBeLessThanOrEqual(Date.now())
        expect(bounds.to).toBeGreaterThan(Date.now())
      } else expect(bounds).toBe('all')
      byRange.set(key, expected(bounds as Parameters<typeof expected>[0]))
      await screenshot(page, `60-range-${key}`)
    }
    // The seeded traffic makes every range's numbers different.
    const sizes = [...byRange.values()].map((e) => e.messages)
    expect(new Set(sizes).size).toBe(sizes.length)
    expect(pageErrors).toEqual([])
  })

  it('lives in the URL: a reload and a shared link show the same range', async () => {
    await page.goto(`${collector.url}/#/intents`)
    await page.getByTestId('range-select').selectOption('7d')
    await poll(() => page.url()).toMatch(/#\/intents\?range=7d$/)
    const greet = page.getByTestId('intent-row').filter({ hasText: 'greet' }).locator('td.num').first()
    take()
    await page.reload()
    expect(await page.getByTestId('range-select').inputValue()).toBe('7d')
    await poll(() => requests.some((u) => u.pathname.endsWith('/intents'))).toBe(true)
    const bounds = rangeOfRequests()
    await poll(() => greet.textContent()).toBe(String(expected(bounds).greet))
    // A shared link to another view with a custom range opens with it.
    const shared = await browser.newPage({ timezoneId: TZ })
    try {
      await shared.goto(`${collector.url}/#/not-handled?from=2020-01-01&to=2020-01-31`)
      expect(await shared.getByTestId('range-select').inputValue()).toBe('custom')
      expect(await shared.getByTestId('range-from').inputValue()).toBe('2020-01-01')
      expect(await shared.getByTestId('range-to').inputValue()).toBe('2020-01-31')
      await drawn(shared)
      expect(await shared.getByTestId('not-handled-row').count()).toBe(0)
    } finally {
      await shared.close()
    }
    expect(pageErrors).toEqual([])
  })

  it('shows a conversation imported from a past month in that month, at its own time, not today', async () => {
    const imported = importedTime(Date.now())
    const ann = page.locator('[data-testid=conversation][data-thread=imported-ann]')
    await page.goto(`${collector.url}/#/conversations?range=today`)
    await drawn()
    expect(await ann.count()).toBe(0)
    // The picker's custom range: that month, first to last day.
    await page.getByTestId('range-select').selectOption('custom')
    await page.getByTestId('range-from').fill(imported.month.from)
    await page.getByTestId('range-to').fill(imported.month.to)
    take()
    await page.getByTestId('range-apply').click()
    await poll(() => page.url()).toContain(`from=${imported.month.from}&to=${imported.month.to}`)
    await poll(() => ann.count()).toBe(1)
    const bounds = rangeOfRequests()
    expect(bounds).not.toBe('all')
    await poll(() => page.locator('#conv-count').textContent()).toMatch(
      new RegExp(`^${expected(bounds).conversations} conversations`),
    )
    // The transcript dates its messages by their own (event) time, with the day.
    await ann.click()
    const first = page.getByTestId('transcript-message').first()
    await poll(() => first.getAttribute('data-ts')).toBe(String(imported.ts))
    const day = await page.evaluate(
      (ts) => new Date(ts).toLocaleString([], { month: 'short', day: 'numeric' }),
      imported.ts,
    )
    expect(await first.locator('.meta').textContent()).toContain(day)
    await screenshot(page, '61-range-imported-month')
    // The live view's chart of that month, per day, counts that month's messages (the imported ones among them).
    await page.locator('nav a[data-view=live]').click()
    await page.getByRole('button', { name: 'per day' }).click()
    await poll(() => page.getByTestId('chart-total').textContent()).toMatch(
      new RegExp(`^${expected(bounds).messages} messages, `),
    )
    expect(pageErrors).toEqual([])
  })
})
