/**
 * The handoff queue on two collectors sharing one real PostgreSQL, with sign-in (bearer tokens):
 * a queue change made through one instance reaches the other's live stream; two operators
 * claiming one conversation at once through different instances → exactly one gets it, the
 * other a 409 naming them; the auto-resume check running on both at once resumes a
 * conversation once (one `paused: false` webhook). Roles: a viewer reads the queue but cannot
 * claim; releasing someone else's conversation needs an admin.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type ChatBot, startChatBot } from './support/chat-bot'
import { type PostgresServer, startPostgres } from './support/postgres'
import { openStream } from './support/team'

const SECRET = 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ='
const WAIT = { timeout: 15_000, interval: 20 }
const people = [
  { name: 'ann', role: 'operator' as const },
  { name: 'ben', role: 'operator' as const },
  { name: 'val', role: 'viewer' as const },
  { name: 'ada', role: 'admin' as const },
]
const tokenOf = (name: string) => `${name}-token-0123456789abcdef`
const auth = { tokens: people.map((p) => ({ ...p, token: tokenOf(p.name), bots: ['*'] })) }

let server: PostgresServer
let a: Collector
let b: Collector
let bot: ChatBot

beforeAll(async () => {
  server = await startPostgres()
  const db = await server.createDatabase()
  const options = {
    port: 0,
    db,
    auth,
    handoff: { autoResumeMinutes: 0.05 },
    // Only the checks the tests drive (resumeIdle(now)): the timer's, on the real clock, resumed
    // conversations the tests still expected paused once the machine was slow.
    handoffCheckMs: 3_600_000,
    webhookRetry: { attempts: 2, baseDelayMs: 20 },
  }
  a = await startCollector(options)
  b = await startCollector(options)
  bot = await startChatBot({ trackingUrl: a.url, apiKey: 'shop-key', webhookSecret: SECRET })
  for (const c of [a, b])
    c.addBot({
      name: 'shop',
      apiKey: 'shop-key',
      pauseWebhookUrl: bot.pauseWebhookUrl,
      webhookSecret: SECRET,
      operatorMessageUrl: bot.operatorMessageUrl,
    })
}, 60_000)
afterAll(async () => {
  await bot?.close()
  await a?.close()
  await b?.close()
  await server?.destroy()
})

const as = (who: string) => ({ authorization: `Bearer ${tokenOf(who)}` })
async function call(c: Collector, who: string, path: string, body?: unknown) {
  const res = await fetch(`${c.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...as(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}
const waiting = async (c: Collector, thread: string) =>
  ((await call(c, 'val', '/api/handoffs?bot=shop&state=all')).body.handoffs as Array<{ thread: string }>).find(
    (e) => e.thread === thread,
  )

describe('the handoff queue across two collectors on one PostgreSQL', () => {
  it("a conversation queued through A shows in B's queue and B's live stream", async () => {
    const onB = await openStream<Record<string, any>>(`${b.url}/api/stream`, as('val'))
    try {
      await bot.say('u1', 'I need a human')
      await vi.waitFor(() => {
        const e = onB.events.find((x) => x.event === 'handoff' && x.data.thread === 'u1')
        if (!e) throw new Error('no handoff event on B yet')
        expect(e.data.entry).toMatchObject({ state: 'waiting', reason: 'asked', text: 'I need a human' })
      }, WAIT)
      expect(await waiting(b, 'u1')).toMatchObject({ state: 'waiting', userId: 'u1' })
    } finally {
      onB.close()
    }
  })

  it('a viewer sees the queue but cannot claim (403)', async () => {
    const res = await call(b, 'val', '/api/handoffs/claim', { bot: 'shop', thread: 'u1' })
    expect(res.status).toBe(403)
  })

  it('two operators claim at once through different instances: one gets it, the other 409 naming them', async () => {
    const [viaA, viaB] = await Promise.all([
      call(a, 'ann', '/api/handoffs/claim', { bot: 'shop', thread: 'u1' }),
      call(b, 'ben', '/api/handoffs/claim', { bot: 'shop', thread: 'u1' }),
    ])
    const won = [viaA, viaB].filter((r) => r.status === 200)
    const lost = [viaA, viaB].filter((r) => r.status === 409)
    expect(won).toHaveLength(1)
    expect(lost).toHaveLength(1)
    const winner = won[0]?.body.assignee as string
    expect(['ann', 'ben']).toContain(winner)
    expect(lost[0]?.body.error).toMatchObject({ code: 'already_claimed', path: 'thread' })
    expect(lost[0]?.body.error.message).toContain(winner)
    expect(bot.pauseCalls.filter((c) => c.userId === 'u1')).toEqual([{ userId: 'u1', paused: true }])
    expect(await waiting(a, 'u1')).toMatchObject({ state: 'assigned', assignee: winner, paused: true })
    // Releasing the winner's conversation: not for the other operator, fine for an admin.
    const loser = winner === 'ann' ? 'ben' : 'ann'
    expect((await call(b, loser, '/api/handoffs/release', { bot: 'shop', thread: 'u1' })).status).toBe(403)
    const released = await call(b, 'ada', '/api/handoffs/release', { bot: 'shop', thread: 'u1' })
    expect(released.status).toBe(200)
    expect(released.body).toMatchObject({ released: winner, paused: false })
    expect(await waiting(a, 'u1')).toBeUndefined()
    const audit = (await call(a, 'ada', '/api/audit?bot=shop')).body as unknown as Array<Record<string, unknown>>
    expect(audit).toContainEqual(expect.objectContaining({ action: 'handoff.claim', actor: winner, target: 'u1' }))
    expect(audit).toContainEqual(
      expect.objectContaining({ action: 'handoff.release', actor: 'ada', target: 'u1', detail: { assignee: winner } }),
    )
  })

  it('the auto-resume check on both instances at once resumes a conversation once', async () => {
    await bot.say('u2', 'talk to someone')
    await vi.waitFor(async () => {
      if (!(await waiting(a, 'u2'))) throw new Error('not queued yet')
    }, WAIT)
    expect((await call(a, 'ann', '/api/handoffs/claim', { bot: 'shop', thread: 'u2' })).status).toBe(200)
    const later = Date.now() + 0.05 * 60_000 + 1
    const [onA, onB] = await Promise.all([a.resumeIdle(later), b.resumeIdle(later)])
    expect([...onA, ...onB].map((r) => r.thread)).toEqual(['u2'])
    expect(bot.pauseCalls.filter((c) => c.userId === 'u2')).toEqual([
      { userId: 'u2', paused: true },
      { userId: 'u2', paused: false },
    ])
    expect(await bot.say('u2', 'hello')).toEqual(['Hello! Ask me about your order.'])
    const audit = (await call(b, 'ada', '/api/audit?bot=shop')).body as unknown as Array<Record<string, unknown>>
    expect(audit.filter((e) => e.action === 'handoff.auto-resume' && e.target === 'u2')).toEqual([
      expect.objectContaining({ actor: 'system', detail: { idleMinutes: 0.05, assignee: 'ann' } }),
    ])
  })
})
