/**
 * The funnel and overview views in real headless Chromium while their answer is counted off the request path:
 * the view says the funnel is being counted (the route's 202), asks again after `Retry-After`
 * and shows the table once the answer is there; after new messages it shows the previous
 * answer with its time while the newer one is counted, then the newer one.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBrowserPage, requireChromium, screenshot } from './support/browser'
import { heldStore } from './support/held-reads'

let collector: Collector
let browser: Browser
let page: Page
let pageErrors: string[] = []
const held = heldStore()
// The view asks again after the route's Retry-After (2 s).
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000, interval: 50 })

const track = (userId: string, intent: string) =>
  fetch(`${collector.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId, text: `${intent} from ${userId}`, intent: { name: intent } }),
  }).then((r) => expect(r.status).toBe(201))

beforeAll(async () => {
  requireChromium()
  collector = await startCollector({
    port: 0,
    log: false,
    store: held.store,
    reportWaitMs: 50,
    bots: [{ name: 'shop', apiKey: 'shop-key' }],
  })
  await track('ada', 'greet')
  await track('ada', 'buy')
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await collector?.close()
})

describe('the funnel view while its answer is counted', () => {
  it('says it is counting, then shows the table; after new messages, the previous answer with its time, then the newer', async () => {
    await page.goto(`${collector.url}/#/funnel`)
    await poll(() => page.getByTestId('funnel-choice').locator('option').allTextContents()).toContain('intent:buy')
    held.state.held = true
    for (const step of ['intent:greet', 'intent:buy']) {
      await page.getByTestId('funnel-choice').selectOption(step)
      await page.getByTestId('funnel-add').click()
    }
    await page.getByTestId('funnel-run').click()
    await poll(() => page.getByTestId('funnel-preparing').count()).toBe(1)
    await screenshot(page, 'funnel-preparing')
    expect(await page.getByTestId('funnel-row').count()).toBe(0)
    held.release()
    await poll(() => page.getByTestId('funnel-users').allTextContents()).toEqual(['1', '1'])
    expect(await page.getByTestId('funnel-preparing').count()).toBe(0)
    expect(await page.getByTestId('funnel-as-of').count()).toBe(0)

    // Bob's messages: the funnel was slow, so the view gets the previous answer at once, marked with its time.
    await track('bob', 'greet')
    await track('bob', 'buy')
    await page.getByTestId('funnel-run').click()
    await poll(() => page.getByTestId('funnel-as-of').count()).toBe(1)
    expect(await page.getByTestId('funnel-users').allTextContents()).toEqual(['1', '1'])
    held.release()
    // It asks again by itself and shows the newer answer.
    await poll(() => page.getByTestId('funnel-users').allTextContents()).toEqual(['2', '2'])
    expect(await page.getByTestId('funnel-as-of').count()).toBe(0)
    expect(pageErrors).toEqual([])
  })

  it('the overview says it is counting, then shows the figures', async () => {
    held.state.held = true
    await page.goto(`${collector.url}/#/overview`)
    await poll(() => page.getByTestId('overview-preparing').count()).toBe(1)
    expect(await page.getByTestId('ov-users').count()).toBe(0)
    held.state.held = false
    held.release()
    // ada and bob.
    await poll(() => page.getByTestId('ov-users').textContent()).toBe('2')
    expect(await page.getByTestId('overview-preparing').count()).toBe(0)
    expect(pageErrors).toEqual([])
  })
})
