/**
 * The Handoffs view in real headless Chromium, on a collector with sign-in and a real bot: the
 * queue fills live as a user asks for a person, an operator claims from the list (the bot is
 * paused), writes a note and releases from the transcript (the bot answers again); a viewer
 * sees the queue but no Claim and no notes box.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gotoDrawn, holdRequests, openBrowserPage, requireChromium, screenshot } from './support/browser'
import { type ChatBot, startShopBot } from './support/chat-bot'
import { PASSWORD, passwordHash } from './support/team'

let collector: Collector
let bot: ChatBot
let browser: Browser
let page: Page
let pageErrors: string[] = []
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 10_000, interval: 50 })

async function signIn(p: Page, name: string) {
  await p.goto(collector.url)
  await poll(() => new URL(p.url()).pathname).toBe('/login')
  await p.getByTestId('login-name').fill(name)
  await p.getByTestId('login-password').fill(PASSWORD)
  await p.getByTestId('login-submit').click()
  await poll(() => new URL(p.url()).pathname).toBe('/')
  await poll(() => p.getByTestId('live-state').textContent()).toContain('live')
}

beforeAll(async () => {
  requireChromium()
  const hash = await passwordHash()
  collector = await startCollector({
    port: 0,
    log: false,
    demoBot: false,
    auth: {
      users: [
        { name: 'olivia', passwordHash: hash, role: 'operator', bots: ['*'] },
        { name: 'vic', passwordHash: hash, role: 'viewer', bots: ['*'] },
      ],
    },
    webhookRetry: { attempts: 2, baseDelayMs: 50 },
  })
  bot = await startShopBot(collector)
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await bot?.close()
  await collector?.close()
})

describe('the Handoffs view', () => {
  it('the queue updates live: a user asking for a person shows up with why and a waiting time that counts', async () => {
    await signIn(page, 'olivia')
    await page.goto(`${collector.url}/#/handoffs`)
    await poll(() => page.getByTestId('handoffs-waiting').textContent()).toContain('Nobody is waiting')
    await bot.say('ada', 'hi', { firstName: 'Ada' })
    await bot.say('ada', 'Can I talk to a human?')
    const row = page.getByTestId('handoff-row').filter({ hasText: 'ada' })
    await poll(() => row.count()).toBe(1)
    expect(await row.getByTestId('handoff-reason').textContent()).toBe('asked for a person')
    expect(await row.textContent()).toContain('Can I talk to a human?')
    const first = await row.getByTestId('waiting-time').textContent()
    await poll(() => row.getByTestId('waiting-time').textContent()).not.toBe(first)
    await screenshot(page, 'handoffs-waiting')
  })

  it('claim from the list opens the transcript assigned to me and pauses the bot', async () => {
    await page.getByTestId('handoff-row').filter({ hasText: 'ada' }).getByTestId('claim-button').click()
    await poll(() => new URL(page.url()).hash).toBe('#/conversations/shop/ada')
    await poll(() => page.getByTestId('handoff-assignee').textContent()).toBe('Assigned to you')
    await poll(() => page.getByTestId('pause-state').textContent()).toContain('Paused')
    expect(await bot.tracker.isPaused('ada')).toBe(true)
    expect(await bot.say('ada', 'hello?')).toEqual([])
    await page.goto(`${collector.url}/#/handoffs`)
    await poll(() => page.getByTestId('handoffs-mine').textContent()).toContain('ada')
  })

  it('a note added in the transcript shows there and is never sent to the user; release resumes the bot', async () => {
    await gotoDrawn(page, `${collector.url}/#/conversations/shop/ada`)
    await page.getByTestId('note-input').fill('Wants a refund')
    // Another operator's note on this conversation arrives live while this one types: the panel
    // renders again with it, and the draft, its focus and caret stay.
    const other = await page.request.post(`${collector.url}/api/notes`, {
      data: { bot: 'shop', thread: 'ada', text: 'Order 42 was shipped' },
      headers: { origin: collector.url },
    })
    expect(other.status()).toBe(201)
    await poll(() => page.getByTestId('note').allTextContents()).toEqual([
      expect.stringContaining('Order 42 was shipped'),
    ])
    expect(await page.getByTestId('note-input').inputValue()).toBe('Wants a refund')
    await page.keyboard.type(' for order 42')
    await page.getByTestId('note-add').click()
    await poll(() => page.getByTestId('note').allTextContents()).toEqual([
      expect.stringContaining('Order 42 was shipped'),
      expect.stringContaining('Wants a refund for order 42'),
    ])
    expect(await page.getByTestId('note-input').inputValue()).toBe('')
    expect(bot.operatorMessages).toEqual([])
    await screenshot(page, 'handoff-transcript')
    await page.getByTestId('release-button').click()
    await poll(() => page.getByTestId('handoff-assignee').textContent()).toBe('Not in the handoff queue')
    await poll(() => page.getByTestId('pause-state').textContent()).toContain('Bot answering')
    expect(await bot.tracker.isPaused('ada')).toBe(false)
    expect(await bot.say('ada', 'hello')).toEqual(['Hello! Ask me about your order.'])
  })

  it('a viewer sees the queue but no Claim and no notes box', async () => {
    await bot.say('bo', 'agent please')
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const viewer = await context.newPage()
    try {
      await signIn(viewer, 'vic')
      await viewer.goto(`${collector.url}/#/handoffs`)
      const row = viewer.getByTestId('handoff-row').filter({ hasText: 'bo' })
      await poll(() => row.count()).toBe(1)
      expect(await viewer.getByTestId('claim-button').count()).toBe(0)
      await gotoDrawn(viewer, `${collector.url}/#/conversations/shop/bo`)
      await poll(() => viewer.getByTestId('handoff-assignee').textContent()).toContain('Waiting for a person')
      expect(await viewer.getByTestId('claim-button').count()).toBe(0)
      expect(await viewer.getByTestId('note-input').count()).toBe(0)
    } finally {
      await context.close()
    }
    expect(pageErrors).toEqual([])
  })

  it('switching transcripts: the one being left is inert until the next is shown, and a slower earlier open never replaces a later one', async () => {
    const inert = () => page.evaluate(() => (document.querySelector('#transcript') as HTMLElement).inert)
    await gotoDrawn(page, `${collector.url}/#/conversations/shop/ada`)
    // The conversations list loads first: ada's transcript is inert from the moment the URL names bo's.
    const list = await holdRequests(page, (url) => url.pathname.endsWith('/api/conversations'))
    try {
      await page.evaluate(() => {
        location.hash = '#/conversations/shop/bo'
      })
      await poll(inert).toBe(true)
      expect(await page.getByTestId('thread-id').textContent()).toBe('ada')
    } finally {
      await list.stop()
    }
    await poll(() => page.evaluate(() => document.body.dataset.loaded === location.hash)).toBe(true)
    expect(await page.getByTestId('thread-id').textContent()).toBe('bo')
    expect(await inert()).toBe(false)
    await gotoDrawn(page, `${collector.url}/#/conversations/shop/ada`)
    // bo's transcript is answered only when the test says (a slow network), ada's at once.
    const isBo = (url: URL) => url.pathname.endsWith('/api/transcript') && url.searchParams.get('thread') === 'bo'
    const hold = await holdRequests(page, isBo)
    try {
      await page.evaluate(() => {
        location.hash = '#/conversations/shop/bo'
      })
      // Meanwhile ada's transcript is still shown: inert, so a message typed now cannot go to ada.
      await poll(inert).toBe(true)
      expect(await page.getByTestId('thread-id').textContent()).toBe('ada')
      expect(await page.evaluate(() => document.querySelector('#transcript')?.getAttribute('aria-busy'))).toBe('true')
      // The operator goes back to ada before bo's answer comes: ada's is shown, and stays when bo's arrives.
      await page.evaluate(() => {
        location.hash = '#/conversations/shop/ada'
      })
      await poll(inert).toBe(false)
      const late = page.waitForResponse((res) => isBo(new URL(res.url())))
      hold.release()
      await late
      // bo's route ends after its answer (`data-routing` back to 0) without drawing or marking a load.
      await poll(() => page.evaluate(() => document.body.dataset.routing)).toBe('0')
      expect(await page.evaluate(() => document.body.dataset.loaded === location.hash)).toBe(true)
      expect(await page.getByTestId('thread-id').textContent()).toBe('ada')
      expect(new URL(page.url()).hash).toContain('#/conversations/shop/ada')
      expect(await page.evaluate(() => document.querySelector('#transcript')?.hasAttribute('aria-busy'))).toBe(false)
    } finally {
      await hold.stop()
    }
    expect(pageErrors).toEqual([])
  })
})
