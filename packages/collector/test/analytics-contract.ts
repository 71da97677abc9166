/**
 * The analytics reports' contract (overview, retention, NotHandled phrases for the clusters),
 * the same answers on every database, against a small world computed by hand: five users over
 * three weeks, sessions split by the gap and by `sessionId`, a handoff, feedback on two scales,
 * a user whose first message is a Sunday in UTC and a Monday in Asia/Kolkata. Run by the SQLite
 * and PostgreSQL contract files.
 */
import type { RecordStore } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import type { StoreFactory } from './store-contract'
import { item } from './store-contract'
import { newestFirst, storeSearchHistory } from './support/search-history'

const H = 3_600_000
const MIN = 60_000
const DAY = 24 * H
/** Monday 2 March 2026, 00:00 UTC. */
const T = Date.UTC(2026, 2, 2)
/** Kolkata is UTC+5:30: its Monday starts 5.5 hours before UTC's. */
const IST = 5.5 * H

type Obj = Record<string, unknown>
const inc = (user: string, at: number, body: Obj = {}) =>
  item('shop', 'universal', 'incoming', { userId: user, text: `hi from ${user}`, ...body }, { at })
const out = (user: string, at: number, body: Obj = {}) =>
  item('shop', 'universal', 'outgoing', { userId: user, text: 'answer', ...body }, { at })
const feedback = (user: string, at: number, score: number, scale: 'thumbs' | 'stars') =>
  item(
    'shop',
    'generic',
    'event',
    { type: 'customEvent', name: 'feedback', userId: user, extraInfo: { score, scale } },
    { at },
  )

/** The world, in time order. */
export function world() {
  return [
    // ada, week 1: a session (greet, answer, 5 stars, order.status), 70 minutes' gap, another session.
    inc('ada', T + 10 * H, { intent: { name: 'greet' } }),
    out('ada', T + 10 * H + MIN, { intent: { name: 'greet' } }),
    feedback('ada', T + 10 * H + 2 * MIN, 5, 'stars'),
    inc('ada', T + 10 * H + 20 * MIN, { intent: { name: 'order.status' } }),
    inc('ada', T + 11 * H + 30 * MIN, { intent: { name: 'greet' } }),
    // bob, week 1: two sessions five minutes apart (another sessionId), a thumbs down.
    inc('bob', T + 12 * H, { sessionId: 's1' }),
    inc('bob', T + 12 * H + 5 * MIN, { sessionId: 's2' }),
    feedback('bob', T + 12 * H + 6 * MIN, -1, 'thumbs'),
    // eve: Sunday 20:00 UTC of week 1 = Monday 01:30 of week 2 in Kolkata.
    inc('eve', T + 7 * DAY - 4 * H),
    // week 2: cy on Monday 23:30 UTC, ada on Tuesday.
    inc('cy', T + 7 * DAY + 23 * H + 30 * MIN),
    inc('ada', T + 8 * DAY + 9 * H),
    // week 3: ada, bob, and dee whom the bot did not understand.
    inc('ada', T + 16 * DAY + 9 * H),
    inc('bob', T + 17 * DAY + 8 * H),
    inc('dee', T + 16 * DAY + 10 * H, { text: 'where is my order', intent: { name: 'NotHandled' } }),
    out('dee', T + 16 * DAY + 10 * H + 1000, { text: 'Sorry?', intent: { name: 'NotHandled' } }),
  ]
}

/** Stores the world (in `order`) and the operator's pause in ada's second session. */
async function seed(store: RecordStore, order: 'time' | 'reversed' = 'time'): Promise<void> {
  const items = world()
  if (order === 'reversed') items.reverse()
  for (const i of items) await store.add(i.record, i.messages)
  await store.addAudit({
    ts: T + 11 * H + 35 * MIN,
    actor: 'op',
    action: 'pause',
    bot: 'shop',
    target: 'ada',
    detail: null,
  })
  // A resume is not a handoff of its own.
  await store.addAudit({
    ts: T + 11 * H + 40 * MIN,
    actor: 'op',
    action: 'resume',
    bot: 'shop',
    target: 'ada',
    detail: null,
  })
}

const ALL = { from: T, to: T + 21 * DAY, tz: 'UTC' }

export function runAnalyticsContract(name: string, factory: StoreFactory): void {
  describe(`analytics contract: ${name}`, () => {
    const open: RecordStore[] = []
    const make = async () => {
      const { store } = await factory()
      open.push(store)
      return store
    }
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close()
    })

    it('overview over three weeks: users, sessions split by gap and by sessionId, handoffs, feedback', async () => {
      const store = await make()
      await seed(store)
      const o = await store.overview(ALL)
      expect(o).toMatchObject({
        users: 5,
        newUsers: 5,
        returningUsers: 0,
        // ada 4 (two in week 1 split by the gap), bob 3 (two in week 1 by sessionId), cy, dee, eve.
        sessions: 10,
        conversations: 5,
        // 15 records: 11 incoming, 2 outgoing, 2 feedback events.
        messages: 15,
        incoming: 11,
        outgoing: 2,
        notHandled: 1,
        handoffs: 1,
        feedback: { count: 2, average: 0 },
      })
      expect(o.notHandledRate).toBeCloseTo(1 / 11)
      // A range open at its end counts users by their last message: the same users as a bounded one.
      expect((await store.overview({ from: T + 7 * DAY, tz: 'UTC' })).users).toBe(4)
      expect((await store.overview({ from: T + 7 * DAY, to: T + 90 * DAY, tz: 'UTC' })).users).toBe(4)
      expect((await store.overview({ tz: 'UTC' })).users).toBe(5)
      expect(o.containmentRate).toBeCloseTo(9 / 10)
      // Stars 5 → 1 rated the greet answer; the thumbs down rated no answer (bob had none).
      expect(o.feedback.byIntent).toEqual([
        { intent: '', count: 1, average: -1 },
        { intent: 'greet', count: 1, average: 1 },
      ])
      expect(o.days.map((d) => [new Date(d.t).toISOString().slice(0, 10), d.sessions, d.messages])).toEqual([
        ['2026-03-02', 4, 8],
        ['2026-03-08', 1, 1],
        ['2026-03-09', 1, 1],
        ['2026-03-10', 1, 1],
        ['2026-03-18', 2, 3],
        ['2026-03-19', 1, 1],
      ])
    })

    it('overview of week 2, in UTC and in Asia/Kolkata: new and returning users, day boundaries', async () => {
      const store = await make()
      await seed(store)
      // UTC week 2: ada (Tuesday) returns, cy is new; eve's Sunday is week 1.
      expect(await store.overview({ from: T + 7 * DAY, to: T + 14 * DAY, tz: 'UTC' })).toMatchObject({
        users: 2,
        newUsers: 1,
        returningUsers: 1,
        sessions: 2,
        // Conversations count in the range they started in: cy's; ada's thread began in week 1.
        conversations: 1,
        handoffs: 0,
        containmentRate: 1,
        feedback: { count: 0, average: null },
      })
      // Kolkata's week 2 starts at Sunday 18:30 UTC: eve is in it, new.
      const ist = await store.overview({ from: T + 7 * DAY - IST, to: T + 14 * DAY - IST, tz: 'Asia/Kolkata' })
      expect(ist).toMatchObject({
        users: 3,
        newUsers: 2,
        returningUsers: 1,
        sessions: 3,
        messages: 3,
        conversations: 2,
      })
      // Days start at local midnight: eve's and cy's messages fall on Kolkata's Monday and Tuesday.
      expect(ist.days.map((d) => [d.t, d.messages])).toEqual([
        [T + 7 * DAY - IST, 1],
        [T + 8 * DAY - IST, 2],
      ])
    })

    it('sessions are the same whatever order the messages were stored in', async () => {
      const a = await make()
      const b = await make()
      await seed(a)
      await seed(b, 'reversed')
      // Feedback rates the answer stored before it (arrival order, like NotHandled replies): not compared.
      const without = ({ feedback, ...rest }: Awaited<ReturnType<RecordStore['overview']>>) => ({
        ...rest,
        feedback: { count: feedback.count, average: feedback.average },
      })
      expect(without(await b.overview(ALL))).toEqual(without(await a.overview(ALL)))
    })

    it('retention by week in UTC and in Asia/Kolkata; by day', async () => {
      const store = await make()
      await seed(store)
      expect(await store.retention({ ...ALL, period: 'week', now: T + 30 * DAY })).toEqual({
        period: 'week',
        cohorts: [
          // ada, bob, eve; ada back in week 2; ada and bob in week 3.
          { start: T, users: 3, active: [3, 1, 2] },
          { start: T + 7 * DAY, users: 1, active: [1, 0] },
          { start: T + 14 * DAY, users: 1, active: [1] },
        ],
      })
      const ist = await store.retention({
        from: T - IST,
        to: T + 21 * DAY - IST,
        tz: 'Asia/Kolkata',
        period: 'week',
        now: T + 30 * DAY,
      })
      expect(ist.cohorts).toEqual([
        { start: T - IST, users: 2, active: [2, 1, 2] },
        { start: T + 7 * DAY - IST, users: 2, active: [2, 0] },
        { start: T + 14 * DAY - IST, users: 1, active: [1] },
      ])
      const days = await store.retention({ from: T, to: T + 3 * DAY, tz: 'UTC', period: 'day', now: T + 30 * DAY })
      expect(days.cohorts).toEqual([{ start: T, users: 2, active: [2, 0, 0] }])
      // Asia/Calcutta is Kolkata under a name the store does not keep cohorts for: the same answer from active hours.
      expect(
        await store.retention({
          from: T - IST,
          to: T + 21 * DAY - IST,
          tz: 'Asia/Calcutta',
          period: 'week',
          now: T + 30 * DAY,
        }),
      ).toEqual(ist)
      // Kept on demand, once prepared, from the cohort table: the same answer, by day too (exact at the half hour).
      await store.retentionZoneReady?.('Asia/Calcutta')
      expect(await store.retentionZone?.('Asia/Calcutta')).toMatchObject({ kept: 'demand', ready: true })
      const inIst = (tz: string, period: 'week' | 'day') =>
        store.retention({ from: T - IST, to: T + 21 * DAY - IST, tz, period, now: T + 30 * DAY })
      for (const period of ['week', 'day'] as const)
        expect(await inIst('Asia/Calcutta', period), period).toEqual(await inIst('Asia/Kolkata', period))
    })

    it('retention across a DST change: Europe/Berlin days and weeks, kept and answered from hours', async () => {
      const store = await make()
      // Berlin goes from UTC+1 to UTC+2 at 02:00 on Sunday 29 March 2026 (a 23-hour day).
      const at = (iso: string) => Date.parse(iso)
      for (const x of [
        // fay: Saturday 28th 23:30 local, Sunday 29th 23:30 local, Monday 30th 00:30 local.
        inc('fay', at('2026-03-28T22:30:00Z')),
        inc('fay', at('2026-03-29T21:30:00Z')),
        inc('fay', at('2026-03-29T22:30:00Z')),
        // gus: Sunday 29th 00:30 local (Saturday in UTC), Monday 30th noon.
        inc('gus', at('2026-03-28T23:30:00Z')),
        inc('gus', at('2026-03-30T10:00:00Z')),
      ])
        await store.add(x.record, x.messages)
      const range = { from: at('2026-03-27T23:00:00Z'), to: at('2026-03-30T22:00:00Z'), now: T + 60 * DAY }
      for (const tz of ['Europe/Berlin', 'Europe/Amsterdam']) {
        // Amsterdam keeps Berlin's clock in 2026 and is not kept: the hours give the same answer.
        expect(await store.retention({ ...range, tz, period: 'day' }), tz).toEqual({
          period: 'day',
          cohorts: [
            { start: at('2026-03-27T23:00:00Z'), users: 1, active: [1, 1, 1] },
            { start: at('2026-03-28T23:00:00Z'), users: 1, active: [1, 1] },
          ],
        })
        expect((await store.retention({ ...range, tz, period: 'week' })).cohorts, tz).toEqual([
          { start: at('2026-03-22T23:00:00Z'), users: 2, active: [2, 2] },
        ])
      }
      // Amsterdam kept on demand: prepared, its cohort table gives the same answer across the DST change.
      await store.retentionZoneReady?.('Europe/Amsterdam')
      expect((await store.retention({ ...range, tz: 'Europe/Amsterdam', period: 'day' })).cohorts).toEqual(
        (await store.retention({ ...range, tz: 'Europe/Berlin', period: 'day' })).cohorts,
      )
      // In UTC both were first seen on Saturday 28th; fay came back on the 29th, gus on the 30th.
      const utc = { from: at('2026-03-28T00:00:00Z'), to: at('2026-03-31T00:00:00Z'), now: T + 60 * DAY, tz: 'UTC' }
      expect((await store.retention({ ...utc, period: 'day' })).cohorts).toEqual([
        { start: at('2026-03-28T00:00:00Z'), users: 2, active: [2, 1, 1] },
      ])
    })

    it('handoffs: an operator action counts its session once, whenever the session’s messages arrive; joined sessions count once', async () => {
      const store = await make()
      const add = async (...items: ReturnType<typeof inc>[]) => {
        for (const i of items) await store.add(i.record, i.messages)
      }
      const act = (action: string, target: string, ts: number) =>
        store.addAudit({ ts, actor: 'op', action, bot: 'shop', target, detail: null })
      const day2 = { from: T + DAY, to: T + 2 * DAY, tz: 'UTC' }
      const day3 = { from: T + 2 * DAY, to: T + 3 * DAY, tz: 'UTC' }
      // zed writes at 10:00; the operator pauses and writes at 10:50 and 10:52: past the gap, in no session.
      await add(inc('zed', T + DAY + 10 * H))
      await act('pause', 'zed', T + DAY + 10 * H + 50 * MIN)
      await act('operator-message', 'zed', T + DAY + 10 * H + 52 * MIN)
      expect(await store.overview(day2)).toMatchObject({ sessions: 1, handoffs: 0, containmentRate: 1 })
      // zed's message of 10:45 arrives late (an import): its session covers both actions — one handoff.
      await add(inc('zed', T + DAY + 10 * H + 45 * MIN))
      expect(await store.overview(day2)).toMatchObject({ sessions: 2, handoffs: 1, containmentRate: 0.5 })
      // 10:20 bridges 10:00 and 10:45: one session, handed off, counted at 10:00.
      await add(inc('zed', T + DAY + 10 * H + 20 * MIN))
      expect(await store.overview(day2)).toMatchObject({ sessions: 1, handoffs: 1, containmentRate: 0 })
      expect(await store.overview({ ...day2, from: T + DAY + 10 * H, to: T + DAY + 11 * H })).toMatchObject({
        handoffs: 1,
      })
      // yan has only the bot's messages (it wrote first): a claim on the thread is yan's handoff.
      await add(out('yan', T + 2 * DAY + 9 * H))
      await act('claim', 'yan', T + 2 * DAY + 9 * H + 5 * MIN)
      // Not handoffs: a resume, an action on a thread with no message, an action of no bot.
      await act('resume', 'zed', T + DAY + 10 * H + 55 * MIN)
      await act('pause', 'nobody', T + 2 * DAY + 9 * H)
      await store.addAudit({ ts: T + 2 * DAY, actor: 'op', action: 'pause', bot: null, target: 'yan', detail: null })
      expect(await store.overview(day3)).toMatchObject({ sessions: 1, handoffs: 1 })
      expect(await store.overview({ from: T, to: T + 7 * DAY, tz: 'UTC' })).toMatchObject({ sessions: 2, handoffs: 2 })
      // Erasure takes zed's handoff; a later message of zed's (a new user by that id) is not handed off.
      await store.eraseUser('shop', 'zed')
      await add(inc('zed', T + DAY + 10 * H + 30 * MIN))
      expect(await store.overview({ from: T, to: T + 7 * DAY, tz: 'UTC' })).toMatchObject({ sessions: 2, handoffs: 1 })
      // Retention: yan's session goes with its message.
      await store.deleteOlderThan({ before: Date.now() + DAY, limit: 1000 })
      expect(await store.overview({ from: T, to: T + 7 * DAY, tz: 'UTC' })).toMatchObject({ sessions: 0, handoffs: 0 })
    })

    it('feedback per rated intent over any range: whole UTC days from the day rows, partial days from the hours; erasure', async () => {
      const store = await make()
      // Ten days; each user gets answers (intents a, b, c or none) and rates the latest, in arrival order.
      type Rated = { user: string; ts: number; score: number; intent: string }
      const rated: Rated[] = []
      const last = new Map<string, string>()
      let seed = 7
      const rnd = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31
        return seed / 2 ** 31
      }
      for (let k = 0; k < 160; k++) {
        const user = ['fay', 'gus', 'hal'][k % 3] as string
        const ts = T + Math.floor(k / 16) * DAY + (k % 16) * 90 * MIN + 7 * MIN
        if (rnd() < 0.6) {
          const intent = ['a', 'b', 'c', ''][Math.floor(rnd() * 4)] as string
          const answer = out(user, ts - MIN, intent === '' ? {} : { intent: { name: intent } })
          await store.add(answer.record, answer.messages)
          last.set(user, intent)
        }
        const stars = rnd() < 0.5
        const score = stars ? 1 + Math.floor(rnd() * 5) : rnd() < 0.5 ? -1 : 1
        const f = feedback(user, ts, score, stars ? 'stars' : 'thumbs')
        await store.add(f.record, f.messages)
        rated.push({ user, ts, score: stars ? (score - 3) / 2 : score, intent: last.get(user) ?? '' })
      }
      const recount = (list: Rated[], from: number, to: number | null) => {
        const lo = Math.floor(from / H) * H
        const hi = to === null ? Number.POSITIVE_INFINITY : Math.ceil(to / H) * H
        const by = new Map<string, { n: number; sum: number }>()
        for (const r of list)
          if (r.ts >= lo && r.ts < hi) {
            const e = by.get(r.intent) ?? { n: 0, sum: 0 }
            e.n++
            e.sum += r.score
            by.set(r.intent, e)
          }
        const lines = [...by].map(([intent, e]) => ({ intent, count: e.n, average: e.sum / e.n }))
        const count = lines.reduce((n, l) => n + l.count, 0)
        const sum = [...by.values()].reduce((n, e) => n + e.sum, 0)
        return {
          count,
          average: count > 0 ? sum / count : null,
          byIntent: lines.sort((x, y) => y.count - x.count || (x.intent < y.intent ? -1 : x.intent > y.intent ? 1 : 0)),
        }
      }
      const ranges: Array<[number, number | null]> = [
        [T, T + 10 * DAY],
        [T + 2 * DAY, T + 5 * DAY],
        [T + DAY + 5 * H, T + 6 * DAY + 7 * H],
        [T + 3 * DAY + 2 * H, T + 3 * DAY + 20 * H],
        [T + 3 * DAY + 20 * H, T + 4 * DAY + 3 * H],
        [T + 4 * DAY + 9 * H + 30 * MIN, null],
        [0, null],
      ]
      const check = async (list: Rated[]) => {
        for (const [from, to] of ranges) {
          const q = to === null ? { from, tz: 'UTC' } : { from, to, tz: 'UTC' }
          expect((await store.overview(q)).feedback, `${new Date(from).toISOString()} ${to}`).toEqual(
            recount(list, from, to),
          )
        }
      }
      await check(rated)
      await store.eraseUser('shop', 'gus')
      await check(rated.filter((r) => r.user !== 'gus'))
    })

    it('erasure takes a user’s sessions, handoff and feedback out; retention sweeps re-derive what stays', async () => {
      const store = await make()
      await seed(store)
      // A zone kept on demand (Kolkata under its other name) follows erasure and retention like the kept one.
      await store.retentionZoneReady?.('Asia/Calcutta')
      const sameAsKept = async () => {
        for (const period of ['day', 'week', 'month'] as const)
          expect(await store.retention({ ...ALL, tz: 'Asia/Calcutta', period, now: T + 30 * DAY }), period).toEqual(
            await store.retention({ ...ALL, tz: 'Asia/Kolkata', period, now: T + 30 * DAY }),
          )
      }
      await sameAsKept()
      await store.eraseUser('shop', 'ada')
      await sameAsKept()
      expect(await store.overview(ALL)).toMatchObject({
        users: 4,
        sessions: 6,
        handoffs: 0,
        messages: 8,
        feedback: { count: 1, average: -1, byIntent: [{ intent: '', count: 1, average: -1 }] },
      })
      // Retention deletes by receive time: week 1 goes; bob's week-3 session stays.
      await store.deleteOlderThan({ before: T + 7 * DAY - 5 * H, limit: 1000 })
      const o = await store.overview(ALL)
      expect(o).toMatchObject({ users: 4, sessions: 4, messages: 5, feedback: { count: 0, average: null } })
      expect((await store.overview({ from: T, tz: 'UTC' })).users).toBe(4)
      const w1 = await store.overview({ from: T, to: T + 7 * DAY, tz: 'UTC' })
      expect(w1).toMatchObject({ users: 1, sessions: 1 })
      await sameAsKept()
      expect(
        (await store.retention({ ...ALL, tz: 'Asia/Calcutta', period: 'week', now: T + 30 * DAY })).cohorts,
      ).not.toEqual([])
    })

    it('paths: the first incoming intents of sessions, most common first, by depth', async () => {
      const store = await make()
      await seed(store)
      // Sessions with intents: ada week 1 (greet, order.status), ada's second (greet), dee (NotHandled).
      expect(await store.paths({ ...ALL, depth: 4, limit: 10 })).toEqual([
        { intents: ['NotHandled'], sessions: 1 },
        { intents: ['greet'], sessions: 1 },
        { intents: ['greet', 'order.status'], sessions: 1 },
      ])
      expect(await store.paths({ ...ALL, depth: 1, limit: 10 })).toEqual([
        { intents: ['greet'], sessions: 2 },
        { intents: ['NotHandled'], sessions: 1 },
      ])
      expect(await store.paths({ ...ALL, depth: 1, limit: 1 })).toEqual([{ intents: ['greet'], sessions: 2 }])
    })

    it('funnel: users who did each step after the one before, in the range; erasure takes them out', async () => {
      const store = await make()
      await seed(store, 'reversed')
      const funnel = (steps: string) =>
        store.funnel({
          ...ALL,
          steps: steps
            .split(',')
            .map((s) => ({ kind: s.split(':')[0] as 'intent' | 'event', name: s.slice(s.indexOf(':') + 1) })),
        })
      // ada: greet 10:00, order.status 10:20 (the same hour), greet again 11:30.
      expect(await funnel('intent:greet,intent:order.status,intent:greet')).toEqual([
        { step: 'intent:greet', users: 1 },
        { step: 'intent:order.status', users: 1 },
        { step: 'intent:greet', users: 1 },
      ])
      expect(await funnel('intent:order.status,intent:greet,intent:order.status')).toEqual([
        { step: 'intent:order.status', users: 1 },
        { step: 'intent:greet', users: 1 },
        { step: 'intent:order.status', users: 0 },
      ])
      // Feedback is an event: ada and bob rated; only ada greeted first.
      expect(await funnel('event:feedback,intent:greet')).toEqual([
        { step: 'event:feedback', users: 2 },
        { step: 'intent:greet', users: 1 },
      ])
      expect(await funnel('intent:greet,event:feedback')).toEqual([
        { step: 'intent:greet', users: 1 },
        { step: 'event:feedback', users: 1 },
      ])
      // Week 2 has none of it.
      expect(
        await store.funnel({ from: T + 7 * DAY, to: T + 14 * DAY, steps: [{ kind: 'intent', name: 'greet' }] }),
      ).toEqual([{ step: 'intent:greet', users: 0 }])
      await store.eraseUser('shop', 'ada')
      expect(await funnel('event:feedback,intent:greet')).toEqual([
        { step: 'event:feedback', users: 1 },
        { step: 'intent:greet', users: 0 },
      ])
    })

    it('notHandled takes a limit (the clusters read the most frequent 1 000)', async () => {
      const store = await make()
      for (let i = 0; i < 3; i++) {
        const x = inc(`u${i}`, T + i * MIN, { text: `question ${i % 2}`, intent: { name: 'NotHandled' } })
        await store.add(x.record, x.messages)
      }
      expect((await store.notHandled({ ...ALL, limit: 1 })).map((l) => [l.text, l.count])).toEqual([['question 0', 2]])
      expect(await store.notHandled(ALL)).toHaveLength(2)
    })
  })
}

export function runSearchContract(name: string, factory: StoreFactory): void {
  describe(`search contract: ${name}`, () => {
    const open: RecordStore[] = []
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close()
    })

    it('words, "quoted phrases" and prefix*, newest first, paged; scoped; erasure removes the text', async () => {
      const { store } = await factory()
      open.push(store)
      const texts: Array<[string, string, number]> = [
        ['ada', 'Where is my order?', T],
        ['bob', 'my order is where exactly', T + MIN],
        ['cy', 'ordering a pizza', T + 2 * MIN],
        ['ada', 'Where IS my parcel', T + 3 * MIN],
        ['dee', 'cancel my subscription', T + 4 * MIN],
      ]
      for (const [user, text, at] of texts) {
        const x = inc(user, at, { text })
        await store.add(x.record, x.messages)
      }
      const other = item('other', 'universal', 'incoming', { userId: 'zed', text: 'where is my order' }, { at: T })
      await store.add(other.record, other.messages)
      const range = { from: T - DAY, to: T + DAY }
      const texts_ = async (q: string, extra: Obj = {}) =>
        (await store.search({ ...range, bot: 'shop', q, ...extra })).map((h) => h.text)
      expect(await texts_('where my')).toEqual([
        'Where IS my parcel',
        'my order is where exactly',
        'Where is my order?',
      ])
      expect(await texts_('"where is my"')).toEqual(['Where IS my parcel', 'Where is my order?'])
      expect(await texts_('order*')).toEqual(['ordering a pizza', 'my order is where exactly', 'Where is my order?'])
      expect(await texts_('"is my" order')).toEqual(['Where is my order?'])
      // Operators of the query languages are only text.
      expect(await texts_('order OR pizza')).toEqual([])
      expect(await texts_('NEAR(where order) -')).toEqual([])
      // Pages: newest first, the next after the last hit's (ts, id).
      const first = await store.search({ ...range, bot: 'shop', q: 'my', limit: 2 })
      expect(first.map((h) => h.userId)).toEqual(['dee', 'ada'])
      const last = first[1] as (typeof first)[number]
      const second = await store.search({ ...range, bot: 'shop', q: 'my', limit: 2, cursor: `${last.ts}:${last.id}` })
      expect(second.map((h) => h.text)).toEqual(['my order is where exactly', 'Where is my order?'])
      expect(second[0]).toMatchObject({ bot: 'shop', thread: 'bob', userId: 'bob', direction: 'incoming', ts: T + MIN })
      // The scope: both bots, or none.
      expect((await store.search({ ...range, q: '"where is my order"' })).map((h) => h.bot).sort()).toEqual([
        'other',
        'shop',
      ])
      expect(await store.search({ ...range, bots: [], q: 'order' })).toEqual([])
      // Erasure: the user's text is gone from the index.
      await store.eraseUser('shop', 'ada')
      expect(await texts_('where')).toEqual(['my order is where exactly'])
      expect(await texts_('parcel')).toEqual([])
    })

    it('pages of a common and a rare word are exact: every hit once, newest first, imported history included', async () => {
      const { store } = await factory()
      open.push(store)
      const sent = await storeSearchHistory(store, T)
      const range = { from: T - 500 * DAY, to: T + DAY }
      for (const q of ['order', 'rare', 'hello']) {
        const expected = newestFirst(sent, q)
        const got: string[] = []
        let cursor: string | undefined
        for (;;) {
          const page = await store.search({ ...range, bot: 'shop', q, limit: 37, ...(cursor ? { cursor } : {}) })
          got.push(...page.map((h) => h.text))
          const last = page.at(-1)
          if (page.length < 37 || !last) break
          cursor = `${last.ts}:${last.id}`
        }
        expect(got, q).toEqual(expected)
      }
    })
  })
}
