/**
 * Sign-in, roles and bot scope of a shared collector, table-driven over every route × role ×
 * bot, against a real collector (SQLite) on 127.0.0.1 with a real webhook receiver; the reads
 * through the bot scope and the audit log again on a real PostgreSQL (last describe).
 */
import { Writable } from 'node:stream'
import { type Collector, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findRule, ROUTE_RULES } from '../src/access/access-rules'
import { SESSION_COOKIE, SessionSigner } from '../src/access/sessions'
import type { Role } from '../src/options'
import { type PostgresServer, startPostgres } from './support/postgres'
import { openStream, PASSWORD, passwordHash, type Receiver, rawRequest, say, startReceiver } from './support/team'

const token = (name: string) => `tok_${name}_0123456789abcdef`
const METRICS = 'metrics_0123456789abcdef'
const SECRET = 'session-secret-for-tests'
const logLines: string[] = []
let collector: Collector
let receiver: Receiver
let hash: string
const ids: Record<string, number> = {}

const principals: Array<{ name: string; role: Role; bots: string[] }> = [
  { name: 'viewer-shop', role: 'viewer', bots: ['shop'] },
  { name: 'operator-shop', role: 'operator', bots: ['shop'] },
  { name: 'admin-shop', role: 'admin', bots: ['shop'] },
  { name: 'admin-all', role: 'admin', bots: ['*'] },
]

beforeAll(async () => {
  receiver = await startReceiver()
  hash = await passwordHash()
  const hooks = { pauseWebhookUrl: `${receiver.url}/pause`, operatorMessageUrl: `${receiver.url}/send` }
  collector = await startCollector({
    port: 0,
    demoBot: false,
    bots: [
      { name: 'shop', apiKey: 'shop-key', ...hooks },
      { name: 'other', apiKey: 'other-key', ...hooks },
    ],
    auth: {
      users: [
        ...principals.map((p) => ({ ...p, passwordHash: hash })),
        { name: 'ada@example.com', role: 'viewer' as const, bots: ['shop'] },
        { name: 'op@example.com', role: 'operator' as const, bots: ['shop'] },
      ],
      tokens: principals.map((p) => ({ ...p, token: token(p.name) })),
      metricsToken: METRICS,
      sessionSecret: SECRET,
      trustProxyHeader: 'X-Forwarded-Email',
    },
    log: {
      level: 'info',
      stream: new Writable({
        write(chunk, _enc, done) {
          logLines.push(String(chunk))
          done()
        },
      }),
    },
  })
  ids.shop = await say(collector.url, 'shop-key', 'u1', 'hello from shop')
  ids.other = await say(collector.url, 'other-key', 'u2', 'hello from other')
})

afterAll(async () => {
  await collector?.close()
  await receiver?.close()
})

const call = (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  fetch(`${collector.url}${path}`, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: {
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })

// Reads through the store's bot scope: run on SQLite here, and on PostgreSQL at the end of the file.
async function listsShowOnlyTheirBots() {
  const auth = { authorization: `Bearer ${token('viewer-shop')}` }
  const bots = (await (await call('/api/bots', { headers: auth })).json()) as Array<{ name: string }>
  expect(bots.map((b) => b.name)).toEqual(['shop'])
  const convs = (await (await call('/api/conversations', { headers: auth })).json()) as Array<{ bot: string }>
  expect(convs.length).toBeGreaterThan(0)
  expect(new Set(convs.map((c) => c.bot))).toEqual(new Set(['shop']))
  const msgs = (await (await call('/api/messages', { headers: auth })).json()) as Array<{ bot: string }>
  expect(new Set(msgs.map((m) => m.bot))).toEqual(new Set(['shop']))
  const all = (await (
    await call('/api/stats', { headers: { authorization: `Bearer ${token('admin-all')}` } })
  ).json()) as {
    records: number
  }
  const mine = (await (await call('/api/stats', { headers: auth })).json()) as { records: number }
  expect(mine.records).toBeLessThan(all.records)
  const pages = (await (
    await call('/api/messenger-pages', { headers: { authorization: `Bearer ${token('admin-shop')}` } })
  ).json()) as { pages: Array<{ bot: string }> }
  expect(pages.pages.every((p) => p.bot === 'shop')).toBe(true)
}

async function streamCarriesOnlyTheirBots() {
  const stream = await openStream(`${collector.url}/api/stream`, { authorization: `Bearer ${token('viewer-shop')}` })
  expect(stream.status).toBe(200)
  const denied = await openStream(`${collector.url}/api/stream?bot=other`, {
    authorization: `Bearer ${token('viewer-shop')}`,
  })
  expect(denied.status).toBe(403)
  await say(collector.url, 'other-key', 'u2', 'secret of other')
  await say(collector.url, 'shop-key', 'u1', 'visible to shop')
  await expect.poll(() => stream.events.length, { timeout: 5000 }).toBeGreaterThan(0)
  stream.close()
  expect(stream.events.map((e) => (e.data as { bot: string }).bot)).toEqual(['shop'])
}

async function auditReadersSeeTheirBots() {
  const op = { authorization: `Bearer ${token('operator-shop')}` }
  await call('/api/pause', { method: 'POST', body: { bot: 'shop', thread: 'u1', paused: true }, headers: op })
  await call('/api/pause', { method: 'POST', body: { bot: 'shop', thread: 'u1', paused: false }, headers: op })
  await call('/api/operator-message', {
    method: 'POST',
    body: { bot: 'shop', thread: 'u1', text: 'A human here' },
    headers: op,
  })
  await call('/api/pause', {
    method: 'POST',
    body: { bot: 'other', thread: 'u2', paused: true },
    headers: { authorization: `Bearer ${token('admin-all')}` },
  })
  const mine = (await (await call('/api/audit', { headers: op })).json()) as Array<Record<string, unknown>>
  expect(mine.slice(0, 3)).toMatchObject([
    {
      actor: 'operator-shop',
      action: 'operator-message',
      bot: 'shop',
      target: 'u1',
      detail: { text: 'A human here' },
    },
    // An operator message on a conversation that is not paused pauses it first (the handoff desk).
    { actor: 'operator-shop', action: 'pause', bot: 'shop', target: 'u1', detail: { auto: true } },
    { actor: 'operator-shop', action: 'resume', bot: 'shop', target: 'u1' },
  ])
  expect(mine.every((e) => e.bot === 'shop')).toBe(true)
  const all = (await (
    await call('/api/audit', { headers: { authorization: `Bearer ${token('admin-all')}` } })
  ).json()) as Array<Record<string, unknown>>
  expect(all[0]).toMatchObject({ actor: 'admin-all', action: 'pause', bot: 'other' })
}

describe('the route table', () => {
  it('has a rule for every route the app answers (add one to ROUTE_RULES when adding a route)', () => {
    const routes = collector.routes()
    expect(routes.length).toBeGreaterThan(20)
    const missing = routes.filter((r) => !ROUTE_RULES.some((rule) => rule.method === r.method && rule.path === r.path))
    expect(missing).toEqual([])
  })

  it('refuses a path with no rule, and picks exact rules over the static fallback', () => {
    expect(findRule('GET', '/api/not-a-route')).toBeUndefined()
    expect(findRule('GET', '/api/records/7')?.params).toEqual({ id: '7' })
    expect(findRule('GET', '/app.js')?.rule.path).toBe('/*')
    expect(findRule('POST', '/track/batch')?.rule.access).toBe('bot-key')
  })
})

type Case = {
  route: string
  needs: Role
  req: (bot: 'shop' | 'other') => { path: string; method?: string; body?: unknown }
  ok: number
}
let handoffThreads = 0
const CASES: Case[] = [
  { route: 'GET /api/messages', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/messages?bot=${b}` }) },
  { route: 'GET /api/conversations', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/conversations?bot=${b}` }) },
  {
    route: 'GET /api/transcript',
    needs: 'viewer',
    ok: 200,
    req: (b) => ({ path: `/api/transcript?bot=${b}&thread=${b === 'shop' ? 'u1' : 'u2'}` }),
  },
  {
    route: 'GET /api/reports/funnel',
    needs: 'viewer',
    ok: 200,
    req: (b) => ({ path: `/api/reports/funnel?steps=intent:greet&bot=${b}` }),
  },
  { route: 'GET /api/search', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/search?q=hello&bot=${b}` }) },
  { route: 'GET /api/records/:id', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/records/${ids[b]}` }) },
  ...[
    'not-handled',
    'intents',
    'events',
    'segments',
    'timeline',
    'usage',
    'overview',
    'retention',
    'not-handled/clusters',
    'paths',
  ].map(
    (r): Case => ({
      route: `GET /api/reports/${r}`,
      needs: 'viewer',
      ok: 200,
      req: (b) => ({ path: `/api/reports/${r}?bot=${b}` }),
    }),
  ),
  { route: 'GET /api/audit', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/audit?bot=${b}` }) },
  { route: 'GET /api/stats', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/stats?bot=${b}` }) },
  {
    route: 'POST /api/pause',
    needs: 'operator',
    ok: 200,
    req: (b) => ({ path: '/api/pause', method: 'POST', body: { bot: b, thread: 'u9', paused: true } }),
  },
  {
    route: 'POST /api/operator-message',
    needs: 'operator',
    ok: 200,
    req: (b) => ({ path: '/api/operator-message', method: 'POST', body: { bot: b, thread: 'u9', text: 'hi' } }),
  },
  {
    route: 'POST /api/messenger-pages',
    needs: 'admin',
    ok: 201,
    req: (b) => ({
      path: '/api/messenger-pages',
      method: 'POST',
      body: { pageId: `page-${b}`, appSecret: 'app-secret', verifyToken: 'verify', bot: b },
    }),
  },
  {
    route: 'DELETE /api/users/:userId',
    needs: 'admin',
    ok: 200,
    req: (b) => ({ path: `/api/users/nobody?bot=${b}`, method: 'DELETE' }),
  },
  { route: 'GET /api/export', needs: 'admin', ok: 200, req: (b) => ({ path: `/api/export?bot=${b}&user=u1` }) },
  { route: 'GET /api/handoffs', needs: 'viewer', ok: 200, req: (b) => ({ path: `/api/handoffs?bot=${b}` }) },
  {
    route: 'POST /api/handoffs/claim',
    needs: 'operator',
    ok: 200,
    // A conversation of its own per call: a second claimer would get 409.
    req: (b) => ({
      path: '/api/handoffs/claim',
      method: 'POST',
      body: { bot: b, thread: `claim-${++handoffThreads}` },
    }),
  },
  {
    route: 'POST /api/handoffs/release',
    needs: 'operator',
    ok: 200,
    req: (b) => ({ path: '/api/handoffs/release', method: 'POST', body: { bot: b, thread: 'nobody-holds-it' } }),
  },
  {
    route: 'GET /api/notes',
    needs: 'viewer',
    ok: 200,
    req: (b) => ({ path: `/api/notes?bot=${b}&thread=${b === 'shop' ? 'u1' : 'u2'}` }),
  },
  {
    route: 'POST /api/notes',
    needs: 'operator',
    ok: 201,
    req: (b) => ({ path: '/api/notes', method: 'POST', body: { bot: b, thread: 'u9', text: 'a note' } }),
  },
]
const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 }

describe('route × role × bot scope (bearer tokens)', () => {
  const rows = CASES.flatMap((c) =>
    (['shop', 'other'] as const).flatMap((bot) => [
      { ...c, bot, who: 'nobody', expected: 401 },
      ...principals.map((p) => ({
        ...c,
        bot,
        who: p.name,
        expected: RANK[p.role] < RANK[c.needs] ? 403 : p.bots.includes('*') || p.bots.includes(bot) ? c.ok : 403,
      })),
    ]),
  )
  it.each(rows)('$route on $bot as $who → $expected', async ({ req, bot, who, expected }) => {
    const r = req(bot)
    const res = await call(r.path, {
      method: r.method,
      body: r.body,
      headers: who === 'nobody' ? {} : { authorization: `Bearer ${token(who)}` },
    })
    expect(res.status, await res.clone().text()).toBe(expected)
    if (expected >= 400) expect(((await res.json()) as { error: { code: string } }).error.code).toBeTruthy()
  })

  it('path spellings Express also routes (case) do not slip past the rules', async () => {
    const viewer = { authorization: `Bearer ${token('viewer-shop')}` }
    for (const path of [
      '/Api/export?bot=shop&user=u1',
      '/API/EXPORT?bot=shop&user=u1',
      '/api/Export?bot=shop&user=u1',
      '/api/Transcript?bot=other&thread=u2',
      '/API/messages?bot=other',
    ]) {
      const res = await rawRequest(`${collector.url}${path}`, { headers: viewer })
      expect(res.status, path).toBe(403)
    }
    for (const path of [
      '//api/export?bot=shop&user=u1',
      '/api//export?bot=shop&user=u1',
      '/api/export/?bot=shop&user=u1',
    ])
      expect((await rawRequest(`${collector.url}${path}`, { headers: viewer })).status, path).toBe(404)
  })

  it('the routes of the table that the cases cover are every role-checked route', () => {
    const covered = new Set(CASES.map((c) => c.route))
    const roleRoutes = ROUTE_RULES.filter((r) => r.bot !== undefined && r.path !== '/api/stream').map(
      (r) => `${r.method} ${r.path}`,
    )
    expect(roleRoutes.filter((r) => !covered.has(r))).toEqual([])
  })

  it('lists, stats and bots show only the caller’s bots', listsShowOnlyTheirBots)

  it('the live stream of a scoped user carries only their bots', streamCarriesOnlyTheirBots)

  it('without credentials: 401 JSON for the API, a redirect to /login for the dashboard', async () => {
    const api = await call('/api/bots')
    expect(api.status).toBe(401)
    expect(await api.json()).toMatchObject({ error: { code: 'unauthorized' } })
    const page = await call('/', { headers: { accept: 'text/html' } })
    expect(page.status).toBe(302)
    expect(page.headers.get('location')).toBe('/login')
    const login = await call('/login')
    expect(login.status).toBe(200)
    expect(await login.text()).toContain('login-form')
    expect((await call('/', { headers: { authorization: `Bearer ${token('viewer-shop')}` } })).status).toBe(200)
    expect((await call('/api/bots', { headers: { authorization: 'Bearer not-a-token-at-all' } })).status).toBe(401)
  })
})

describe('browser sessions', () => {
  const signIn = async (name: string, password = PASSWORD) => {
    const res = await call('/login', { method: 'POST', body: { name, password }, headers: { origin: collector.url } })
    const cookie = res.headers.get('set-cookie') ?? ''
    return { res, cookie, value: /convotrack_session=([^;]*)/.exec(cookie)?.[1] ?? '' }
  }
  const asCookie = (value: string) => ({ cookie: `${SESSION_COOKIE}=${value}` })

  it('sign-in sets an HttpOnly SameSite cookie; the session reads and acts within its scope', async () => {
    const { res, cookie, value } = await signIn('operator-shop')
    expect(res.status).toBe(200)
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Lax/)
    expect(cookie).not.toMatch(/Secure/)
    const me = await call('/api/me', { headers: asCookie(value) })
    expect(await me.json()).toMatchObject({ name: 'operator-shop', role: 'operator', bots: ['shop'] })
    expect(me.headers.get('cache-control')).toBe('no-store')
    expect(me.headers.get('x-frame-options')).toBe('DENY')
    expect(me.headers.get('content-security-policy')).toBe("frame-ancestors 'none'")
    const pause = await call('/api/pause', {
      method: 'POST',
      body: { bot: 'shop', thread: 'u1', paused: true },
      headers: { ...asCookie(value), origin: collector.url, 'sec-fetch-site': 'same-origin' },
    })
    expect(pause.status).toBe(200)
  })

  it('behind HTTPS (X-Forwarded-Proto: https) the cookie is Secure', async () => {
    const res = await call('/login', {
      method: 'POST',
      body: { name: 'viewer-shop', password: PASSWORD },
      headers: { origin: collector.url, 'x-forwarded-proto': 'https' },
    })
    expect(res.headers.get('set-cookie')).toMatch(/; Secure/)
  })

  it('a tampered, expired, foreign or signed-out cookie → 401', async () => {
    const { value } = await signIn('viewer-shop')
    const [payload, sig] = value.split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = Buffer.from(JSON.stringify({ ...claims, u: 'admin-all' })).toString('base64url')
    const expired = new SessionSigner(SECRET, 1000).issue('viewer-shop', hash, Date.now() - 60_000).value
    const foreign = new SessionSigner('another-collector', 3_600_000).issue('viewer-shop', hash).value
    for (const bad of [`${forged}.${sig}`, `${payload}.${sig.slice(0, -2)}xx`, expired, foreign, 'garbage']) {
      const res = await call('/api/me', { headers: asCookie(bad) })
      expect(res.status, bad).toBe(401)
    }
    expect((await call('/api/me', { headers: asCookie(value) })).status).toBe(200)
    const out = await call('/logout', {
      method: 'POST',
      body: {},
      headers: { ...asCookie(value), origin: collector.url },
    })
    expect(out.status).toBe(200)
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/)
    expect((await call('/api/me', { headers: asCookie(value) })).status).toBe(401)
  })

  it('a cross-origin POST with a valid cookie → 403; a session POST without Origin → 403', async () => {
    const { value } = await signIn('operator-shop')
    const body = { bot: 'shop', thread: 'u1', paused: false }
    for (const headers of <Array<Record<string, string>>>[
      { origin: 'http://evil.example' },
      { origin: collector.url, 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      {},
    ]) {
      const res = await call('/api/pause', { method: 'POST', body, headers: { ...asCookie(value), ...headers } })
      expect(res.status, JSON.stringify(headers)).toBe(403)
      expect(await res.json()).toMatchObject({ error: { code: 'cross_origin' } })
    }
    expect(receiver.calls.filter((c) => JSON.stringify(c.body).includes('"paused":false'))).toEqual([])
  })

  it('a wrong Host is refused (DNS rebinding); an allowed one answers', async () => {
    const evil = await rawRequest(`${collector.url}/api/me`, {
      headers: { host: 'attacker.example:80', authorization: `Bearer ${token('viewer-shop')}` },
    })
    expect(evil.status).toBe(421)
    expect(JSON.parse(evil.body)).toMatchObject({ error: { code: 'invalid_host' } })
    const ok = await rawRequest(`${collector.url}/api/me`, {
      headers: { host: `localhost:${collector.port}`, authorization: `Bearer ${token('viewer-shop')}` },
    })
    expect(ok.status).toBe(200)
    // The tracking route keeps its own check: bots post with whatever name they reach the collector by.
    const track = await rawRequest(
      `${collector.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`,
      {
        method: 'POST',
        headers: { host: 'collector.internal', 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'via service name', userId: 'u1' }),
      },
    )
    expect(track.status).toBe(201)
  })

  it('failed sign-ins are slowed per account: after 5 failures even the right password waits (429)', async () => {
    for (let i = 0; i < 5; i++) expect((await signIn('admin-shop', 'wrong password')).res.status).toBe(401)
    const locked = await signIn('admin-shop')
    expect(locked.res.status).toBe(429)
    expect(Number(locked.res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(locked.cookie).toBe('')
    // Another account from the same address is not locked yet (the address allows more).
    expect((await signIn('admin-all')).res.status).toBe(200)
  })

  it('an unknown name answers exactly like a wrong password', async () => {
    const a = await signIn('nobody-here', 'whatever-password')
    const b = await signIn('viewer-shop', 'wrong-password')
    expect(a.res.status).toBe(401)
    expect(await a.res.json()).toEqual(await b.res.json())
  })
})

describe('single sign-on proxy header', () => {
  it('maps X-Forwarded-Email from the (loopback) proxy to the configured user', async () => {
    const me = await call('/api/me', { headers: { 'x-forwarded-email': 'ada@example.com' } })
    expect(await me.json()).toMatchObject({ name: 'ada@example.com', role: 'viewer', via: 'proxy' })
    expect(
      (await call('/api/transcript?bot=other&thread=u2', { headers: { 'x-forwarded-email': 'ada@example.com' } }))
        .status,
    ).toBe(403)
    expect((await call('/api/me', { headers: { 'x-forwarded-email': 'mallory@example.com' } })).status).toBe(403)
  })

  it('browser requests through the proxy need the same-origin proof too (its cookie is ambient)', async () => {
    const body = { bot: 'shop', thread: 'u1', paused: true }
    const who = { 'x-forwarded-email': 'op@example.com' }
    expect((await call('/api/pause', { method: 'POST', body, headers: who })).status).toBe(403)
    expect(
      (await call('/api/pause', { method: 'POST', body, headers: { ...who, origin: 'http://evil.example' } })).status,
    ).toBe(403)
    const ok = await call('/api/pause', { method: 'POST', body, headers: { ...who, origin: collector.url } })
    expect(ok.status).toBe(200)
  })
})

describe('audit log and logs', () => {
  it(
    'pause, resume and operator messages are audited with the actor; readers see their bots only',
    auditReadersSeeTheirBots,
  )

  it('logs are JSON with a request id, and never carry a key, token, password or cookie', async () => {
    const res = await call('/api/me', {
      headers: { authorization: `Bearer ${token('viewer-shop')}`, 'x-request-id': 'req-123' },
    })
    expect(res.headers.get('x-request-id')).toBe('req-123')
    // Waits for the line; the bound only detects a hang (expect.poll's default 1 s is a speed limit under load).
    await expect.poll(() => logLines.some((l) => l.includes('"reqId":"req-123"')), { timeout: 60_000 }).toBe(true)
    const text = logLines.join('')
    for (const secret of ['shop-key', 'other-key', PASSWORD, hash, token('viewer-shop'), METRICS, SECRET, 'app-secret'])
      expect(text).not.toContain(secret)
    expect(text).not.toContain(SESSION_COOKIE)
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow()
  })
})

describe('secure default', () => {
  it('a non-loopback address without auth refuses to start and says how to add a user', async () => {
    await expect(startCollector({ port: 0, host: '0.0.0.0', log: false })).rejects.toThrow(
      /hash-password[\s\S]*--no-auth/,
    )
  })

  it('noAuth: true starts it anyway, with a warning in the log', async () => {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const open = await startCollector({ port: 0, host: '0.0.0.0', noAuth: true, log: { level: 'warn', stream } })
    try {
      expect(lines.join('')).toMatch(/no sign-in/)
    } finally {
      await open.close()
    }
  })

  it('bad auth options fail with the field and the rule', async () => {
    await expect(
      startCollector({
        port: 0,
        log: false,
        auth: { users: [{ name: 'x', passwordHash: 'plain', role: 'admin', bots: ['*'] }] },
      }),
    ).rejects.toThrow(/auth.users\[0\].passwordHash/)
    await expect(
      startCollector({
        port: 0,
        log: false,
        auth: { tokens: [{ name: 't', token: 'short', role: 'admin', bots: ['*'] }] },
      }),
    ).rejects.toThrow(/auth.tokens\[0\].token/)
    await expect(
      startCollector({
        port: 0,
        log: false,
        auth: { tokens: [{ name: 't', token: token('t'), role: 'root' as Role, bots: ['*'] }] },
      }),
    ).rejects.toThrow(/role must be viewer, operator or admin/)
  })
})

describe('bot scope and audit on PostgreSQL', () => {
  // The same reads through the scope, on a collector keeping its records in a real PostgreSQL.
  let server: PostgresServer
  let onSqlite: Collector
  beforeAll(async () => {
    server = await startPostgres()
    onSqlite = collector
    const hooks = { pauseWebhookUrl: `${receiver.url}/pause`, operatorMessageUrl: `${receiver.url}/send` }
    collector = await startCollector({
      port: 0,
      demoBot: false,
      log: false,
      db: await server.createDatabase(),
      bots: [
        { name: 'shop', apiKey: 'shop-key', ...hooks },
        { name: 'other', apiKey: 'other-key', ...hooks },
      ],
      auth: { tokens: principals.map((p) => ({ ...p, token: token(p.name) })) },
    })
    await say(collector.url, 'shop-key', 'u1', 'hello from shop')
    await say(collector.url, 'other-key', 'u2', 'hello from other')
  }, 60_000)
  afterAll(async () => {
    await collector?.close()
    collector = onSqlite
    await server?.destroy()
  })

  it('lists, stats and bots show only the caller’s bots', listsShowOnlyTheirBots)
  it('the live stream of a scoped user carries only their bots', streamCarriesOnlyTheirBots)
  it('audited actions: readers see their bots only', auditReadersSeeTheirBots)
})
