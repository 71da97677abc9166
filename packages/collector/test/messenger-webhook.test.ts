import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Collector, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Signed bodies are built here exactly as Facebook builds them: X-Hub-Signature-256 is
// "sha256=" + hex HMAC-SHA256 of the raw body with the app secret.
const APP_SECRET = 'app-secret-1'
const PAGE = '1000001'
const sign = (raw: string, secret = APP_SECRET) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`

const item = (sender: string, recipient: string, message: Record<string, unknown>) => ({
  sender: { id: sender },
  recipient: { id: recipient },
  timestamp: 1_700_000_000_000,
  message,
})
const webhookBody = (pageId: string, ...messaging: unknown[]) => ({
  object: 'page',
  entry: [{ id: pageId, time: 1_700_000_000_000, messaging }],
})

let collector: Collector

beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    messengerPages: [{ pageId: PAGE, appSecret: APP_SECRET, verifyToken: 'verify-me', bot: 'fb-page' }],
  })
})
afterAll(async () => {
  await collector.close()
})

async function deliver(body: unknown, signature: string | null, raw = JSON.stringify(body)) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (signature !== null) headers['x-hub-signature-256'] = signature
  const res = await fetch(`${collector.url}/messenger/webhook`, { method: 'POST', headers, body: raw })
  return { status: res.status, body: await res.json() }
}

const messagesOf = async (bot: string) =>
  (await collector.store.recent({ bot, limit: 1000 })).map((m) => [m.direction, m.userId, m.text])

describe('subscription challenge', () => {
  it('answers hub.challenge when mode is subscribe and the verify token is a connected page’s', async () => {
    const res = await fetch(
      `${collector.url}/messenger/webhook?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444`,
    )
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('1158201444')
  })

  it.each([
    ['a wrong token', 'hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1'],
    ['no token', 'hub.mode=subscribe&hub.challenge=1'],
    ['another mode', 'hub.mode=unsubscribe&hub.verify_token=verify-me&hub.challenge=1'],
  ])('refuses %s with 403', async (_label, query) => {
    const res = await fetch(`${collector.url}/messenger/webhook?${query}`)
    expect(res.status).toBe(403)
  })
})

describe('signed live traffic', () => {
  it('stores user messages as incoming and the page’s echoes as outgoing, under the page’s bot', async () => {
    const body = webhookBody(
      PAGE,
      item('PSID-7', PAGE, { mid: 'm1', seq: 1, text: 'Do you ship to Lisbon?' }),
      item(PAGE, 'PSID-7', { mid: 'm2', text: 'Yes, in 3 days.', is_echo: true, app_id: 123 }),
    )
    const res = await deliver(body, sign(JSON.stringify(body)))
    expect(res).toEqual({ status: 200, body: { received: 2 } })
    expect(await messagesOf('fb-page')).toEqual([
      ['incoming', 'PSID-7', 'Do you ship to Lisbon?'],
      ['outgoing', 'PSID-7', 'Yes, in 3 days.'],
    ])
    const [incoming] = await collector.store.recent({ bot: 'fb-page', limit: 1 })
    const record = await collector.store.record(incoming!.recordId)
    expect(record).toMatchObject({ platform: 'facebook', type: 'outgoing' })
  })

  it.each([
    ['no signature', null],
    ['a signature made with another secret', 'other'],
    ['a malformed signature', 'sha1=abc'],
  ])('%s → 401 invalid_signature, nothing stored', async (_label, how) => {
    const body = webhookBody(PAGE, item('PSID-8', PAGE, { mid: 'x', text: 'should not be stored' }))
    const raw = JSON.stringify(body)
    const signature = how === null ? null : how === 'other' ? sign(raw, 'not-the-secret') : how
    const before = await collector.store.counts()
    const res = await deliver(body, signature)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({
      error: { code: 'invalid_signature', message: expect.any(String), path: 'x-hub-signature-256' },
    })
    expect(await collector.store.counts()).toEqual(before)
  })

  it('the signature covers the raw bytes: a re-serialized body (other spacing) does not verify', async () => {
    const body = webhookBody(PAGE, item('PSID-9', PAGE, { mid: 'x', text: 'spacing' }))
    const signedRaw = JSON.stringify(body, null, 2)
    const res = await deliver(body, sign(signedRaw), JSON.stringify(body))
    expect(res.status).toBe(401)
    const ok = await deliver(body, sign(signedRaw), signedRaw)
    expect(ok.status).toBe(200)
  })

  it('entries of pages that are not connected, and receipts, are not stored', async () => {
    const body = {
      object: 'page',
      entry: [
        { id: 'OTHER-PAGE', time: 1, messaging: [item('P1', 'OTHER-PAGE', { mid: 'a', text: 'not ours' })] },
        {
          id: PAGE,
          time: 1,
          messaging: [{ sender: { id: 'P2' }, recipient: { id: PAGE }, timestamp: 1, delivery: { mids: ['a'] } }],
        },
      ],
    }
    const before = await collector.store.counts()
    const res = await deliver(body, sign(JSON.stringify(body)))
    expect(res).toEqual({ status: 200, body: { received: 0 } })
    expect(await collector.store.counts()).toEqual(before)
  })

  it('new messages appear on the live firehose', async () => {
    const controller = new AbortController()
    const stream = await fetch(`${collector.url}/api/stream`, { signal: controller.signal })
    const reader = stream.body!.getReader()
    const body = webhookBody(PAGE, item('PSID-live', PAGE, { mid: 'l1', text: 'live one' }))
    await deliver(body, sign(JSON.stringify(body)))
    let text = ''
    while (!text.includes('live one')) text += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    const frame = text.split('\n\n').find((f) => f.includes('live one'))!
    expect(frame).toContain('event: message')
    expect(JSON.parse(frame.split('data: ')[1]!)).toMatchObject({
      bot: 'fb-page',
      platform: 'facebook',
      direction: 'incoming',
      userId: 'PSID-live',
      text: 'live one',
    })
  })
})

describe('connecting a page from the dashboard form', () => {
  it('POST /api/messenger-pages connects a page (secret never echoed back) and its traffic is taken', async () => {
    const res = await fetch(`${collector.url}/api/messenger-pages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pageId: '2000002', appSecret: 'second-secret', verifyToken: 'tok2' }),
    })
    expect(res.status).toBe(201)
    const created = await res.json()
    expect(created).toEqual({
      pageId: '2000002',
      bot: 'messenger-2000002',
      webhookUrl: `${collector.url}/messenger/webhook`,
    })
    const list = await (await fetch(`${collector.url}/api/messenger-pages`)).text()
    expect(list).not.toContain('second-secret')
    expect(JSON.parse(list).pages).toContainEqual({ pageId: '2000002', bot: 'messenger-2000002' })

    const body = webhookBody('2000002', item('PSID-2', '2000002', { mid: 'q', text: 'from page two' }))
    expect((await deliver(body, sign(JSON.stringify(body), 'second-secret'))).status).toBe(200)
    // Signed with page one's secret, page two's entries are not taken.
    const forged = webhookBody('2000002', item('PSID-3', '2000002', { mid: 'r', text: 'forged' }))
    expect(await deliver(forged, sign(JSON.stringify(forged)))).toEqual({ status: 200, body: { received: 0 } })
    expect(await messagesOf('messenger-2000002')).toEqual([['incoming', 'PSID-2', 'from page two']])
  })

  it('a form missing the app secret → 400', async () => {
    const res = await fetch(`${collector.url}/api/messenger-pages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pageId: '3', verifyToken: 't' }),
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ code: 'invalid_request', path: 'appSecret' })
  })

  it('a page connected from the dashboard survives a restart on a file database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convotrack-'))
    const db = join(dir, 'c.db')
    try {
      const first = await startCollector({ port: 0, db })
      await first.connectMessengerPage({ pageId: '42', appSecret: 's42', verifyToken: 't42' })
      await first.close()
      const second = await startCollector({ port: 0, db })
      try {
        const res = await fetch(
          `${second.url}/messenger/webhook?hub.mode=subscribe&hub.verify_token=t42&hub.challenge=ok`,
        )
        expect(await res.text()).toBe('ok')
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
