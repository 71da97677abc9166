/**
 * A shared collector in real headless Chromium: an operator of one bot signs in, sees only
 * that bot, pauses a conversation and answers as the bot, finds it in the audit log, signs
 * out, and the back button shows nothing private.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBrowserPage, requireChromium } from './support/browser'
import { type ChatBot, startShopBot } from './support/chat-bot'
import { PASSWORD, passwordHash, say } from './support/team'

let collector: Collector
let bot: ChatBot
let browser: Browser
let page: Page
let pageErrors: string[] = []
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })

beforeAll(async () => {
  requireChromium()
  const hash = await passwordHash()
  collector = await startCollector({
    port: 0,
    log: false,
    demoBot: false,
    bots: [{ name: 'other', apiKey: 'other-key' }],
    auth: {
      users: [
        { name: 'olivia', passwordHash: hash, role: 'operator', bots: ['shop'] },
        { name: 'root', passwordHash: hash, role: 'admin', bots: ['*'] },
      ],
    },
    webhookRetry: { attempts: 2, baseDelayMs: 50 },
  })
  bot = await startShopBot(collector)
  await say(collector.url, 'other-key', 'zed', 'private to the other bot')
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await bot?.close()
  await collector?.close()
})

describe('a shared collector in headless Chromium', () => {
  it('the dashboard sends a stranger to the login page; a wrong password is refused', async () => {
    await page.goto(collector.url)
    await poll(() => new URL(page.url()).pathname).toBe('/login')
    expect(await page.content()).not.toContain('private to the other bot')
    await page.getByTestId('login-name').fill('olivia')
    await page.getByTestId('login-password').fill('not the password')
    await page.getByTestId('login-submit').click()
    await poll(() => page.getByTestId('login-msg').textContent()).toContain('wrong name or password')
  })

  it('an operator of one bot signs in and sees only that bot', async () => {
    await page.getByTestId('login-name').fill('olivia')
    await page.getByTestId('login-password').fill(PASSWORD)
    await page.getByTestId('login-submit').click()
    await poll(() => new URL(page.url()).pathname).toBe('/')
    await poll(() => page.getByTestId('live-state').textContent()).toContain('live')
    await poll(() => page.getByTestId('signed-in-as').textContent()).toContain('olivia · operator')
    expect(await bot.say('ada', 'hi there', { firstName: 'Ada' })).toEqual(['Hello! Ask me about your order.'])
    await poll(() => page.getByTestId('firehose-item').count()).toBe(2)
    await say(collector.url, 'other-key', 'zed', 'another secret of other')
    expect(await bot.say('ada', 'where is my order?')).toEqual(['Your order ships tomorrow.'])
    await poll(() => page.getByTestId('firehose-item').count()).toBe(4)
    const shown = await page.locator('body').textContent()
    expect(shown).not.toContain('private to the other bot')
    expect(shown).not.toContain('another secret of other')
    const options = await page.getByTestId('bot-filter').locator('option').allTextContents()
    expect(options).toEqual(['All bots', 'shop'])
    await page.goto(`${collector.url}/#/conversations`)
    await poll(() => page.getByTestId('conversations').textContent()).toContain('ada')
    expect(await page.getByTestId('conversations').textContent()).not.toContain('zed')
  })

  it('pauses the conversation and answers as the bot; both are in the audit log', async () => {
    await page.goto(`${collector.url}/#/conversations/shop/ada`)
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    await page.getByTestId('pause-button').click()
    await poll(() => page.getByTestId('pause-state').textContent()).toContain('Paused')
    expect(await bot.tracker.pauses.isPaused('ada')).toBe(true)
    await page.getByTestId('operator-input').fill('Hi Ada, Olivia here.')
    await page.getByTestId('operator-send').click()
    await poll(() => page.getByTestId('operator-note').textContent()).toBe('Sent as shop.')
    expect(bot.operatorMessages).toEqual([{ userId: 'ada', text: 'Hi Ada, Olivia here.' }])
    // The pause is marked in the transcript at its place (a question with no reply has its reason).
    await page.reload()
    await poll(() => page.getByTestId('takeover-mark').first().textContent()).toMatch(/^olivia paused the bot · /)
    // From the nav, as a person would: the audit view shows (not Live), its link lit.
    await page.getByRole('link', { name: 'Audit log' }).click()
    await poll(() => page.getByTestId('audit-row').count()).toBe(2)
    expect(await page.getByTestId('view-audit').isVisible()).toBe(true)
    expect(await page.getByTestId('view-live').isVisible()).toBe(false)
    expect(await page.locator('nav a.on').textContent()).toBe('Audit log')
    await page.reload()
    await poll(() => page.getByTestId('view-audit').isVisible()).toBe(true)
    // The view shows before its rows load: wait for them.
    await poll(() => page.getByTestId('audit-log').textContent()).toContain('olivia')
    const audit = await page.getByTestId('audit-log').textContent()
    expect(audit).toContain('operator-message')
    expect(audit).toContain('Hi Ada, Olivia here.')
    expect(audit).toContain('pause')
  })

  it('signs out; the back button shows nothing private', async () => {
    await page.goto(`${collector.url}/#/conversations/shop/ada`)
    await poll(() => page.getByTestId('transcript-message').count()).toBeGreaterThan(2)
    await page.getByTestId('sign-out').click()
    await poll(() => new URL(page.url()).pathname).toBe('/login')
    await page.goBack()
    await poll(async () => {
      const text =
        (await page
          .locator('body')
          .textContent()
          .catch(() => '')) ?? ''
      return !text.includes('where is my order') && !text.includes('Olivia here')
    }).toBe(true)
    await poll(() => new URL(page.url()).pathname).toBe('/login')
    const status = await page.evaluate(async () => (await fetch('/api/conversations')).status)
    expect(status).toBe(401)
    expect(pageErrors).toEqual([])
  })

  it('an admin erases a user with the live feed open: their lines leave the firehose at once', async () => {
    await page.goto(`${collector.url}/login`)
    await page.getByTestId('login-name').fill('root')
    await page.getByTestId('login-password').fill(PASSWORD)
    await page.getByTestId('login-submit').click()
    await poll(() => new URL(page.url()).pathname).toBe('/')
    await poll(() => page.getByTestId('live-state').textContent()).toContain('live')
    await poll(() => page.getByTestId('firehose-item').filter({ hasText: 'where is my order' }).count()).toBe(1)
    expect(await page.getByTestId('firehose-item').filter({ hasText: 'private to the other bot' }).count()).toBe(1)
    // From the signed-in page itself: same origin, session cookie.
    const answer = await page.evaluate(async () => {
      const res = await fetch('/api/users/ada?bot=shop', { method: 'DELETE' })
      return { status: res.status, body: await res.json() }
    })
    expect(answer.status).toBe(200)
    expect(answer.body.removed).toBeGreaterThanOrEqual(4)
    await poll(() => page.getByTestId('firehose-item').filter({ hasText: 'ada' }).count()).toBe(0)
    expect(await page.getByTestId('firehose-item').filter({ hasText: 'private to the other bot' }).count()).toBe(1)
    await page.reload()
    await poll(() => page.getByTestId('live-state').textContent()).toContain('live')
    await poll(() => page.getByTestId('firehose-item').count()).toBeGreaterThan(0)
    expect(await page.locator('body').textContent()).not.toContain('where is my order')
    expect(pageErrors).toEqual([])
  })
})
