/**
 * The dashboard's views in real headless Chromium (Debian's package, driven by playwright-core)
 * against a real collector: the chart's range, labelled counts that follow the bot filter,
 * a user's threads grouped, one name per Slack conversation, the operator's mark, older
 * messages loaded on scroll, raw JSON scrolled into view and long ids shown whole.
 */
import { type Collector, normalizeRecord, startCollector } from '@convotrack/collector'
import type { Platform, RecordType } from '@convotrack/core'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBrowserPage, requireChromium, screenshot } from './support/browser'
import { type ChatBot, startShopBot } from './support/chat-bot'

const MINUTE = 60_000

let collector: Collector
let bot: ChatBot
let browser: Browser
let page: Page
let pageErrors: string[] = []
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })
const shot = (name: string) => screenshot(page, name)

/** Posts a record to /track as a tracker would. */
async function track(apiKey: string, platform: Platform, type: RecordType, body: unknown): Promise<void> {
  const res = await fetch(`${collector.url}/track?platform=${platform}&type=${type}&v=11.1.0-rest&apiKey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status, await res.clone().text()).toBeLessThan(300)
}

/** Stores a universal record straight in the store, with the arrival time given (the past). */
function storeAt(bot: string, receivedAt: number, body: { text: string; userId: string; conversationId?: string }) {
  return collector.store.add(
    { bot, platform: 'universal', type: 'incoming', v: '11.1.0-rest', raw: JSON.stringify(body), receivedAt },
    normalizeRecord('universal', 'incoming', body),
  )
}

const stat = async (bot?: string) =>
  (await (await fetch(`${collector.url}/api/stats${bot ? `?bot=${bot}` : ''}`)).json()) as {
    records: number
    messages: number
  }

/** The ids of the newest messages stored (all bots). */
const recentIds = async () =>
  ((await (await fetch(`${collector.url}/api/messages?limit=5`)).json()) as { id: number }[]).map((m) => m.id)

beforeAll(async () => {
  requireChromium()
  collector = await startCollector({ port: 0, webhookRetry: { attempts: 3, baseDelayMs: 50 } })
  bot = await startShopBot(collector)
  collector.addBot({ name: 'helpdesk', apiKey: 'helpdesk-key' })
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await bot?.close()
  await collector?.close()
})

describe('dashboard views in headless Chromium', () => {
  it('fits the chart to the data: from the oldest message in range to now, per minute or per hour', async () => {
    const now = Date.now()
    const old = now - 45 * MINUTE
    await storeAt('helpdesk', old, { text: 'from 45 minutes ago', userId: 'cus_old' })
    await bot.say('ann', 'hello')
    await page.goto(`${collector.url}/#/live`)
    const svg = page.getByTestId('chart-svg')
    // Per minute: the first bar is the old message's minute, the last is now.
    await poll(async () => Number(await svg.getAttribute('data-start'))).toBe(Math.floor(old / MINUTE) * MINUTE)
    const end = Number(await svg.getAttribute('data-end'))
    expect(end).toBeGreaterThanOrEqual(Math.floor(now / MINUTE) * MINUTE)
    expect(Number(await svg.getAttribute('data-buckets'))).toBe((end - Math.floor(old / MINUTE) * MINUTE) / MINUTE + 1)
    // The oldest bar is drawn at the left edge of the plot, not lost off the chart.
    const xs = await page
      .locator('[data-testid=chart-svg] rect[data-part]')
      .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('x'))))
    expect(Math.min(...xs)).toBeLessThan(40)
    expect(await page.getByTestId('chart-total').textContent()).toMatch(/^3 messages in the last 4[67] min$/)
    // Per hour: a few hours, at least six bars.
    await page.getByRole('button', { name: 'per hour' }).click()
    await poll(async () => Number(await svg.getAttribute('data-buckets'))).toBe(6)
    expect(await page.getByTestId('chart-total').textContent()).toBe('3 messages in the last 6 h')
    await page.getByRole('button', { name: 'per minute' }).click()
    await shot('10-chart-fitted')
  })

  it('shows one set of labelled numbers, and they follow the bot filter', async () => {
    await track('helpdesk-key', 'universal', 'incoming', { text: 'my parcel is late', userId: 'cus_dana' })
    await page.goto(`${collector.url}/#/live`)
    const all = await stat()
    await poll(() => page.getByTestId('count-records').textContent()).toBe(String(all.records))
    expect(await page.getByTestId('counts-scope').textContent()).toBe('All bots')
    expect(await page.getByTestId('count-messages').textContent()).toBe(String(all.messages))
    expect(await page.getByTestId('chart-total').textContent()).toMatch(new RegExp(`^${all.messages} messages`))

    await page.getByTestId('bot-filter').selectOption('helpdesk')
    const helpdesk = await stat('helpdesk')
    expect(helpdesk.records).toBeLessThan(all.records)
    await poll(() => page.getByTestId('counts-scope').textContent()).toBe('Bot helpdesk')
    await poll(() => page.getByTestId('count-records').textContent()).toBe(String(helpdesk.records))
    expect(await page.getByTestId('count-messages').textContent()).toBe(String(helpdesk.messages))
    // The chart counts the same messages (all of them are within its range).
    await poll(() => page.getByTestId('chart-total').textContent()).toMatch(
      new RegExp(`^${helpdesk.messages} messages`),
    )
    // A new record of another bot changes neither.
    await bot.say('ann', 'where is my order?')
    await poll(async () => (await stat()).messages).toBe(all.messages + 2)
    // The debounced refresh after those live messages has finished (the page marks it), so the
    // numbers below are the ones it drew, not the ones from before the messages came.
    const newest = Math.max(...(await recentIds()))
    await poll(() => page.evaluate(() => Number(document.body.dataset.refreshedThrough ?? 0))).toBeGreaterThanOrEqual(
      newest,
    )
    expect(await page.getByTestId('count-records').textContent()).toBe(String(helpdesk.records))
    await page.getByTestId('bot-filter').selectOption('')
    await poll(() => page.getByTestId('count-messages').textContent()).toBe(String(all.messages + 2))
  })

  it('groups a user’s threads under the user, labelled; route() loads the list once', async () => {
    await track('helpdesk-key', 'universal', 'incoming', {
      text: 'ticket: refund please',
      userId: 'cus_dana',
      conversationId: 'T-1004',
    })
    await track('helpdesk-key', 'universal', 'outgoing', {
      text: 'Refund on its way',
      userId: 'cus_dana',
      conversationId: 'T-1004',
    })
    await track('helpdesk-key', 'universal', 'incoming', { text: 'hey', userId: 'bob', conversationId: 'chat-bob' })
    const listLoads: string[] = []
    page.on('request', (r) => {
      if (r.url().includes('/api/conversations')) listLoads.push(r.url())
    })
    await page.goto(`${collector.url}/#/conversations/helpdesk/T-1004`)
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('cus_dana · T-1004')
    expect(listLoads).toHaveLength(1)

    const dana = page.locator('[data-testid=conversation-group][data-user=cus_dana]')
    await poll(() => dana.count()).toBe(1)
    expect(await dana.getByTestId('group-size').textContent()).toBe('2 conversations · 3 messages')
    const threads = dana.getByTestId('conversation-name')
    expect(await threads.allTextContents()).toEqual(['T-1004', 'cus_dana no conversation id'])
    // A user with one thread under a conversation id: one row, named user · thread.
    const bob = page.locator('[data-testid=conversation][data-thread=chat-bob]')
    expect(await bob.getByTestId('conversation-name').textContent()).toBe('bob · chat-bob')
    expect(await page.locator('[data-testid=conversation-group][data-user=bob]').count()).toBe(0)
    // The open thread is highlighted inside its group.
    expect(await dana.locator('[data-testid=conversation].on').getAttribute('data-thread')).toBe('T-1004')
    await shot('11-grouped-conversations')
  })

  it('names a Slack conversation the same on incoming and outgoing rows', async () => {
    const team = { id: 'T0TEAM', name: 'Acme' }
    await track('helpdesk-key', 'slack', 'incoming', {
      team,
      bot: { id: 'B0BOT' },
      message: { type: 'message', channel: 'D0CHANNEL', user: 'U0ANN', text: 'deploy status?', ts: '1.000100' },
    })
    await track('helpdesk-key', 'slack', 'outgoing', {
      team,
      bot: { id: 'B0BOT' },
      message: { type: 'message', channel: 'D0CHANNEL', text: 'all green' },
    })
    await page.goto(`${collector.url}/#/live`)
    const rows = page.locator('[data-testid=firehose-item][data-thread=D0CHANNEL]')
    await poll(() => rows.count()).toBe(2)
    expect(await rows.getByTestId('firehose-who').allTextContents()).toEqual(['U0ANN · D0CHANNEL', 'U0ANN · D0CHANNEL'])
    // Live too: a reply arriving now borrows the thread's user.
    await track('helpdesk-key', 'slack', 'outgoing', {
      team,
      bot: { id: 'B0BOT' },
      message: { type: 'message', channel: 'D0CHANNEL', text: 'deployed 3 min ago' },
    })
    await poll(() => rows.count()).toBe(3)
    expect(await rows.first().getByTestId('firehose-who').textContent()).toBe('U0ANN · D0CHANNEL')
  })

  it('tells the bot from the platform in the transcript header, with no second badge when they read the same', async () => {
    collector.addBot({ name: 'slack', apiKey: 'slack-key' })
    const team = { id: 'T0TEAM', name: 'Acme' }
    await track('slack-key', 'slack', 'incoming', {
      team,
      bot: { id: 'B0SLACK' },
      message: { type: 'message', channel: 'D0SAME', user: 'U0BEA', text: 'status?', ts: '2.000100' },
    })
    await page.goto(`${collector.url}/#/conversations/slack/D0SAME`)
    const ids = page.getByTestId('transcript-ids')
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('U0BEA · D0SAME')
    // Bot `slack` on Slack: the bot's name once, as plain text, and no platform badge repeating it.
    expect(await ids.getByTestId('transcript-bot').textContent()).toBe('slack')
    expect(await ids.getByTestId('transcript-bot').getAttribute('title')).toBe('Bot slack')
    expect(await ids.getByTestId('transcript-platform').count()).toBe(0)
    expect(await ids.locator('.badge').count()).toBe(0)
    expect((await ids.textContent())?.match(/slack/gi)).toHaveLength(1)
    // The same in the list (all bots: the bot's badge, no platform badge repeating it) and the firehose.
    const row = page.locator('[data-testid=conversation][data-thread=D0SAME]')
    expect(await row.locator('.tags .badge:not(.count)').allTextContents()).toEqual(['slack'])
    expect(
      await page
        .locator('[data-testid=conversation][data-thread=D0CHANNEL] .tags .badge:not(.count)')
        .allTextContents(),
    ).toEqual(['helpdesk', 'slack'])
    const fire = page.locator('[data-testid=firehose-item][data-thread=D0SAME]')
    await poll(() => fire.count()).toBe(1)
    expect(await fire.locator('.badge').allTextContents()).toEqual(['slack'])
    // A bot named otherwise: its name as plain text, the platform as the one badge.
    await page.goto(`${collector.url}/#/conversations/helpdesk/D0CHANNEL`)
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('U0ANN · D0CHANNEL')
    expect(await ids.getByTestId('transcript-bot').textContent()).toBe('helpdesk')
    expect(await ids.locator('.badge').allTextContents()).toEqual(['slack'])
    expect(await ids.getByTestId('transcript-platform').getAttribute('title')).toBe('platform slack')
    await shot('14-transcript-bot-and-platform')
  })

  it('marks the operator’s message as sent by a person, live and after a reload', async () => {
    await bot.say('cara', 'hello')
    await page.goto(`${collector.url}/#/conversations/shop/cara`)
    const bubbles = page.getByTestId('transcript-message')
    await poll(() => bubbles.count()).toBe(2)
    await page.getByTestId('operator-input').fill('Hello Cara, Sam from support here.')
    await page.getByTestId('operator-send').click()
    await poll(() => bubbles.count()).toBe(3)
    const last = bubbles.last()
    await poll(() => last.getByTestId('operator-mark').count()).toBe(1)
    expect(await last.getByTestId('operator-mark').textContent()).toBe('operator')
    // The bot's own reply has no mark, even with the same direction.
    expect(await bubbles.nth(1).getByTestId('operator-mark').count()).toBe(0)
    // The mark is the collector's, not this page's memory: it is there after a reload.
    await page.reload()
    await poll(() => bubbles.count()).toBe(3)
    expect(await bubbles.last().getByTestId('operator-mark').count()).toBe(1)
    expect(await page.getByTestId('bubbles').getByTestId('operator-mark').count()).toBe(1)
    await page.goto(`${collector.url}/#/live`)
    await poll(() =>
      page.getByTestId('firehose-item').filter({ hasText: 'Sam from support' }).getByTestId('operator-mark').count(),
    ).toBe(1)
    await page.goto(`${collector.url}/#/conversations/shop/cara`)
    await shot('12-operator-mark')
  })

  it('loads older messages on scroll, in order, until the first one', async () => {
    const thread = `cus_${'long-'.repeat(14)}id` // a long id, shown whole
    const start = Date.now() - 30 * MINUTE
    for (let i = 1; i <= 450; i++) await storeAt('helpdesk', start + i, { text: `line ${i}`, userId: thread })
    await page.goto(`${collector.url}/#/conversations/helpdesk/${encodeURIComponent(thread)}`)
    const bubbles = page.getByTestId('transcript-message')
    await poll(() => bubbles.count()).toBe(200)
    expect(await bubbles.first().textContent()).toContain('line 251')
    expect(await page.getByTestId('transcript-count').textContent()).toBe('latest 200 messages · scroll up for older')
    const scrollTop = () => page.getByTestId('bubbles').evaluate((el) => (el.scrollTop = 0))
    await scrollTop()
    await poll(() => bubbles.count()).toBe(400)
    // The reader stays where they were: the message they saw first is still in view.
    expect(await bubbles.nth(200).locator('.bubble').textContent()).toBe('line 251')
    const seen = await bubbles.nth(200).boundingBox()
    const pane = await page.getByTestId('bubbles').boundingBox()
    expect(seen && pane && seen.y >= pane.y - 1 && seen.y < pane.y + pane.height).toBe(true)
    await scrollTop()
    await poll(() => bubbles.count()).toBe(450)
    expect(await page.getByTestId('load-older').count()).toBe(0)
    expect(await page.getByTestId('transcript-count').textContent()).toBe('450 messages')
    const texts = (await bubbles.locator('.bubble').allTextContents()).map((t) => Number(t.replace('line ', '')))
    expect(texts).toEqual(Array.from({ length: 450 }, (_, i) => i + 1))
    const ids = await bubbles.evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.id)))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))

    // The long thread id is shown whole (not clipped) and can be copied.
    const idEl = page.getByTestId('thread-id')
    expect(await idEl.textContent()).toBe(thread)
    const box = await idEl.boundingBox()
    const head = await page.locator('.transcript-head').boundingBox()
    expect(box && head && box.x + box.width <= head.x + head.width).toBe(true)
    expect(await page.getByTestId('copy-thread').getAttribute('title')).toBe(`Copy ${thread}`)
    await shot('13-older-messages')
  })

  it('scrolls the raw JSON into view when it opens below the fold', async () => {
    const bubbles = page.getByTestId('bubbles')
    await bubbles.evaluate((el) => {
      el.scrollTop = el.scrollHeight
    })
    await page.getByTestId('transcript-message').last().getByTestId('raw-toggle').click()
    const raw = page.getByTestId('raw-json')
    await poll(() => raw.count()).toBe(1)
    expect(JSON.parse((await raw.textContent()) ?? '{}')).toMatchObject({ text: 'line 450' })
    await poll(async () => {
      const r = await raw.boundingBox()
      const pane = await bubbles.boundingBox()
      return !!r && !!pane && r.y + r.height <= pane.y + pane.height + 1 && r.y >= pane.y - 1
    }).toBe(true)
  })

  it('redraws the chart once per burst of resize events', async () => {
    // A page of its own on a paused clock: the debounce's timer fires only when the test runs the
    // clock, and the page counts its own timeline requests as it makes them.
    const own = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    try {
      await own.addInitScript(() => {
        const w = window as unknown as { timelineRequests: number }
        w.timelineRequests = 0
        const fetch = window.fetch.bind(window)
        window.fetch = (input, init) => {
          if (String(input).includes('api/reports/timeline')) w.timelineRequests++
          return fetch(input, init)
        }
      })
      await own.clock.install()
      await own.clock.pauseAt(Date.now() + 1000)
      await own.goto(`${collector.url}/#/live`)
      const requests = () => own.evaluate(() => (window as unknown as { timelineRequests: number }).timelineRequests)
      // The first load has drawn the chart: its one request is done.
      await poll(() => own.getByTestId('chart-svg').count()).toBe(1)
      expect(await requests()).toBe(1)
      await own.getByTestId('chart-svg').evaluate((el) => el.setAttribute('data-old', ''))
      await own.evaluate(() => {
        for (let i = 0; i < 30; i++) window.dispatchEvent(new Event('resize'))
      })
      expect(await requests()).toBe(1) // nothing redraws during the burst
      await own.clock.runFor(1000) // well past the 200 ms debounce: every due timer has fired
      expect(await requests()).toBe(2)
      // The one redraw has replaced the chart.
      await poll(() => own.locator('[data-testid=chart-svg]:not([data-old])').count()).toBe(1)
      expect(await requests()).toBe(2)
    } finally {
      await own.close()
    }
  })

  it('a bot without a pause webhook says why Pause is off; an event is badged as one; another bot’s filter closes its transcript', async () => {
    await track('helpdesk-key', 'universal', 'incoming', { text: 'need help', userId: 'hd-1' })
    await track('helpdesk-key', 'generic', 'event', { type: 'customEvent', name: 'clicked', userId: 'hd-1' })
    await page.goto(`${collector.url}/#/conversations/helpdesk/hd-1`)
    await poll(() => page.getByTestId('pause-unavailable').textContent()).toBe(
      'Pause needs a pauseWebhookUrl for this bot',
    )
    expect(await page.getByTestId('pause-button').isDisabled()).toBe(true)
    // The event's badge says event, not the `generic` it was posted with.
    await poll(() => page.getByTestId('event-badge').count()).toBe(1)
    expect(await page.locator('#bubbles .badge', { hasText: 'generic' }).count()).toBe(0)
    // Nor does the header: the conversation's platform is its latest message's, not the event's.
    expect(await page.getByTestId('transcript-platform').textContent()).toBe('universal')
    await page.selectOption('#bot-filter', 'shop')
    await poll(() => page.evaluate(() => location.hash)).toBe('#/conversations')
    await page.selectOption('#bot-filter', '')
  })

  it('the page raised no script errors', () => {
    expect(pageErrors).toEqual([])
  })
})
