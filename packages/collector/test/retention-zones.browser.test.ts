/**
 * The retention view in a browser whose time zone the collector does not keep (Asia/Tokyo), in
 * real headless Chromium: it says the cohorts are being prepared, then — asking again after the
 * answer's `Retry-After` — shows the cohort table, equal to the API's. The preparation is held at
 * its first chunk until the test has seen the message (the store's `onRetentionChunk`).
 */
import { type Collector, SqliteRecordStore, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { item } from './store-contract'
import { openBrowserPage, requireChromium, screenshot } from './support/browser'

const ZONE = 'Asia/Tokyo'
const DAY = 86_400_000
let store: SqliteRecordStore
let collector: Collector
let browser: Browser
let page: Page
let pageErrors: string[] = []
let release: () => void = () => {}
const held = new Promise<void>((r) => {
  release = r
})

beforeAll(async () => {
  requireChromium()
  store = new SqliteRecordStore(':memory:', { retentionChunkUsers: 5, onRetentionChunk: () => held })
  collector = await startCollector({ port: 0, store })
  const now = Date.now()
  await store.addMany(
    Array.from({ length: 24 }, (_, u) =>
      [0, 1]
        .slice(0, 1 + (u % 2))
        .map((back) =>
          item(
            'demo',
            'universal',
            'incoming',
            { userId: `u${u}`, text: 'hi' },
            { at: now - (20 - (u % 10)) * DAY + back * 7 * DAY },
          ),
        ),
    ).flat(),
  )
  ;({ browser, page, pageErrors } = await openBrowserPage({ timezoneId: ZONE }))
})

afterAll(async () => {
  release()
  await browser?.close()
  await collector?.close()
  await store?.close()
})

describe('retention in a time zone kept on demand, in headless Chromium', () => {
  it('says the cohorts are being prepared, then shows the table once they are', async () => {
    await page.goto(`${collector.url}/#/retention`)
    const note = page.getByTestId('retention-preparing')
    await expect.poll(() => note.textContent(), { timeout: 8000, interval: 50 }).toContain(`for ${ZONE}`)
    await screenshot(page, 'retention-preparing')

    release()
    await store.retentionZoneReady(ZONE)
    const res = await fetch(`${collector.url}/api/reports/retention?period=week&tz=${ZONE}`)
    expect(res.status).toBe(200)
    const weeks = (await res.json()) as { cohorts: Array<{ users: number; active: number[] }> }
    expect(weeks.cohorts.length).toBeGreaterThan(1)
    // The view asks again after Retry-After (2 s): the bound only stops a hang.
    await expect
      .poll(() => page.getByTestId('cohort-row').count(), { timeout: 30_000, interval: 100 })
      .toBe(weeks.cohorts.length)
    expect(await note.count()).toBe(0)
    expect(await page.getByTestId('cohort-users').allTextContents()).toEqual(weeks.cohorts.map((c) => String(c.users)))
    expect(await page.getByTestId('cohort-active').allTextContents()).toEqual(
      weeks.cohorts.flatMap((c) => c.active.map(String)),
    )
    await screenshot(page, 'retention-prepared')
    expect(pageErrors).toEqual([])
  })
})
