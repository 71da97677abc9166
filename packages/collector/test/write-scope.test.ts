/**
 * Scope on writes as on reads (issue 26), and the smaller holes found with it: a scoped admin
 * cannot take over another bot's Messenger page; `/api/stats` refuses a bot out of scope; a
 * revenue amount that would overflow the totals is refused; a 413 on `/api/*` names the 64 kB
 * limit; `?limit=abc` is a 400 on `/api/audit` too; a charset other than UTF-8 is a 415; a
 * request that never sends its announced body is answered 408 instead of holding the
 * connection for minutes. The page and audit cases run on SQLite and on a real PostgreSQL.
 */
import { createHmac } from 'node:crypto'
import { connect } from 'node:net'
import { type AuditEntry, type Collector, startCollector } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { backends } from './support/backends'

let collector: Collector | undefined
afterEach(async () => {
  await collector?.close()
  collector = undefined
})

const BACKENDS = backends()
const token = (name: string) => `tok_${name}_0123456789abcdef`
const as = (name: string) => ({ authorization: `Bearer ${token(name)}` })

async function start(db?: string, extra: Record<string, unknown> = {}): Promise<Collector> {
  collector = await startCollector({
    port: 0,
    log: false,
    demoBot: false,
    ...(db ? { db } : {}),
    bots: [
      { name: 'a', apiKey: 'a-key' },
      { name: 'b', apiKey: 'b-key' },
    ],
    auth: {
      tokens: [
        { name: 'admin-a', token: token('admin-a'), role: 'admin', bots: ['a'] },
        { name: 'admin-ab', token: token('admin-ab'), role: 'admin', bots: ['a', 'b'] },
        { name: 'root', token: token('root'), role: 'admin', bots: ['*'] },
      ],
    },
    ...extra,
  })
  return collector
}

async function call(path: string, who: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${collector?.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...as(who), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

const sign = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
const webhook = (pageId: string, text: string) =>
  JSON.stringify({
    object: 'page',
    entry: [
      {
        id: pageId,
        time: 1,
        messaging: [{ sender: { id: 'PSID' }, recipient: { id: pageId }, timestamp: 1, message: { mid: 'm', text } }],
      },
    ],
  })

async function deliver(body: string, secret: string): Promise<{ status: number; received?: number }> {
  const res = await fetch(`${collector?.url}/messenger/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(body, secret) },
    body,
  })
  return { status: res.status, received: ((await res.json()) as { received?: number }).received }
}

describe.each(BACKENDS)('Messenger pages on $name', (backend) => {
  it("an admin scoped to bot a cannot take over bot b's page: 403, b keeps its traffic, the attempt is audited under b", async () => {
    await start(await backend.db())
    const own = await call('/api/messenger-pages', 'root', {
      method: 'POST',
      body: { pageId: 'PB', appSecret: 'b-secret', verifyToken: 'vb', bot: 'b' },
    })
    expect(own.status).toBe(201)
    const takeover = await call('/api/messenger-pages', 'admin-a', {
      method: 'POST',
      body: { pageId: 'PB', appSecret: 'intruder-secret', verifyToken: 'vx', bot: 'a' },
    })
    expect(takeover.status).toBe(403)
    expect(takeover.body.error).toMatchObject({ code: 'forbidden', path: 'pageId' })
    // Even with b's real secret, and with move: true.
    const withSecret = await call('/api/messenger-pages', 'admin-a', {
      method: 'POST',
      body: { pageId: 'PB', appSecret: 'b-secret', verifyToken: 'vb', bot: 'a', move: true },
    })
    expect(withSecret.status).toBe(403)
    // b's real traffic still lands in b; the intruder's signed traffic is not taken.
    expect(await deliver(webhook('PB', 'real'), 'b-secret')).toEqual({ status: 200, received: 1 })
    expect((await deliver(webhook('PB', 'forged'), 'intruder-secret')).status).toBe(401)
    const messages = (await call('/api/messages?all=1', 'root')).body as Array<{ bot: string; text: string }>
    expect(messages.map((m) => [m.bot, m.text])).toEqual([['b', 'real']])
    const audit = (await call('/api/audit?bot=b', 'root')).body as AuditEntry[]
    expect(audit.filter((e) => e.action === 'messenger-page-refused')).toHaveLength(2)
    expect(audit.find((e) => e.action === 'messenger-page-refused')).toMatchObject({
      actor: 'admin-a',
      bot: 'b',
      target: 'PB',
    })
    // The scoped admin sees none of it.
    expect((await call('/api/audit', 'admin-a')).body).toEqual([])
  })

  it('moving a page between two bots the caller may act on needs move: true (409 naming the owner), and is audited under both', async () => {
    await start(await backend.db())
    const connect = (who: string, page: Record<string, unknown>) =>
      call('/api/messenger-pages', who, { method: 'POST', body: { pageId: 'P1', verifyToken: 'v', ...page } })
    expect((await connect('admin-ab', { appSecret: 's', bot: 'b' })).status).toBe(201)
    // Replacing its own page's secret is fine.
    expect((await connect('admin-ab', { appSecret: 's2', bot: 'b' })).status).toBe(201)
    const conflict = await call('/api/messenger-pages', 'admin-ab', {
      method: 'POST',
      body: { pageId: 'P1', appSecret: 's2', verifyToken: 'v', bot: 'a' },
    })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toMatchObject({ code: 'conflict', path: 'pageId' })
    expect(conflict.body.error.message).toContain('"b"')
    const moved = await call('/api/messenger-pages', 'admin-ab', {
      method: 'POST',
      body: { pageId: 'P1', appSecret: 's2', verifyToken: 'v', bot: 'a', move: true },
    })
    expect(moved.status).toBe(201)
    expect(moved.body).toMatchObject({ pageId: 'P1', bot: 'a', movedFrom: 'b' })
    await expect
      .poll(async () =>
        ((await call('/api/audit', 'root')).body as AuditEntry[]).map((e) => [e.action, e.bot, e.target]),
      )
      .toEqual([
        ['messenger-page-moved', 'b', 'P1'],
        ['messenger-page', 'a', 'P1'],
        ['messenger-page', 'b', 'P1'],
        ['messenger-page', 'b', 'P1'],
      ])
  })
})

describe('the smaller holes', () => {
  it('/api/stats?bot=b for a token scoped to a is 403, like every other read', async () => {
    await start()
    expect((await call('/api/stats?bot=b', 'admin-a')).status).toBe(403)
    expect((await call('/api/stats?bot=a', 'admin-a')).status).toBe(200)
  })

  it('a revenue amount that would overflow the totals is refused 400 naming amount; the totals stay numbers', async () => {
    const url = (await start()).url
    const post = (amount: number) =>
      fetch(`${url}/track?platform=generic&type=event&v=11.1.0-rest&apiKey=a-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'revenueEvent', name: 'buy', userId: 'u', amount }),
      })
    const huge = await post(1e308)
    expect(huge.status).toBe(400)
    expect((await huge.json()).error).toMatchObject({ code: 'invalid_field', path: 'amount' })
    expect((await post(-1e308)).status).toBe(400)
    expect((await post(1e15)).status).toBe(201)
    expect((await post(1e15)).status).toBe(201)
    const report = (await call('/api/reports/events', 'root')).body
    expect(report.revenue).toMatchObject({ total: 2e15, count: 2 })
  })

  it('a 413 on /api/* names the 64 kB limit of the dashboard API, not maxBodyBytes', async () => {
    await start()
    const res = await call('/api/pause', 'root', {
      method: 'POST',
      body: { bot: 'a', thread: 't', paused: true, pad: 'x'.repeat(70_000) },
    })
    expect(res.status).toBe(413)
    expect(res.body.error.message).toContain('64 kB')
    expect(res.body.error.message).not.toContain('maxBodyBytes')
  })

  it('?limit=abc is a 400 on /api/audit as on /api/messages', async () => {
    await start()
    for (const path of ['/api/audit?limit=abc', '/api/messages?limit=abc', '/api/audit?beforeId=x']) {
      const res = await call(path, 'root')
      expect(res.status, path).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
    }
  })

  it('a charset other than UTF-8 is 415 on /track and /track/batch; utf-8 in any spelling is accepted', async () => {
    const url = (await start()).url
    const post = (path: string, contentType: string, body: string) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body })
    const one = JSON.stringify({ text: 'hi', userId: 'u' })
    const track = '/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=a-key'
    for (const charset of ['utf-16', 'UTF-16LE', 'latin1', '"iso-8859-1"']) {
      const res = await post(track, `application/json; charset=${charset}`, one)
      expect(res.status, charset).toBe(415)
      expect((await res.json()).error).toMatchObject({ code: 'unsupported_media_type', path: 'content-type' })
      const batch = await post(
        '/track/batch?apiKey=a-key',
        `application/json;charset=${charset}`,
        JSON.stringify({
          records: [{ platform: 'universal', type: 'incoming', v: '11.1.0-rest', body: { text: 'hi', userId: 'u' } }],
        }),
      )
      expect(batch.status, charset).toBe(415)
    }
    for (const charset of ['utf-8', 'UTF-8', 'utf8', '"utf-8"'])
      expect((await post(track, `application/json; charset=${charset}`, one)).status, charset).toBe(201)
  })

  it('a request that announces a body and never sends it is answered 408 and disconnected after requestTimeoutMs', async () => {
    const { port } = await start(undefined, { requestTimeoutMs: 300, headersTimeoutMs: 200 })
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (d) => {
      answer += String(d)
    })
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.write(
      'POST /track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=a-key HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"te',
    )
    // Waits for the server to give up on the body (Node's default would hold it for 300 s,
    // beyond this test's timeout).
    await closed
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    await expect(startCollector({ port: 0, requestTimeoutMs: 0 })).rejects.toThrow(/requestTimeoutMs/)
  })
})
