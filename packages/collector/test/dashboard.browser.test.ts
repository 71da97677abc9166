/**
 * The dashboard in real headless Chromium (Debian's package, driven by playwright-core),
 * against a real collector and a real bot (core tracker + @convotrack/express receivers).
 * Screenshots go to .artifacts/screenshots (git-ignored, kept by CI).
 */
import { createHmac } from 'node:crypto'
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gotoDrawn, openBrowserPage, requireChromium, screenshot } from './support/browser'
import { type ChatBot, startShopBot } from './support/chat-bot'

let collector: Collector
let bot: ChatBot
let browser: Browser
let page: Page

let pageErrors: string[] = []
// Generous for slow CI machines; a poll ends as soon as it holds.
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })
const shot = (name: string) => screenshot(page, name)

beforeAll(async () => {
  requireChromium()
  collector = await startCollector({ port: 0, webhookRetry: { attempts: 3, baseDelayMs: 50 } })
  bot = await startShopBot(collector)
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await bot?.close()
  await collector?.close()
})

describe('dashboard in headless Chromium', () => {
  it('records posted by a real tracker appear live in the firehose (no reload)', async () => {
    await page.goto(`${collector.url}/#/live`)
    await poll(() => page.getByTestId('live-state').textContent()).toContain('live')
    expect(await page.getByTestId('firehose-item').count()).toBe(0)

    expect(await bot.say('ada', 'hi there', { firstName: 'Ada', locale: 'en_GB', plan: 'pro' })).toEqual([
      'Hello! Ask me about your order.',
    ])
    expect(await bot.say('ada', 'blorp zzz')).toEqual(["Sorry, I didn't get that."])
    await bot.say('bob', 'where is my order?', { firstName: 'Bob', locale: 'de_DE', plan: 'free' })

    const items = page.getByTestId('firehose-item')
    await poll(() => items.count()).toBe(6)
    // Newest first.
    await poll(() => items.first().textContent()).toContain('Your order ships tomorrow.')
    const texts = await items.allTextContents()
    expect(texts.some((t) => t.includes('blorp zzz') && t.includes('NotHandled'))).toBe(true)
    expect(texts.some((t) => t.includes('hi there') && t.includes('greeting 97%'))).toBe(true)
    // The chart follows too: six messages in the last hour's per-minute bars.
    await poll(() => page.getByTestId('chart-total').textContent()).toBe('6 messages in the last 10 min')
    await shot('01-live-firehose')
  })

  it('the transcript shows text, buttons, intents and the raw JSON on demand', async () => {
    await page.getByTestId('firehose-item').filter({ hasText: 'blorp zzz' }).click()
    await poll(() => page.getByTestId('transcript-title').textContent()).toBe('ada')
    const bubbles = page.getByTestId('transcript-message')
    await poll(() => bubbles.count()).toBe(4)
    expect(await bubbles.nth(0).textContent()).toContain('hi there')
    expect(await bubbles.nth(2).getByTestId('intent').textContent()).toBe('NotHandled')
    expect(await bubbles.nth(3).locator('.chip').textContent()).toBe('Talk to a human')
    await bubbles.nth(2).getByTestId('raw-toggle').click()
    const raw = JSON.parse((await page.getByTestId('raw-json').textContent()) ?? '{}')
    expect(raw).toEqual({ text: 'blorp zzz', userId: 'ada', intent: { name: 'NotHandled' } })
    await shot('02-transcript')
  })

  it('the NotHandled report counts them, and updates live', async () => {
    await page.goto(`${collector.url}/#/not-handled`)
    const rows = page.getByTestId('not-handled-row')
    await poll(() => rows.count()).toBe(1)
    expect(await rows.first().getByTestId('not-handled-count').textContent()).toBe('1')
    await bot.say('cy', 'Blorp ZZZ')
    await bot.say('dee', 'qwerty?')
    await poll(() => rows.count()).toBe(2)
    await poll(() => rows.first().getByTestId('not-handled-count').textContent()).toBe('2')
    expect(await rows.first().getByTestId('not-handled-text').textContent()).toMatch(/blorp zzz/i)
    await shot('03-not-handled')
  })

  it('Pause delivers a signed webhook to the bot, and the bot stops answering', async () => {
    await page.goto(`${collector.url}/#/conversations/shop/ada`)
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    await page.getByTestId('pause-button').click()
    await poll(() => page.getByTestId('pause-state').textContent()).toContain('Paused')
    // The real receiver verified the signature and stored the pause.
    expect(await bot.tracker.pauses.isPaused('ada')).toBe(true)
    expect(await bot.say('ada', 'hello? anyone?')).toEqual([])
    // Other users are not paused.
    expect(await bot.say('bob', 'hi')).toEqual(['Hello! Ask me about your order.'])
    // The paused user's message is still tracked and shows up live.
    const bubbles = page.getByTestId('transcript-message')
    await poll(() => bubbles.last().textContent()).toContain('hello? anyone?')
    expect(await page.getByTestId('pause-button').textContent()).toBe('Unpause')

    // The operator answers as the bot.
    await page.getByTestId('operator-input').fill('Hi Ada, a human here. Let me check.')
    await page.getByTestId('operator-send').click()
    await poll(() => page.getByTestId('operator-note').textContent()).toBe('Sent as shop.')
    expect(bot.operatorMessages).toEqual([{ userId: 'ada', text: 'Hi Ada, a human here. Let me check.' }])
    await poll(() => bubbles.last().textContent()).toContain('a human here')
    await shot('04-paused-transcript')
  })

  it('Unpause restores the bot', async () => {
    await page.getByTestId('pause-button').click()
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    expect(await bot.tracker.pauses.isPaused('ada')).toBe(false)
    expect(await bot.say('ada', 'hello again')).toEqual(['Hello! Ask me about your order.'])
    await poll(() => page.getByTestId('transcript-message').last().textContent()).toContain(
      'Hello! Ask me about your order.',
    )
  })

  it('a failing pause webhook shows the error and keeps the state', async () => {
    collector.addBot({ name: 'offline', apiKey: 'offline-key', pauseWebhookUrl: 'http://127.0.0.1:9/pause' })
    await fetch(`${collector.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=offline-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'anyone?', userId: 'eve' }),
    })
    // Ada's transcript is still shown until eve's replaces it: wait, or the click pauses ada.
    await gotoDrawn(page, `${collector.url}/#/conversations/offline/eve`)
    await page.getByTestId('pause-button').click()
    await poll(() => page.getByTestId('takeover-alert').textContent()).toContain('failed after 3 attempt')
    expect(await page.getByTestId('pause-state').textContent()).toBe('Bot answering')
  })

  it('intents, events and audience views render from the same records', async () => {
    bot.tracker.logEvent({ type: 'revenueEvent', name: 'purchase', userId: 'ada', amount: 42.5 })
    bot.tracker.logEvent({ type: 'referralEvent', name: 'ref', userId: 'bob', source: 'ADS' })
    await bot.tracker.flush()
    await page.goto(`${collector.url}/#/intents`)
    await poll(() => page.getByTestId('intent-row').count()).toBeGreaterThanOrEqual(3)
    await page.goto(`${collector.url}/#/events`)
    await poll(() => page.getByTestId('revenue-total').textContent()).toBe('42.5')
    expect(await page.getByTestId('referrals').textContent()).toContain('ADS')
    await shot('05-events')
    await page.goto(`${collector.url}/#/audience`)
    await poll(() => page.getByTestId('segment').count()).toBeGreaterThanOrEqual(2)
    // Locale and plan are segments; a first name identifies a person and is not one.
    const fields = await page.getByTestId('segment').locator('h2').allTextContents()
    expect(fields).toEqual(expect.arrayContaining(['locale', 'plan']))
    expect(fields).not.toContain('firstName')
    expect(await page.getByTestId('segments').textContent()).toContain('de_DE')
    await shot('06-audience')
    await page.goto(`${collector.url}/#/live`)
    await shot('07-live-final')
  })

  it('connects a Messenger page from the form; its signed live traffic shows in the firehose', async () => {
    await page.goto(`${collector.url}/#/connect`)
    await poll(() => page.getByTestId('webhook-url').textContent()).toBe(`${collector.url}/messenger/webhook`)
    const form = page.getByTestId('connect-form')
    await form.locator('input[name=pageId]').fill('PAGE-77')
    await form.locator('input[name=appSecret]').fill('page-77-secret')
    await form.locator('input[name=verifyToken]').fill('tok-77')
    await form.locator('input[name=bot]').fill('fb-shop')
    await form.getByRole('button', { name: 'Connect' }).click()
    await poll(() => page.getByTestId('pages').textContent()).toContain('PAGE-77')
    expect(await page.getByTestId('pages').textContent()).not.toContain('page-77-secret')

    const challenge = await fetch(
      `${collector.url}/messenger/webhook?hub.mode=subscribe&hub.verify_token=tok-77&hub.challenge=42`,
    )
    expect(await challenge.text()).toBe('42')
    const raw = JSON.stringify({
      object: 'page',
      entry: [
        {
          id: 'PAGE-77',
          time: Date.now(),
          messaging: [
            {
              sender: { id: 'PSID-77' },
              recipient: { id: 'PAGE-77' },
              timestamp: Date.now(),
              message: { mid: 'm77', text: 'straight from Messenger' },
            },
          ],
        },
      ],
    })
    const signature = `sha256=${createHmac('sha256', 'page-77-secret').update(raw).digest('hex')}`
    const res = await fetch(`${collector.url}/messenger/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body: raw,
    })
    expect(res.status).toBe(200)
    await page.goto(`${collector.url}/#/live`)
    await poll(() => page.getByTestId('firehose-item').first().textContent()).toContain('straight from Messenger')
    expect(await page.getByTestId('firehose-item').first().textContent()).toContain('fb-shop')
    await shot('08-messenger-live')
  })

  it('the page raised no script errors', () => {
    expect(pageErrors).toEqual([])
  })
})
