/**
 * The dashboard's read API over real HTTP: transcript paging with a cursor, counts that follow
 * the bot filter, and the operator's messages marked — with a real bot (core tracker and the
 * @convotrack/express receivers) on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Collector, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ChatBot, startShopBot } from './support/chat-bot'

let collector: Collector
let bot: ChatBot

interface Page {
  messages: Array<{ id: number; text: string | null; direction: string; sentBy?: string }>
  olderBeforeId: number | null
}

const get = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const res = await fetch(`${collector.url}/api/${path}`)
  return { status: res.status, body: (await res.json()) as T }
}

async function track(apiKey: string, body: Record<string, unknown>, type = 'incoming'): Promise<void> {
  const res = await fetch(`${collector.url}/track?platform=universal&type=${type}&v=11.1.0-rest&apiKey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(201)
}

beforeAll(async () => {
  collector = await startCollector({ port: 0, webhookRetry: { attempts: 2, baseDelayMs: 20 } })
  bot = await startShopBot(collector)
  collector.addBot({ name: 'desk', apiKey: 'desk-key' })
})

afterAll(async () => {
  await bot?.close()
  await collector?.close()
})

describe('GET /api/transcript', () => {
  it('pages back from the newest message with beforeId, and says where the older page starts', async () => {
    for (let i = 1; i <= 7; i++) await track('desk-key', { text: `m${i}`, userId: 'pat' })
    const texts = (p: Page) => p.messages.map((m) => m.text)
    const first = (await get<Page>('transcript?bot=desk&thread=pat&limit=3')).body
    expect(texts(first)).toEqual(['m5', 'm6', 'm7'])
    expect(first.olderBeforeId).toBe(first.messages[0]?.id)
    const second = (await get<Page>(`transcript?bot=desk&thread=pat&limit=3&beforeId=${first.olderBeforeId}`)).body
    expect(texts(second)).toEqual(['m2', 'm3', 'm4'])
    const third = (await get<Page>(`transcript?bot=desk&thread=pat&limit=3&beforeId=${second.olderBeforeId}`)).body
    expect(texts(third)).toEqual(['m1'])
    expect(third.olderBeforeId).toBeNull()
    // A page that holds the whole transcript says so.
    expect((await get<Page>('transcript?bot=desk&thread=pat')).body.olderBeforeId).toBeNull()
    expect((await get<Page>('transcript?bot=desk&thread=pat&limit=7')).body.olderBeforeId).toBeNull()
  })

  it('refuses a cursor that is not a number, naming it', async () => {
    const { status, body } = await get<{ error: { code: string; path: string } }>(
      'transcript?bot=desk&thread=pat&beforeId=abc',
    )
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'invalid_request', path: 'beforeId' })
  })
})

describe('GET /api/stats', () => {
  it('counts all bots, or the one the filter names', async () => {
    await track('shop-key', { text: 'hello', userId: 'zed' })
    const all = (await get<{ records: number; messages: number; bot: string | null }>('stats')).body
    const desk = (await get<{ records: number; messages: number; bot: string | null }>('stats?bot=desk')).body
    const shop = (await get<{ records: number; messages: number; bot: string | null }>('stats?bot=shop')).body
    expect(desk).toMatchObject({ records: 7, messages: 7, bot: 'desk' })
    expect(all.bot).toBeNull()
    expect(all.records).toBe(desk.records + shop.records)
    expect(all.messages).toBe(desk.messages + shop.messages)
  })
})

describe('operator messages', () => {
  it('marks the bot’s tracked copy of an operator’s message sentBy operator, and nothing else', async () => {
    // The bot says the words first itself: that earlier message is the bot's, not the operator's.
    await track('shop-key', { text: 'One moment please.', userId: 'ivy' }, 'outgoing')
    await bot.say('ivy', 'hi')
    const sent = await fetch(`${collector.url}/api/operator-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ bot: 'shop', thread: 'ivy', text: 'One moment please.' }),
    })
    expect(sent.status).toBe(200)
    await expect
      .poll(async () => (await get<Page>('transcript?bot=shop&thread=ivy')).body.messages.length, { timeout: 8000 })
      .toBe(4)
    const { messages } = (await get<Page>('transcript?bot=shop&thread=ivy')).body
    expect(messages.map((m) => [m.text, m.sentBy ?? 'bot'])).toEqual([
      ['One moment please.', 'bot'],
      ['hi', 'bot'],
      ['Hello! Ask me about your order.', 'bot'],
      ['One moment please.', 'operator'],
    ])
    const recent = (await get<Page['messages']>('messages?bot=shop')).body
    expect(recent.filter((m) => m.sentBy === 'operator').map((m) => m.text)).toEqual(['One moment please.'])
  })

  it('a send the bot refused marks nothing', async () => {
    collector.addBot({ name: 'mute', apiKey: 'mute-key', operatorMessageUrl: 'http://127.0.0.1:9/message' })
    const res = await fetch(`${collector.url}/api/operator-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ bot: 'mute', thread: 'kim', text: 'ok' }),
    })
    expect(res.status).toBe(502)
    await track('mute-key', { text: 'ok', userId: 'kim' }, 'outgoing')
    const { messages } = (await get<Page>('transcript?bot=mute&thread=kim')).body
    expect(messages.map((m) => m.sentBy ?? 'bot')).toEqual(['bot'])
  })

  it('the mark survives a restart of the collector (read back from the audit log)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convotrack-operator-'))
    const db = join(dir, 'records.db')
    let first: Collector | undefined = await startCollector({
      port: 0,
      db,
      webhookRetry: { attempts: 2, baseDelayMs: 20 },
    })
    const shop = await startShopBot(first)
    let second: Collector | undefined
    try {
      await shop.say('noa', 'hi')
      const sent = await fetch(`${first.url}/api/operator-message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ bot: 'shop', thread: 'noa', text: 'A person here.' }),
      })
      expect(sent.status).toBe(200)
      const url = first.url
      await expect
        .poll(
          async () =>
            ((await (await fetch(`${url}/api/transcript?bot=shop&thread=noa`)).json()) as Page).messages.length,
          {
            timeout: 8000,
          },
        )
        .toBe(3)
      await first.close()
      first = undefined
      second = await startCollector({ port: 0, db, bots: [{ name: 'shop', apiKey: 'shop-key' }] })
      const page = (await (await fetch(`${second.url}/api/transcript?bot=shop&thread=noa`)).json()) as Page
      expect(page.messages.map((m) => [m.text, m.sentBy ?? 'bot'])).toEqual([
        ['hi', 'bot'],
        ['Hello! Ask me about your order.', 'bot'],
        ['A person here.', 'operator'],
      ])
    } finally {
      await shop.close()
      await first?.close()
      await second?.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
