/**
 * End to end: two collector PROCESSES (the real CLI) on one real PostgreSQL, two real bots each
 * tracking into a different instance, trackers posting to both, and one dashboard in headless
 * Chromium (talking to one instance) showing both conversations live. The database is restarted
 * mid-run; every record a tracker saw acknowledged is stored exactly once, and the operator flow
 * works through the instance the browser talks to.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createTracker, generateWebhookSecret, type Tracker } from '@convotrack/core'
import pg from 'pg'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freeStablePort } from '../../../test/support/stable-port'
import { openBrowserPage, requireChromium, screenshot } from './support/browser'
import { type ChatBot, startChatBot } from './support/chat-bot'
import { type PostgresServer, startPostgres } from './support/postgres'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

let server: PostgresServer
let db: string
const collectors: Array<{ url: string; child: ChildProcess; output: () => string }> = []
let shop: ChatBot
let help: ChatBot
let browser: Browser
let page: Page
let pageErrors: string[] = []

const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 })
const shot = (name: string) => screenshot(page, name)

/** `convotrack-collector --db postgres://…` as a child process; resolves once it listens. */
async function startCollectorProcess(port: number, bots: string[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'packages/collector/src/cli.ts', '--port', String(port), ...bots.flatMap((b) => ['--bot', b])],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATABASE_URL: db } },
  )
  let out = ''
  child.stderr?.on('data', (d) => {
    out += d
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m?.[1] && out.includes('  bots')) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`collector exited early (${code}):\n${out}`)))
  })
  const entry = { url, child, output: () => out }
  collectors.push(entry)
  return entry
}

async function storedRecords(): Promise<Array<{ bot: string; raw: string }>> {
  const client = new pg.Client({ connectionString: db })
  await client.connect()
  try {
    return (await client.query('SELECT bot, raw FROM convotrack_records ORDER BY id')).rows
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  requireChromium()
  server = await startPostgres()
  db = await server.createDatabase()
  const [portA, portB] = [await freeStablePort(), await freeStablePort()]
  const shopSecret = generateWebhookSecret()
  const helpSecret = generateWebhookSecret()
  // The shop bot tracks into instance A, the help bot into instance B.
  shop = await startChatBot({ trackingUrl: `http://127.0.0.1:${portA}`, apiKey: 'shop-key', webhookSecret: shopSecret })
  help = await startChatBot({ trackingUrl: `http://127.0.0.1:${portB}`, apiKey: 'help-key', webhookSecret: helpSecret })
  const bots = [
    `name=shop,apiKey=shop-key,pauseWebhookUrl=${shop.pauseWebhookUrl},operatorMessageUrl=${shop.operatorMessageUrl},webhookSecret=${shopSecret}`,
    `name=help,apiKey=help-key,pauseWebhookUrl=${help.pauseWebhookUrl},operatorMessageUrl=${help.operatorMessageUrl},webhookSecret=${helpSecret}`,
  ]
  await Promise.all([startCollectorProcess(portA, bots), startCollectorProcess(portB, bots)])
  ;({ browser, page, pageErrors } = await openBrowserPage({ defaultTimeout: 15_000 }))
})

afterAll(async () => {
  await browser?.close()
  await shop?.close()
  await help?.close()
  for (const c of collectors)
    await new Promise<void>((resolve) => {
      if (c.child.exitCode !== null) return resolve()
      c.child.once('exit', () => resolve())
      c.child.kill('SIGTERM')
    })
  await server?.destroy()
})

describe('two collector processes on one PostgreSQL, one dashboard', () => {
  it('the dashboard on instance B shows both bots’ conversations live, whichever instance stored them', async () => {
    const [a, b] = collectors as [(typeof collectors)[0], (typeof collectors)[0]]
    expect(a.output()).toContain('database   PostgreSQL postgres://postgres@127.0.0.1')
    await page.goto(`${b.url}/#/live`)
    await poll(() => page.getByTestId('live-state').textContent()).toContain('live')
    expect(await shop.say('ada', 'hi there')).toEqual(['Hello! Ask me about your order.']) // → instance A
    expect(await help.say('bob', 'where is my order?')).toEqual(['Your order ships tomorrow.']) // → instance B
    const items = page.getByTestId('firehose-item')
    await poll(() => items.count()).toBe(4)
    const texts = await items.allTextContents()
    expect(texts.filter((t) => t.includes('shop'))).toHaveLength(2)
    expect(texts.filter((t) => t.includes('help'))).toHaveLength(2)
    expect(texts.some((t) => t.includes('hi there'))).toBe(true)
    expect(texts.some((t) => t.includes('Your order ships tomorrow.'))).toBe(true)
    await shot('pg-01-two-instances-live')
  })

  it('PostgreSQL restarted under load: trackers hold and retry, every acknowledged record is stored once and shown live once', async () => {
    const [a, b] = collectors as [(typeof collectors)[0], (typeof collectors)[0]]
    const acked: string[] = []
    const retried: string[] = []
    const trackers: Tracker[] = [a, b].map((c) => {
      const t = createTracker({
        apiKey: c === a ? 'shop-key' : 'help-key',
        baseUrl: c.url,
        retry: { minDelayMs: 100, maxDelayMs: 1_000, maxAttempts: 1_000 },
      })
      t.on('sent', (record) => acked.push((JSON.parse(record.body) as { text: string }).text))
      t.on('retry', (error) => retried.push(error.message))
      return t
    })
    const log = (i: number) => {
      for (const [n, t] of trackers.entries())
        t.universal.logIncoming({ text: `load ${n}.${String(i).padStart(2, '0')}`, userId: `load-${n}-${i % 4}` })
    }
    for (let i = 0; i < 10; i++) log(i)
    await server.stop() // fast shutdown: open sessions are cut, like a crash-restart under load
    try {
      for (let i = 10; i < 30; i++) log(i)
      const down = await fetch(`${a.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'probe', userId: 'probe' }),
      }).catch((e: Error) => {
        throw new Error(`collector A did not answer (${e.message}); its output:\n${a.output()}`)
      })
      expect(down.status).toBe(503)
      expect(down.headers.get('retry-after')).toBe('1')
      // Down until the trackers' attempts have met the outage (an event, not a delay).
      await poll(() => retried.length).toBeGreaterThan(0)
    } finally {
      await server.start()
    }
    for (let i = 30; i < 40; i++) log(i)
    await Promise.all(trackers.map((t) => t.flush(30_000)))
    for (const c of [a, b]) expect(c.child.exitCode, c.output()).toBeNull()
    for (const t of trackers) expect(t.stats()).toMatchObject({ sent: 40, failed: 0, dropped: 0 })
    expect(retried.length).toBeGreaterThan(0) // the outage was real
    expect(acked).toHaveLength(80)

    // Every acknowledged record is in the database exactly once.
    const stored = (await storedRecords()).map((r) => (JSON.parse(r.raw) as { text: string }).text)
    for (const text of acked) expect(stored.filter((s) => s === text)).toHaveLength(1)

    // And the dashboard showed each stored message once, live (both instances' records).
    const items = page.getByTestId('firehose-item')
    await poll(() => items.count()).toBe(stored.length)
    const shown = await items.allTextContents()
    for (const text of acked) expect(shown.filter((s) => s.includes(text))).toHaveLength(1)
    await shot('pg-02-after-database-restart')
  })

  it('the operator flow works through the instance the browser talks to (records of the other one)', async () => {
    const b = collectors[1] as (typeof collectors)[0]
    // ada's transcript is stored by instance A (the shop bot's); the browser talks to B.
    await page.goto(`${b.url}/#/conversations/shop/ada`)
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    await page.getByTestId('pause-button').click()
    await poll(() => page.getByTestId('pause-state').textContent()).toContain('Paused')
    expect(await shop.tracker.pauses.isPaused('ada')).toBe(true)
    expect(await shop.say('ada', 'hello? anyone?')).toEqual([])
    const bubbles = page.getByTestId('transcript-message')
    await poll(() => bubbles.last().textContent()).toContain('hello? anyone?')
    await page.getByTestId('operator-input').fill('A human here, through instance B.')
    await page.getByTestId('operator-send').click()
    await poll(() => page.getByTestId('operator-note').textContent()).toBe('Sent as shop.')
    expect(shop.operatorMessages).toEqual([{ userId: 'ada', text: 'A human here, through instance B.' }])
    await poll(() => bubbles.last().textContent()).toContain('through instance B')
    await shot('pg-03-operator-via-other-instance')
    await page.getByTestId('pause-button').click()
    await poll(() => page.getByTestId('pause-state').textContent()).toBe('Bot answering')
    expect(await shop.tracker.pauses.isPaused('ada')).toBe(false)
  })

  it('the page raised no script errors', () => {
    expect(pageErrors).toEqual([])
  })
})
