/**
 * The handoff queue end to end, on SQLite and on a real PostgreSQL: a real collector, a real bot
 * (core tracker + the @convotrack/express pause and operator-message receivers), the queue
 * filled by what users say, claim / release, auto-pause on an operator message, auto-resume on
 * a driven clock, notes, export and erasure.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { HandoffRow } from '../src/store/handoff-records'
import { backends } from './support/backends'
import { type ChatBot, startShopBot } from './support/chat-bot'

const WAIT = { timeout: 15_000, interval: 20 }

interface Entry {
  bot: string
  thread: string
  userId: string
  state: string
  reason: string | null
  since: number
  text: string | null
  assignee: string | null
  paused: boolean
}

for (const backend of backends()) {
  describe(`handoff queue (${backend.name})`, () => {
    let collector: Collector
    let bot: ChatBot

    beforeAll(async () => {
      collector = await startCollector({
        port: 0,
        db: await backend.db(),
        handoff: { autoResumeMinutes: 0.05 },
        // Only the checks the tests drive (resumeIdle(now)): the timer's, on the real clock, resumed
        // conversations the tests still expected paused once the machine was slow.
        handoffCheckMs: 3_600_000,
        webhookRetry: { attempts: 2, baseDelayMs: 10 },
      })
      bot = await startShopBot(collector)
    })
    afterAll(async () => {
      await bot?.close()
      await collector?.close()
    })

    const get = async (path: string) => {
      const res = await fetch(`${collector.url}${path}`)
      return { status: res.status, body: (await res.json()) as Record<string, any> }
    }
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${collector.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: res.status, body: (await res.json()) as Record<string, any> }
    }
    const queue = async (query = 'bot=shop'): Promise<Entry[]> =>
      (await get(`/api/handoffs?${query}`)).body.handoffs as Entry[]
    /** The desk's row of a conversation (read under the row's lock, changed in nothing). */
    const rowOf = async (thread: string) => {
      let row: HandoffRow | undefined
      await collector.store.updateHandoff('shop', thread, (r) => {
        row = r
        return undefined
      })
      return row
    }
    const entryOf = async (thread: string) => (await queue('bot=shop&state=all')).find((e) => e.thread === thread)
    /** Waits until the conversation is in the queue; resolves to its entry. */
    const queued = (thread: string) =>
      vi.waitFor(async () => {
        const e = await entryOf(thread)
        if (!e) throw new Error(`${thread} not queued yet`)
        return e
      }, WAIT)
    /** Waits until the desk has seen `text` as the conversation's latest incoming message; resolves to the row. */
    const seen = (thread: string, text: string) =>
      vi.waitFor(async () => {
        const r = await rowOf(thread)
        if (r?.lastText !== text) throw new Error(`${text} not seen yet`)
        return r
      }, WAIT)

    it('"talk to a human" puts the conversation in the queue, with the message that did', async () => {
      expect(await bot.say('ada', 'hello')).toEqual(['Hello! Ask me about your order.'])
      await bot.say('ada', 'Can I talk to a human please?')
      const entry = await queued('ada')
      expect(entry).toMatchObject({
        bot: 'shop',
        thread: 'ada',
        userId: 'ada',
        state: 'waiting',
        reason: 'asked',
        text: 'Can I talk to a human please?',
        assignee: null,
        paused: false,
      })
      expect(entry.since).toBeGreaterThan(0)
    })

    it('two NotHandled incoming messages in a row put it in the queue; a handled one in between does not', async () => {
      await bot.say('bo', 'blorp')
      await bot.say('bo', 'where is my order') // handled: the streak starts again
      await bot.say('bo', 'flibber')
      const row = await seen('bo', 'flibber')
      expect(row).toMatchObject({ state: 'idle', streak: 1 })
      expect(await entryOf('bo')).toBeUndefined()
      await bot.say('bo', 'zonk') // the bot's replies in between do not break the streak
      const entry = await queued('bo')
      expect(entry).toMatchObject({ state: 'waiting', reason: 'not-handled', text: 'zonk' })
    })

    it('oldest waiting first; ?state=waiting|assigned filters; a bad state is a 400 naming it', async () => {
      const waiting = await queue('bot=shop&state=waiting')
      expect(waiting.map((e) => e.thread)).toEqual(['ada', 'bo'])
      expect(await queue('bot=shop&state=assigned')).toEqual([])
      const bad = await get('/api/handoffs?state=open')
      expect(bad.status).toBe(400)
      expect(bad.body.error).toMatchObject({ code: 'invalid_request', path: 'state' })
    })

    it('claim assigns and pauses the bot (signed webhook); claiming again is fine; the bot stays silent', async () => {
      const res = await post('/api/handoffs/claim', { bot: 'shop', thread: 'ada' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ thread: 'ada', state: 'assigned', assignee: 'local', paused: true })
      expect(bot.pauseCalls).toContainEqual({ userId: 'ada', paused: true })
      expect(await bot.tracker.isPaused('ada')).toBe(true)
      expect(await bot.say('ada', 'hello?')).toEqual([])
      const again = await post('/api/handoffs/claim', { bot: 'shop', thread: 'ada' })
      expect(again.status).toBe(200)
      expect((await queue('bot=shop&state=assigned')).map((e) => e.thread)).toEqual(['ada'])
      expect((await queue('bot=shop&mine=1')).map((e) => e.thread)).toEqual(['ada'])
      const audit = (await get('/api/audit?bot=shop')).body as unknown as Array<Record<string, unknown>>
      expect(audit).toContainEqual(expect.objectContaining({ action: 'handoff.claim', actor: 'local', target: 'ada' }))
    })

    it('an operator message on a conversation that is not paused pauses it first; the bot stays silent', async () => {
      await bot.say('cy', 'hi')
      const before = bot.pauseCalls.length
      const res = await post('/api/operator-message', { bot: 'shop', thread: 'cy', text: 'Hi, Sam here' })
      expect(res.status).toBe(200)
      expect(res.body.paused).toBe(true)
      // The pause reached the bot before the message did.
      expect(bot.pauseCalls.slice(before)).toEqual([{ userId: 'cy', paused: true }])
      expect(bot.operatorMessages).toContainEqual({ userId: 'cy', text: 'Hi, Sam here' })
      expect(await bot.say('cy', 'hello')).toEqual([])
    })

    it('notes: shown for the transcript, never sent to the user, audit-logged, in the export', async () => {
      const res = await post('/api/notes', { bot: 'shop', thread: 'ada', text: 'VIP, refund approved' })
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        bot: 'shop',
        thread: 'ada',
        userId: 'ada',
        author: 'local',
        text: 'VIP, refund approved',
      })
      const notes = (await get('/api/notes?bot=shop&thread=ada')).body.notes
      expect(notes.map((n: { text: string }) => n.text)).toEqual(['VIP, refund approved'])
      expect(bot.operatorMessages.map((m) => m.text)).not.toContain('VIP, refund approved')
      const audit = (await get('/api/audit?bot=shop')).body as unknown as Array<Record<string, unknown>>
      expect(audit).toContainEqual(expect.objectContaining({ action: 'note.add', target: 'ada' }))
      const empty = await post('/api/notes', { bot: 'shop', thread: 'ada', text: ' ' })
      expect(empty.status).toBe(400)
      expect(empty.body.error.path).toBe('text')
      const lines = (await (await fetch(`${collector.url}/api/export?bot=shop&user=ada`)).text()).trim().split('\n')
      const exported = lines.map((l) => JSON.parse(l))
      expect(exported).toContainEqual(
        expect.objectContaining({ type: 'note', thread: 'ada', text: 'VIP, refund approved' }),
      )
    })

    it('auto-resume: idle for autoResumeMinutes (0.05) → webhook paused:false, off the queue, audit by system, bot answers again', async () => {
      const idleMs = 0.05 * 60_000
      const rows = [await rowOf('ada'), await rowOf('cy')]
      const earliest = Math.min(...rows.map((r) => r?.activeAt ?? Number.POSITIVE_INFINITY))
      // Less than the idle time since the last message: nothing happens.
      expect(await collector.resumeIdle(earliest + idleMs - 1)).toEqual([])
      expect(await bot.tracker.isPaused('ada')).toBe(true)
      const resumed = await collector.resumeIdle(Date.now() + idleMs + 1)
      expect(resumed.map((r) => r.thread).sort()).toEqual(['ada', 'cy'])
      expect(resumed.find((r) => r.thread === 'ada')?.assignee).toBe('local')
      expect(bot.pauseCalls.slice(-2)).toEqual(
        expect.arrayContaining([
          { userId: 'ada', paused: false },
          { userId: 'cy', paused: false },
        ]),
      )
      expect(await bot.say('ada', 'hello')).toEqual(['Hello! Ask me about your order.'])
      expect(await entryOf('ada')).toBeUndefined()
      expect((await get('/api/transcript?bot=shop&thread=ada')).body.paused).toBe(false)
      const audit = (await get('/api/audit?bot=shop')).body as unknown as Array<Record<string, unknown>>
      expect(audit).toContainEqual(
        expect.objectContaining({ action: 'handoff.auto-resume', actor: 'system', target: 'ada' }),
      )
      const notes = (await get('/api/notes?bot=shop&thread=ada')).body.notes as Array<{ author: string; text: string }>
      expect(notes.at(-1)).toMatchObject({ author: 'system' })
      expect(notes.at(-1)?.text).toMatch(/resumed/i)
      // Once: a second check finds nothing to resume.
      expect(await collector.resumeIdle(Date.now() + idleMs + 2)).toEqual([])
    })

    it('a user message restarts the idle time', async () => {
      await post('/api/handoffs/claim', { bot: 'shop', thread: 'dee' })
      await bot.say('dee', 'still there?')
      const row = await seen('dee', 'still there?')
      const [message] = (await get('/api/transcript?bot=shop&thread=dee')).body.messages.filter(
        (m: { text: string }) => m.text === 'still there?',
      )
      expect(row.activeAt).toBe(message.ts)
      expect(await collector.resumeIdle(row.activeAt + 0.05 * 60_000 - 1)).toEqual([])
      expect((await collector.resumeIdle(row.activeAt + 0.05 * 60_000 + 1)).map((r) => r.thread)).toEqual(['dee'])
    })

    it('release unassigns, takes it off the queue and resumes the bot', async () => {
      await bot.say('eve', 'I want a real person')
      await queued('eve')
      await post('/api/handoffs/claim', { bot: 'shop', thread: 'eve' })
      expect(await bot.tracker.isPaused('eve')).toBe(true)
      const res = await post('/api/handoffs/release', { bot: 'shop', thread: 'eve' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ thread: 'eve', paused: false, released: 'local' })
      expect(bot.pauseCalls.at(-1)).toEqual({ userId: 'eve', paused: false })
      expect(await entryOf('eve')).toBeUndefined()
      expect(await bot.say('eve', 'hi')).toEqual(['Hello! Ask me about your order.'])
      const audit = (await get('/api/audit?bot=shop')).body as unknown as Array<Record<string, unknown>>
      expect(audit).toContainEqual(expect.objectContaining({ action: 'handoff.release', target: 'eve' }))
    })

    it('erasure removes the user’s notes and queue entry', async () => {
      await bot.say('fay', 'talk to someone')
      await queued('fay')
      await post('/api/notes', { bot: 'shop', thread: 'fay', text: 'call back at 5' })
      const res = await fetch(`${collector.url}/api/users/fay?bot=shop`, { method: 'DELETE' })
      expect(res.status).toBe(200)
      expect(await entryOf('fay')).toBeUndefined()
      expect((await get('/api/notes?bot=shop&thread=fay')).body.notes).toEqual([])
    })
  })
}
