/**
 * The analytics views in real headless Chromium against a real collector: the overview's
 * numbers are the API's, the cohort table is the retention report, the clusters are the
 * clusters report, and each view's CSV download holds the same rows. Records are stored
 * through the collector's store at fixed offsets from now (inside the default 30 days).
 */
import { readFile } from 'node:fs/promises'
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { item } from './store-contract'
import { gotoDrawn, holdRequests, openBrowserPage, requireChromium, screenshot } from './support/browser'

let collector: Collector
let browser: Browser
let page: Page
let pageErrors: string[] = []
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })

const H = 3_600_000
const DAY = 24 * H

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${collector.url}${path}`)
  expect(res.status).toBe(200)
  return (await res.json()) as T
}

/** RFC 4180 rows (quoted fields with doubled quotes, CRLF line ends). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(cell)
      cell = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
      i++
    } else cell += c
  }
  return rows
}

/** Posts a live message (as a bot's tracker would) and waits until the page's refresh after it has finished. */
async function trackLive(message: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${collector.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=demo-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(message),
  })
  expect(res.status).toBe(201)
  const [newest] = await api<Array<{ id: number }>>('/api/messages?limit=1')
  await poll(() => page.evaluate(() => Number(document.body.dataset.refreshedThrough ?? 0))).toBeGreaterThanOrEqual(
    newest?.id ?? Number.POSITIVE_INFINITY,
  )
}

async function download(testid: string): Promise<string[][]> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testid).click()])
  return parseCsv(await readFile((await file.path()) as string, 'utf8'))
}

beforeAll(async () => {
  requireChromium()
  collector = await startCollector({ port: 0 })
  const now = Date.now()
  const inc = (user: string, at: number, text: string, intent = 'greet') =>
    item('demo', 'universal', 'incoming', { userId: user, text, intent: { name: intent } }, { at })
  const out = (user: string, at: number, intent: string) =>
    item('demo', 'universal', 'outgoing', { userId: user, text: 'ok', intent: { name: intent } }, { at })
  const items = [
    inc('ada', now - 20 * DAY, 'hello'),
    out('ada', now - 20 * DAY + 1000, 'greet'),
    item(
      'demo',
      'generic',
      'event',
      {
        type: 'customEvent',
        name: 'feedback',
        userId: 'ada',
        extraInfo: { score: 4, scale: 'stars', comment: 'quick =)' },
      },
      { at: now - 20 * DAY + 2000 },
    ),
    inc('ada', now - 10 * DAY, 'hello again'),
    inc('bob', now - 10 * DAY, 'where is my order', 'NotHandled'),
    inc('cy', now - 2 * DAY, "where's my order??", 'NotHandled'),
    inc('dee', now - 2 * DAY, 'where is my order please', 'NotHandled'),
    inc('eve', now - DAY, 'cancel my subscription', 'NotHandled'),
    inc('ada', now - H, '=HYPERLINK("http://evil.example")', 'NotHandled'),
  ]
  for (const i of items) await collector.store.add(i.record, i.messages)
  // fay's transcript is longer than a page (500): her first message is on an older page.
  await collector.store.addMany(
    Array.from({ length: 520 }, (_, k) =>
      inc('fay', now - 3 * DAY + k * 1000, k === 0 ? 'the zebra question' : `chat ${k}`),
    ),
  )
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await collector?.close()
})

describe('analytics views in headless Chromium', () => {
  it('the home is the overview, and its numbers are the API’s; its CSV is the same row', async () => {
    await page.goto(collector.url)
    const o = await api<Record<string, unknown> & { feedback: { count: number; average: number } }>(
      '/api/reports/overview',
    )
    expect(o).toMatchObject({ users: 6, messages: 529, notHandled: 5, feedback: { count: 1, average: 0.5 } })
    for (const field of [
      'users',
      'newUsers',
      'returningUsers',
      'sessions',
      'conversations',
      'messages',
      'incoming',
      'outgoing',
      'notHandled',
      'handoffs',
    ])
      await poll(() => page.getByTestId(`ov-${field}`).textContent()).toBe(String(o[field]))
    expect(await page.getByTestId('ov-feedback').textContent()).toBe('1 · avg 0.50')
    // A sparkline per day: its values are the API's days.
    const days = o.days as Array<{ messages: number }>
    expect(await page.getByTestId('spark-messages').getAttribute('data-values')).toBe(
      days.map((d) => d.messages).join(','),
    )
    const csv = await download('csv-overview')
    const [head, row] = csv as [string[], string[]]
    expect(Number(row[head.indexOf('users')])).toBe(o.users)
    expect(Number(row[head.indexOf('sessions')])).toBe(o.sessions)
    expect(Number(row[head.indexOf('feedbackAverage')])).toBe(0.5)
    await screenshot(page, 'analytics-overview')
  })

  it('feedback shows in the transcript at its place: after the answer it rated', async () => {
    await page.goto(`${collector.url}/#/conversations/demo/ada`)
    const bubbles = page.locator('[data-testid="transcript-message"] .bubble')
    await poll(() => bubbles.allTextContents()).toEqual([
      'hello',
      'ok',
      'Feedback: 4 of 5 stars — “quick =)”',
      'hello again',
      '=HYPERLINK("http://evil.example")',
    ])
  })

  it('the cohort table is the retention report, by week and by day', async () => {
    await page.goto(`${collector.url}/#/retention`)
    const weeks = await api<{ cohorts: Array<{ users: number; active: number[] }> }>(
      '/api/reports/retention?period=week',
    )
    await poll(() => page.getByTestId('cohort-row').count()).toBe(weeks.cohorts.length)
    expect(await page.getByTestId('cohort-users').allTextContents()).toEqual(weeks.cohorts.map((c) => String(c.users)))
    expect(await page.getByTestId('cohort-active').allTextContents()).toEqual(
      weeks.cohorts.flatMap((c) => c.active.map(String)),
    )
    await page.locator('[data-period="day"]').click()
    const days = await api<{ cohorts: Array<{ users: number }> }>('/api/reports/retention?period=day')
    await poll(() => page.getByTestId('cohort-row').count()).toBe(days.cohorts.length)
    const csv = await download('csv-retention')
    expect(csv.slice(1).map((r) => Number(r[1]))).toEqual(days.cohorts.map((c) => c.users))
    await screenshot(page, 'analytics-retention')
  })

  it('paths: the flow and the table are the paths report', async () => {
    await page.goto(`${collector.url}/#/paths`)
    const { paths } = await api<{ paths: Array<{ intents: string[]; sessions: number }> }>('/api/reports/paths?depth=4')
    expect(paths.length).toBeGreaterThan(0)
    await poll(() => page.getByTestId('path-intents').allTextContents()).toEqual(
      paths.map((p) => p.intents.join(' → ')),
    )
    expect(await page.locator('[data-testid="paths-flow"] rect').count()).toBe(
      paths.reduce((n, p) => n + p.intents.length, 0),
    )
  })

  it('a funnel built in the UI from intent and event names equals the API', async () => {
    await page.goto(`${collector.url}/#/funnel`)
    await poll(() => page.getByTestId('funnel-choice').locator('option').allTextContents()).toContain('event:feedback')
    for (const step of ['intent:greet', 'event:feedback', 'intent:greet']) {
      await page.getByTestId('funnel-choice').selectOption(step)
      await page.getByTestId('funnel-add').click()
    }
    expect(await page.getByTestId('funnel-step').count()).toBe(3)
    await page.getByTestId('funnel-run').click()
    const { steps } = await api<{ steps: Array<{ step: string; users: number }> }>(
      '/api/reports/funnel?steps=intent:greet,event:feedback,intent:greet',
    )
    // ada and fay greeted; ada rated the answer, and greeted again ten days later.
    expect(steps.map((s) => s.users)).toEqual([2, 1, 1])
    await poll(() => page.getByTestId('funnel-users').allTextContents()).toEqual(steps.map((s) => String(s.users)))
    const csv = await download('csv-funnel')
    expect(csv.slice(1)).toEqual(steps.map((s) => [s.step, String(s.users)]))
  })

  it('funnel: an earlier run answered after a later one is not shown; a live refresh keeps the step being picked', async () => {
    // Still on the funnel view of the test before, its three steps in the builder.
    expect(await page.getByTestId('funnel-step').count()).toBe(3)
    // The three-step funnel of the test before is in the builder. Its count is held back (a slow
    // database); the operator removes the last step and runs again, answered at once.
    const three = 'intent:greet,event:feedback,intent:greet'
    const hold = await holdRequests(
      page,
      (url) => url.pathname.endsWith('/api/reports/funnel') && url.searchParams.get('steps') === three,
    )
    const answered = () => page.evaluate(() => Number(document.getElementById('funnel-result')?.dataset.answered ?? 0))
    try {
      const before = await answered()
      await page.getByTestId('funnel-run').click()
      await page.getByTestId('funnel-step').last().getByRole('button', { name: 'remove' }).click()
      await page.getByTestId('funnel-run').click()
      await poll(answered).toBe(before + 1)
      await poll(() => page.getByTestId('funnel-users').allTextContents()).toEqual(['2', '1'])
      hold.release()
      // The held answer has come back and been handled: the table is still the later run's.
      await poll(answered).toBe(before + 2)
      expect(await page.getByTestId('funnel-users').allTextContents()).toEqual(['2', '1'])
    } finally {
      await hold.stop()
    }
    // A step is being picked when live messages refresh the view: the choice stays.
    await page.getByTestId('funnel-choice').selectOption('event:feedback')
    await trackLive({ text: 'hi', userId: 'hal', intent: { name: 'greet' } })
    expect(await page.getByTestId('funnel-choice').inputValue()).toBe('event:feedback')
  })

  it('clusters group the same question; the CSV has the same rows, a formula neutralised', async () => {
    await page.goto(`${collector.url}/#/clusters`)
    const { clusters } = await api<{ clusters: Array<{ label: string; count: number; users: number }> }>(
      '/api/reports/not-handled/clusters',
    )
    expect(clusters[0]).toMatchObject({ count: 3, users: 3 })
    await poll(() => page.getByTestId('cluster-label').allTextContents()).toEqual(clusters.map((c) => c.label))
    const csv = await download('csv-not-handled-clusters')
    expect(csv[0]).toEqual(['label', 'count', 'users', 'examples'])
    expect(csv.slice(1).map((r) => [r[1], r[2]])).toEqual(clusters.map((c) => [String(c.count), String(c.users)]))
    // The spreadsheet sees text, not a formula.
    expect(csv.slice(1).map((r) => r[0])).toContain(`'=HYPERLINK("http://evil.example")`)
  })

  it('the header search box finds messages; a hit opens the transcript at that message', async () => {
    await page.goto(`${collector.url}/#/overview`)
    await page.getByTestId('search-input').fill('"my order"')
    await page.getByTestId('search-input').press('Enter')
    const { hits } = await api<{ hits: Array<{ id: number; text: string }> }>(
      `/api/search?q=${encodeURIComponent('"my order"')}`,
    )
    expect(hits.map((x) => x.text)).toEqual(['where is my order please', "where's my order??", 'where is my order'])
    await poll(() => page.getByTestId('search-hit').count()).toBe(hits.length)
    await page.getByTestId('search-hit').first().click()
    const hit = page.locator('[data-hit="true"]')
    await poll(() => hit.getAttribute('data-id')).toBe(String(hits[0]?.id))
    // On an older page of a long transcript: it is loaded and scrolled to.
    await page.getByTestId('search-input').fill('zeb*')
    await page.getByTestId('search-input').press('Enter')
    await poll(() => page.getByTestId('search-hit').allTextContents()).toEqual([
      expect.stringContaining('the zebra question'),
    ])
    await page.getByTestId('search-hit').first().click()
    await poll(() => page.locator('[data-hit="true"] .bubble').textContent()).toBe('the zebra question')
    expect(await page.locator('[data-hit="true"]').isVisible()).toBe(true)
    await screenshot(page, 'analytics-search-hit')
    expect(pageErrors).toEqual([])
  })

  it('search: a slower earlier query never replaces a later one; a live refresh keeps what is typed in the box', async () => {
    await page.goto(`${collector.url}/#/overview`)
    // The search for `hello` is answered only when the test says (a slow database), others at once.
    const isSlow = (url: URL) => url.pathname.endsWith('/api/search') && url.searchParams.get('q') === 'hello'
    const hold = await holdRequests(page, isSlow)
    const zebra = [expect.stringContaining('the zebra question')]
    try {
      await page.getByTestId('search-input').fill('hello')
      await page.getByTestId('search-input').press('Enter')
      await page.getByTestId('search-input').fill('zeb*')
      await page.getByTestId('search-input').press('Enter')
      // zeb*'s load has drawn (the earlier test's zeb* hits are still in the hidden view: wait for this one).
      await poll(() => page.evaluate(() => document.body.dataset.loaded)).toContain(
        `#/search/${encodeURIComponent('zeb*')}`,
      )
      expect(await page.getByTestId('search-hit').allTextContents()).toEqual(zebra)
      const late = page.waitForResponse((res) => isSlow(new URL(res.url())))
      hold.release()
      await late
      // `hello`'s route has ended (its answer handled): the list is still zeb*'s.
      await poll(() => page.evaluate(() => document.body.dataset.routing)).toBe('0')
      expect(await page.getByTestId('search-hit').allTextContents()).toEqual(zebra)
      expect(await page.locator('#search-title').textContent()).toBe('Search: zeb*')
    } finally {
      await hold.stop()
    }
    // The next query is being typed when a live message refreshes the view: the box keeps it.
    await page.getByTestId('search-input').fill('cancel')
    await trackLive({ text: 'a live one', userId: 'gus' })
    expect(await page.getByTestId('search-input').inputValue()).toBe('cancel')
    expect(await page.getByTestId('search-hit').allTextContents()).toEqual(zebra)
    expect(pageErrors).toEqual([])
  })

  // Every view draws its latest load's answer (lib/latest.js): all time is asked and held (a slow
  // database), then a week of 2020 (nothing in it) is drawn; all time's answer comes last and is dropped.
  const EMPTY_WEEK = 'from=2020-01-06&to=2020-01-12'
  for (const [view, api, drawn] of [
    ['intents', '/api/reports/intents', () => page.getByTestId('intent-row').count()],
    ['not-handled', '/api/reports/not-handled', () => page.getByTestId('not-handled-row').count()],
    [
      'conversations',
      '/api/conversations',
      () =>
        page
          .locator('#conversations [data-testid=conversation], #conversations [data-testid=conversation-group]')
          .count(),
    ],
    ['overview', '/api/reports/overview', async () => Number(await page.getByTestId('ov-users').textContent())],
  ] as const)
    it(`${view}: a range's answer that comes after the next range's is drawn is dropped`, async () => {
      await gotoDrawn(page, `${collector.url}/#/${view}?range=all`)
      expect(await drawn()).toBeGreaterThan(0)
      await gotoDrawn(page, `${collector.url}/#/${view}?${EMPTY_WEEK}`)
      expect(await drawn()).toBe(0)
      const isAllTime = (url: URL) => url.pathname.endsWith(api) && url.searchParams.get('all') === '1'
      const hold = await holdRequests(page, isAllTime)
      try {
        await page.evaluate(() => {
          location.hash = location.hash.replace(/\?.*$/, '?range=all')
        })
        await poll(() => page.evaluate(() => document.body.dataset.routing)).toBe('1')
        await page.evaluate((q) => {
          location.hash = location.hash.replace(/\?.*$/, `?${q}`)
        }, EMPTY_WEEK)
        await poll(() => page.evaluate(() => document.body.dataset.loaded === location.hash)).toBe(true)
        expect(await drawn()).toBe(0)
        const late = page.waitForResponse((res) => isAllTime(new URL(res.url())))
        hold.release()
        await late
        // All time's route has ended (its answer handled): the view still shows the empty week.
        await poll(() => page.evaluate(() => document.body.dataset.routing)).toBe('0')
        expect(await drawn()).toBe(0)
      } finally {
        await hold.stop()
      }
      expect(pageErrors).toEqual([])
    })
})
