/**
 * The dashboard's layout at a laptop's 1024×768 and on a wide screen, in real headless Chromium
 * (Debian's package, driven by playwright-core) against a real collector, measured rather than
 * screenshotted: the bot filter marks a configured bot with no records, the transcript header
 * keeps its title, badges and buttons each on one line (the title cut with an ellipsis only
 * when it does not fit), and the conversation list's preview uses the column's whole width.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBrowserPage, requireChromium, screenshot } from './support/browser'

let collector: Collector
let browser: Browser
let page: Page
let pageErrors: string[] = []
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })

const LAPTOP = { width: 1024, height: 768 }
const WIDE = { width: 1600, height: 900 }
/** A last message far longer than any list column. */
const LONG_REPLY =
  'Your order 1234 left our warehouse in Leeds this morning and is on its way with the courier; it should reach you on Thursday between 9 and 12, and you will get a text with the exact hour the evening before it arrives.'

/** Posts a universal record through `POST /track` as a tracker would. */
async function track(apiKey: string, type: 'incoming' | 'outgoing', body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${collector.url}/track?platform=universal&type=${type}&v=11.1.0-rest&apiKey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status, await res.clone().text()).toBe(201)
}

/** How many line boxes the element's text is laid out on (one rect per line of a text range). */
const textLines = (target: string | Locator) =>
  (typeof target === 'string' ? page.getByTestId(target) : target).evaluate((el) => {
    const range = document.createRange()
    range.selectNodeContents(el)
    return new Set(
      Array.from(range.getClientRects())
        .filter((r) => r.width > 0)
        .map((r) => Math.round(r.top)),
    ).size
  })

/** Characters of the element's text drawn inside its box (the rest is past the ellipsis). */
const visibleChars = (el: Element) => {
  const text = el.firstChild
  if (!(text instanceof Text)) return 0
  const right = el.getBoundingClientRect().right
  const range = document.createRange()
  let n = 0
  for (let i = 0; i < text.length; i++) {
    range.setStart(text, i)
    range.setEnd(text, i + 1)
    if (range.getBoundingClientRect().right > right + 0.5) break
    n = i + 1
  }
  return n
}

/** The title's box and the takeover controls' box, and whether the title is cut. */
const headParts = () =>
  page.getByTestId('transcript-head').evaluate((head) => {
    const title = head.querySelector('[data-testid=transcript-title]') as HTMLElement
    const box = (el: Element | null) => {
      const r = (el as HTMLElement).getBoundingClientRect()
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, height: r.height }
    }
    return {
      title: box(title),
      fontSize: Number.parseFloat(getComputedStyle(title).fontSize),
      cut: title.scrollWidth > title.clientWidth,
      ellipsis: getComputedStyle(title).textOverflow,
      titleAttr: title.getAttribute('title'),
      text: title.textContent,
      takeover: box(head.querySelector('#takeover')),
      state: box(head.querySelector('[data-testid=pause-state]')),
      button: box(head.querySelector('[data-testid=pause-button]')),
      gap: Number.parseFloat(getComputedStyle(title.parentElement as HTMLElement).columnGap),
    }
  })

/**
 * Are the ids line's items (bot name, platform badge, thread, count) on one line? Items on one
 * line share a horizontal band: the lowest top is above the highest bottom.
 */
const idsOnOneLine = () =>
  page.getByTestId('transcript-ids').evaluate((ids) => {
    const boxes = Array.from(ids.children).map((c) => c.getBoundingClientRect())
    return boxes.length >= 4 && Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom))
  })

beforeAll(async () => {
  requireChromium()
  // The demo bot (`demo` / `demo-key`) is registered by default and never sends here.
  collector = await startCollector({ port: 0 })
  collector.addBot({ name: 'shop', apiKey: 'shop-key', pauseWebhookUrl: 'http://127.0.0.1:9/convotrack/pause' })
  collector.addBot({ name: 'helpdesk', apiKey: 'helpdesk-key' })
  collector.addBot({ name: 'fresh', apiKey: 'fresh-key' })
  await track('shop-key', 'incoming', {
    text: 'where is my order?',
    userId: 'demo_slack',
    conversationId: 'DDEMOSLACK',
  })
  await track('shop-key', 'outgoing', { text: LONG_REPLY, userId: 'demo_slack', conversationId: 'DDEMOSLACK' })
  await track('shop-key', 'incoming', { text: 'hi', userId: 'ada' })
  await track('helpdesk-key', 'incoming', { text: 'need help', userId: 'hd-1' })
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await collector?.close()
})

describe('dashboard layout at 1024×768 and wide, in headless Chromium', () => {
  it('lists a configured bot with no records after the others, labelled so, until its first record arrives', async () => {
    const api = (await (await fetch(`${collector.url}/api/bots`)).json()) as Array<{ name: string; records: number }>
    expect(api.map((b) => [b.name, b.records])).toEqual([
      ['demo', 0],
      ['shop', 3],
      ['helpdesk', 1],
      ['fresh', 0],
    ])
    await page.setViewportSize(LAPTOP)
    await page.goto(`${collector.url}/#/conversations`)
    await poll(() => page.getByTestId('live-state').textContent()).toContain('live')
    const options = page.getByTestId('bot-filter').locator('option')
    await poll(() => options.allTextContents()).toEqual([
      'All bots',
      'shop',
      'helpdesk',
      'demo (no records yet)',
      'fresh (no records yet)',
    ])
    expect(await options.evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual([
      '',
      'shop',
      'helpdesk',
      'demo',
      'fresh',
    ])
    // It is still a filter: choosing it shows that bot's (empty) list.
    await page.getByTestId('bot-filter').selectOption('fresh')
    await poll(() => page.getByTestId('conversations').textContent()).toBe('No conversations yet.')
    // Its first record arrives while the page is open: the label goes, and the list shows it.
    await track('fresh-key', 'incoming', { text: 'first words', userId: 'eve' })
    await poll(() => options.allTextContents()).toEqual([
      'All bots',
      'shop',
      'helpdesk',
      'fresh',
      'demo (no records yet)',
    ])
    expect(await page.getByTestId('bot-filter').inputValue()).toBe('fresh')
    await poll(() => page.getByTestId('conversation-name').allTextContents()).toEqual(['eve'])
    await page.getByTestId('bot-filter').selectOption('')
  })

  it('at 1024×768 keeps the transcript title, badges and takeover controls on one line each; the title is cut only when it must be', async () => {
    await page.setViewportSize(LAPTOP)
    await page.goto(`${collector.url}/#/conversations/shop/DDEMOSLACK`)
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('demo_slack · DDEMOSLACK')
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    const p = await headParts()
    // Title and controls share the first line, side by side, without overlapping.
    expect(p.title.right).toBeLessThanOrEqual(p.takeover.left)
    expect(p.title.bottom).toBeGreaterThan(p.takeover.top)
    expect(p.title.top).toBeLessThan(p.takeover.bottom)
    // The title is one line high (two lines would be at least twice its font size); the state
    // pill and the button each keep their text on one line.
    expect(p.title.height).toBeLessThan(2 * p.fontSize)
    expect(await textLines('transcript-title')).toBe(1)
    expect(await textLines('pause-state')).toBe(1)
    expect(await textLines('pause-button')).toBe(1)
    // The full name is in the title attribute; when it is cut, it is cut with an ellipsis after
    // taking all the room the controls leave (not cut to a couple of letters).
    expect(p.titleAttr).toBe('demo_slack · DDEMOSLACK')
    expect(p.ellipsis).toBe('ellipsis')
    if (p.cut) expect(p.takeover.left - p.title.right).toBeLessThanOrEqual(p.gap + 1)
    const shown = await page.getByTestId('transcript-title').evaluate(visibleChars)
    expect(shown).toBeGreaterThanOrEqual(10)
    // Bot name, platform badge, thread id and count: one line.
    expect(await idsOnOneLine()).toBe(true)
    await screenshot(page, 'layout-1024-transcript')

    // A short title is not cut at the same width.
    await page.goto(`${collector.url}/#/conversations/shop/ada`)
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('ada')
    const short = await headParts()
    expect(short.cut).toBe(false)
    expect(short.title.right).toBeLessThanOrEqual(short.takeover.left)
  })

  it('on a wide screen shows the whole title on one line, uncut', async () => {
    await page.setViewportSize(WIDE)
    await page.goto(`${collector.url}/#/conversations/shop/DDEMOSLACK`)
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('demo_slack · DDEMOSLACK')
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    const p = await headParts()
    expect(p.cut).toBe(false)
    expect(await textLines('transcript-title')).toBe(1)
    expect(p.title.right).toBeLessThanOrEqual(p.takeover.left)
    expect(await page.getByTestId('transcript-title').evaluate(visibleChars)).toBe('demo_slack · DDEMOSLACK'.length)
    expect(await idsOnOneLine()).toBe(true)
  })

  it('a bot without a pause webhook says why below the title line, which stays one line', async () => {
    await page.setViewportSize(LAPTOP)
    await page.goto(`${collector.url}/#/conversations/helpdesk/hd-1`)
    await poll(() => page.getByTestId('pause-unavailable').textContent()).toBe(
      'Pause needs a pauseWebhookUrl for this bot',
    )
    const p = await headParts()
    expect(p.cut).toBe(false)
    expect(await textLines('transcript-title')).toBe(1)
    expect(await textLines('pause-button')).toBe(1)
    const why = await page.getByTestId('pause-unavailable').boundingBox()
    expect(why?.y).toBeGreaterThanOrEqual(p.takeover.bottom)
  })

  it('previews the last message across the list column’s whole width, cut by CSS, and more of it on a wider screen', async () => {
    // The server sends the last message whole; only the browser cuts it, at the column's edge.
    const rows = (await (await fetch(`${collector.url}/api/conversations?bot=shop`)).json()) as Array<{
      thread: string
      lastText: string
    }>
    expect(rows.find((r) => r.thread === 'DDEMOSLACK')?.lastText).toBe(LONG_REPLY)

    const measure = async () => {
      await page.goto(`${collector.url}/#/conversations`)
      const item = page.locator('[data-testid=conversation][data-thread=DDEMOSLACK]')
      const preview = item.getByTestId('conversation-preview')
      await poll(() => preview.textContent()).toBe(LONG_REPLY)
      return {
        ...(await preview.evaluate(
          (el, item) => {
            const li = item as HTMLElement
            const cs = getComputedStyle(li)
            const inner = li.clientWidth - Number.parseFloat(cs.paddingLeft) - Number.parseFloat(cs.paddingRight)
            return {
              inner,
              width: (el as HTMLElement).clientWidth,
              cut: el.scrollWidth > el.clientWidth,
              ellipsis: getComputedStyle(el).textOverflow,
              title: el.getAttribute('title'),
            }
          },
          await item.elementHandle(),
        )),
        lines: await textLines(preview),
        shown: await preview.evaluate(visibleChars),
      }
    }

    await page.setViewportSize(LAPTOP)
    const laptop = await measure()
    // The preview has the item's whole width (no badges beside it), on one line, with an ellipsis.
    expect(laptop.width).toBeGreaterThanOrEqual(laptop.inner - 1)
    expect(laptop.lines).toBe(1)
    expect(laptop.cut).toBe(true)
    expect(laptop.ellipsis).toBe('ellipsis')
    expect(laptop.title).toBe(LONG_REPLY)
    expect(laptop.shown).toBeGreaterThanOrEqual(30)
    await screenshot(page, 'layout-1024-list')

    await page.setViewportSize(WIDE)
    const wide = await measure()
    expect(wide.width).toBeGreaterThanOrEqual(wide.inner - 1)
    expect(wide.lines).toBe(1)
    expect(wide.shown).toBeGreaterThan(laptop.shown)
    await screenshot(page, 'layout-wide-list')
  })

  it('the page raised no script errors', () => {
    expect(pageErrors).toEqual([])
  })
})
