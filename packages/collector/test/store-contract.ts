/**
 * The RecordStore contract: every method, the same answers whatever the database. Run by
 * sqlite-store.contract.test.ts and pg-store.contract.test.ts against a fresh store per test.
 */

import {
  type IncomingRecord,
  type NormalizedMessage,
  normalizeRecord,
  type ReadFilter,
  type RecordPlatform,
  type RecordStore,
  type StoredMessage,
  type StoredRecord,
  type StoredRecordType,
} from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { GOOD } from './fixtures'

/** Makes a fresh, empty store; `reopen` (when the store persists) opens the same data again after `close`. */
export type StoreFactory = () => Promise<{ store: RecordStore; reopen?: () => Promise<RecordStore> }>

type Obj = Record<string, unknown>
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)

/** A record and its normalized messages, as `POST /track` would store it. */
export function item(
  bot: string,
  platform: string,
  type: string,
  body: Obj,
  opts: { at?: number; key?: string; v?: string } = {},
): { record: IncomingRecord; messages: NormalizedMessage[] } {
  const raw = JSON.stringify(body)
  const record: IncomingRecord = {
    bot,
    platform: platform as RecordPlatform,
    type: type as StoredRecordType,
    v: opts.v ?? '11.1.0-rest',
    raw,
    receivedAt: opts.at ?? T0,
  }
  if (opts.key !== undefined) record.idempotencyKey = opts.key
  return { record, messages: normalizeRecord(platform as RecordPlatform, type as StoredRecordType, body) }
}

const inc = (bot: string, body: Obj, at = T0, key?: string) => item(bot, 'universal', 'incoming', body, { at, key })
const out = (bot: string, body: Obj, at = T0, key?: string) => item(bot, 'universal', 'outgoing', body, { at, key })
const ev = (bot: string, body: Obj, at = T0) => item(bot, 'generic', 'event', body, { at })

const args = (i: ReturnType<typeof item>) => [i.record, i.messages] as const

async function addAll(store: RecordStore, items: Array<ReturnType<typeof item>>) {
  const out: Array<{ id: number; messages: StoredMessage[] }> = []
  for (const i of items) out.push(await store.add(i.record, i.messages))
  return out
}

/** The shop bot's traffic of reports.test.ts, at fixed times, plus another bot. */
async function seedReports(store: RecordStore): Promise<void> {
  const m = 60_000
  await addAll(store, [
    inc(
      'shop',
      {
        text: 'Where is my order?',
        userId: 'ada',
        platformUserJson: { locale: 'en_GB', plan: 'pro' },
        intent: { name: 'NotHandled' },
      },
      T0,
    ),
    inc(
      'shop',
      {
        text: 'where is my order?  ',
        userId: 'bob',
        platformUserJson: { locale: 'de_DE', plan: 'pro' },
        intent: { name: 'NotHandled' },
      },
      T0 + 1,
    ),
    inc('shop', { text: 'asdfgh', userId: 'ada', intent: { name: 'NotHandled' } }, T0 + 2),
    inc(
      'shop',
      {
        text: 'buy shoes',
        userId: 'ada',
        platformUserJson: { locale: 'fr_FR' },
        intent: { name: 'shop', confidence: 0.8 },
      },
      T0 + m,
    ),
    inc('shop', { text: 'buy a hat', userId: 'bob', intent: { name: 'shop', confidence: 0.6 } }, T0 + m + 1),
    out('shop', { text: 'Which size?', userId: 'bob', intent: { name: 'shop' } }, T0 + m + 2),
    out('shop', { text: 'Sorry?', userId: 'ada', conversationId: 'c-ada' }, T0 + 2 * m),
    ev('shop', { type: 'revenueEvent', name: 'purchase', userId: 'ada', amount: 20 }, T0 + 2 * m),
    ev('shop', { type: 'revenueEvent', name: 'purchase', userId: 'bob', amount: 5.5 }, T0 + 2 * m),
    ev('shop', { type: 'revenueEvent', name: 'tip', userId: 'bob', amount: 1 }, T0 + 2 * m),
    ev('shop', { type: 'shareEvent', name: 'share', userId: 'ada', sharedMessage: { text: 'x' } }, T0 + 2 * m),
    ev('shop', { type: 'customEvent', name: 'signup', userId: 'ada' }, T0 + 2 * m),
    ev('shop', { type: 'customEvent', name: 'signup', userId: 'bob' }, T0 + 2 * m),
    ev(
      'shop',
      { type: 'pageLaunchEvent', name: 'launch', userId: 'ada', extraInfo: { url: 'https://shop.example/' } },
      T0 + 2 * m,
    ),
    ev(
      'shop',
      { type: 'pageLaunchEvent', name: 'launch', userId: 'bob', extraInfo: { url: 'https://shop.example/' } },
      T0 + 2 * m,
    ),
    ev('shop', { type: 'pageLaunchEvent', name: 'launch', userId: 'cy' }, T0 + 2 * m),
    ev('shop', { type: 'referralEvent', name: 'ref', userId: 'ada', source: 'ADS' }, T0 + 2 * m),
    ev('shop', { type: 'referralEvent', name: 'ref', userId: 'bob', source: 'ADS' }, T0 + 2 * m),
    ev('shop', { type: 'referralEvent', name: 'ref', userId: 'cy', source: 'WEB' }, T0 + 2 * m),
    ev('shop', { type: 'referralEvent', name: 'ref', userId: 'dee' }, T0 + 2 * m),
    inc('other', { text: 'Where is my order?', userId: 'zed', intent: { name: 'NotHandled' } }, T0 + 3 * m),
  ])
}

/**
 * `fresh()` makes a store with `factory` and closes it (and any store pushed to `open`) after
 * the test. Call inside a describe.
 */
export function freshStores(factory: StoreFactory) {
  const open: RecordStore[] = []
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close()
  })
  const fresh = async () => {
    const made = await factory()
    open.push(made.store)
    return made
  }
  return { fresh, open }
}

/** Runs the whole contract against stores made by `factory`. */
export function runStoreContract(name: string, factory: StoreFactory): void {
  describe(`RecordStore contract: ${name}`, () => {
    const { fresh, open } = freshStores(factory)

    it('add: stores a record and its messages; record(id) gives the raw JSON back byte for byte', async () => {
      const { store } = await fresh()
      const body = { text: 'héllo 👋  "quoted"', userId: 'u1', conversationId: 'c1', sessionId: 's1' }
      const raw = `{ "text": "héllo 👋  \\"quoted\\"",  "userId":"u1","conversationId":"c1","sessionId":"s1" }`
      const r = item('b', 'universal', 'incoming', body)
      const added = await store.add({ ...r.record, raw }, r.messages)
      expect(added.id).toBeGreaterThan(0)
      expect(added.duplicate ?? false).toBe(false)
      expect(added.messages).toHaveLength(1)
      expect(added.messages[0]).toMatchObject({
        recordId: added.id,
        bot: 'b',
        text: 'héllo 👋  "quoted"',
        thread: 'c1',
        conversationId: 'c1',
        sessionId: 's1',
        ts: T0,
      })
      expect(await store.record(added.id)).toEqual({
        id: added.id,
        bot: 'b',
        platform: 'universal',
        type: 'incoming',
        v: '11.1.0-rest',
        receivedAt: T0,
        raw,
      })
      expect(await store.record(added.id + 1000)).toBeUndefined()
    })

    it('add: what is stored reads back exactly as add returned it, for every platform and type', async () => {
      const { store } = await fresh()
      const added: StoredMessage[] = []
      for (const [i, [platform, type, body]] of GOOD.entries()) {
        const r = item('b', platform, type, body(), { at: T0 + i })
        added.push(...(await store.add(r.record, r.messages)).messages)
      }
      expect(added.length).toBeGreaterThanOrEqual(GOOD.length)
      const read = await store.recent({ limit: 5000 })
      expect(read).toEqual(added)
      // Buttons, images, user metadata, intents with confidence and event amounts survive the trip.
      expect(read.some((m) => m.buttons.length > 0)).toBe(true)
      expect(read.some((m) => m.images.length > 0)).toBe(true)
      expect(read.some((m) => m.userJson !== null)).toBe(true)
      expect(read.some((m) => m.confidence !== null)).toBe(true)
    })

    it('add: concurrent adds all land, in order, with increasing ids', async () => {
      const { store } = await fresh()
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const r = inc('b', { text: `m${i}`, userId: `u${i % 3}` }, T0 + i)
          return store.add(r.record, r.messages)
        }),
      )
      const ids = results.map((r) => r.id)
      expect([...ids].sort((a, b) => a - b)).toEqual(ids)
      expect(new Set(ids).size).toBe(50)
      expect((await store.recent({ limit: 100 })).map((m) => m.text)).toEqual(results.map((_, i) => `m${i}`))
      expect(await store.counts()).toEqual({ records: 50, messages: 50 })
    })

    it('add: an idempotency key stores the record once per bot; a repeat answers the stored id, duplicate, no messages', async () => {
      const { store } = await fresh()
      const r = inc('b', { text: 'once', userId: 'u' }, T0, 'k1.0')
      const first = await store.add(r.record, r.messages)
      const again = await store.add(r.record, r.messages)
      expect(first.duplicate ?? false).toBe(false)
      expect(again).toEqual({ id: first.id, duplicate: true, messages: [] })
      // Same key, other bot: another record. No key: always stored.
      const other = inc('c', { text: 'once', userId: 'u' }, T0, 'k1.0')
      expect((await store.add(other.record, other.messages)).duplicate ?? false).toBe(false)
      const plain = inc('b', { text: 'plain', userId: 'u' })
      await store.add(plain.record, plain.messages)
      await store.add(plain.record, plain.messages)
      expect(await store.counts()).toEqual({ records: 4, messages: 4 })
      expect(await store.counts({ bot: 'b' })).toEqual({ records: 3, messages: 3 })
    })

    it('addMany: one transaction, in order; duplicates (stored before or earlier in the batch) answer the stored id', async () => {
      const { store } = await fresh()
      const before = inc('b', { text: 'before', userId: 'u' }, T0, 'k.0')
      const stored = await store.add(before.record, before.messages)
      const results = await store.addMany([
        inc('b', { text: 'one', userId: 'u' }, T0 + 1, 'k.1'),
        inc('b', { text: 'before again', userId: 'u' }, T0 + 2, 'k.0'),
        out('b', { text: 'two', userId: 'u' }, T0 + 3),
        inc('b', { text: 'one again', userId: 'u' }, T0 + 4, 'k.1'),
        item(
          'b',
          'facebook',
          'incoming',
          {
            object: 'page',
            entry: [
              {
                id: 'P',
                time: 1,
                messaging: [
                  { sender: { id: 'S' }, recipient: { id: 'P' }, timestamp: 1, message: { mid: 'a', text: 'x1' } },
                  { sender: { id: 'S' }, recipient: { id: 'P' }, timestamp: 2, message: { mid: 'b', text: 'x2' } },
                ],
              },
            ],
          },
          { at: T0 + 5, key: 'k.2' },
        ),
      ])
      expect(results.map((r) => r.duplicate)).toEqual([false, true, false, true, false])
      expect(results[1]).toEqual({ id: stored.id, duplicate: true, messages: [] })
      expect(results[3]).toEqual({ id: results[0]?.id, duplicate: true, messages: [] })
      const fresh4 = [results[0], results[2], results[4]].map((r) => r?.id ?? 0)
      expect([...fresh4].sort((a, b) => a - b)).toEqual(fresh4)
      expect(results[4]?.messages.map((m) => [m.text, m.recordId])).toEqual([
        ['x1', results[4]?.id],
        ['x2', results[4]?.id],
      ])
      expect((await store.recent({})).map((m) => m.text)).toEqual(['before', 'one', 'two', 'x1', 'x2'])
      expect(await store.counts()).toEqual({ records: 4, messages: 5 })
      expect(await store.addMany([])).toEqual([])
    })

    it('addMany: concurrent batches carrying the same keys store each key once', async () => {
      const { store } = await fresh()
      const batch = (from: number) =>
        Array.from({ length: 20 }, (_, i) => inc('b', { text: `r${from + i}`, userId: 'u' }, T0 + i, `key.${from + i}`))
      const [a, b, c] = await Promise.all([store.addMany(batch(0)), store.addMany(batch(10)), store.addMany(batch(0))])
      expect(await store.counts()).toEqual({ records: 30, messages: 30 })
      const idOf = new Map<string, number>()
      for (const [results, from] of [
        [a, 0],
        [b, 10],
        [c, 0],
      ] as const)
        for (const [i, r] of results.entries()) {
          const key = `key.${from + i}`
          if (idOf.has(key)) expect(r.id).toBe(idOf.get(key))
          else idOf.set(key, r.id)
        }
      expect([...a, ...b, ...c].filter((r) => !r.duplicate)).toHaveLength(30)
    })

    it('recent: newest last, limit, afterId paging, bot filter', async () => {
      const { store } = await fresh()
      const added = await addAll(
        store,
        Array.from({ length: 12 }, (_, i) => inc(i % 3 === 0 ? 'x' : 'y', { text: `m${i}`, userId: 'u' }, T0 + i)),
      )
      expect((await store.recent({})).map((m) => m.text)).toEqual(added.map((_, i) => `m${i}`))
      expect((await store.recent({ limit: 3 })).map((m) => m.text)).toEqual(['m9', 'm10', 'm11'])
      const after = added[5]?.messages[0]?.id ?? 0
      expect((await store.recent({ afterId: after, limit: 2 })).map((m) => m.text)).toEqual(['m10', 'm11'])
      expect((await store.recent({ afterId: after })).map((m) => m.text)).toEqual([
        'm6',
        'm7',
        'm8',
        'm9',
        'm10',
        'm11',
      ])
      expect((await store.recent({ bot: 'x' })).map((m) => m.text)).toEqual(['m0', 'm3', 'm6', 'm9'])
      expect(await store.recent({ bot: 'nobody' })).toEqual([])
    })

    it('conversations: one per thread, most recently active first, with the user, count, last text and pause state', async () => {
      const { store } = await fresh()
      await seedReports(store)
      await store.setPaused('shop', 'bob', true)
      const convs = await store.conversations({ bot: 'shop' })
      // Events make and count in no conversation: cy and dee only sent events.
      expect(convs.map((c) => c.thread)).toEqual(['c-ada', 'bob', 'ada'])
      const byThread = Object.fromEntries(convs.map((c) => [c.thread, c]))
      expect(byThread.bob).toEqual({
        bot: 'shop',
        platform: 'universal',
        thread: 'bob',
        userId: 'bob',
        messages: 3,
        lastText: 'Which size?',
        lastTs: T0 + 60_002,
        paused: true,
        firstTs: byThread.bob?.firstTs,
        notHandled: 1,
        cursor: byThread.bob?.cursor,
      })
      // First message of the thread: bob's NotHandled question, a millisecond after T0.
      expect(byThread.bob?.firstTs).toBe(T0 + 1)
      // Keyset pages: the rows after a row's cursor, and nothing left after the last one.
      expect(await store.conversations({ bot: 'shop', limit: 2, cursor: convs[1]?.cursor as string })).toEqual(
        convs.slice(2, 4),
      )
      expect(await store.conversations({ bot: 'shop', cursor: convs.at(-1)?.cursor as string })).toEqual([])
      expect(byThread['c-ada']).toMatchObject({ userId: 'ada', messages: 1, lastText: 'Sorry?', paused: false })
      expect(byThread.cy).toBeUndefined()
      expect(byThread.dee).toBeUndefined()
      expect(await store.conversations({ bot: 'shop', limit: 2 })).toEqual(convs.slice(0, 2))
      const all = await store.conversations({})
      expect(all[0]).toMatchObject({ bot: 'other', thread: 'zed', messages: 1 })
      expect(all).toHaveLength(convs.length + 1)
    })

    it('transcript: arrival order, the latest `limit`, and paging back with beforeId', async () => {
      const { store } = await fresh()
      await addAll(
        store,
        Array.from({ length: 25 }, (_, i) =>
          i % 2 ? out('b', { text: `t${i}`, userId: 'u' }, T0 + i) : inc('b', { text: `t${i}`, userId: 'u' }, T0 + i),
        ),
      )
      await addAll(store, [inc('b', { text: 'elsewhere', userId: 'v' }), inc('c', { text: 'other bot', userId: 'u' })])
      const all = await store.transcript('b', 'u')
      expect(all.map((m) => m.text)).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`))
      const page1 = await store.transcript('b', 'u', { limit: 10 })
      expect(page1.map((m) => m.text)).toEqual(Array.from({ length: 10 }, (_, i) => `t${15 + i}`))
      const page2 = await store.transcript('b', 'u', { limit: 10, beforeId: page1[0]?.id })
      expect(page2.map((m) => m.text)).toEqual(Array.from({ length: 10 }, (_, i) => `t${5 + i}`))
      const page3 = await store.transcript('b', 'u', { limit: 10, beforeId: page2[0]?.id })
      expect(page3.map((m) => m.text)).toEqual(['t0', 't1', 't2', 't3', 't4'])
      expect(await store.transcript('b', 'u', { beforeId: page3[0]?.id })).toEqual([])
      expect(await store.transcript('b', 'nobody')).toEqual([])
      expect((await store.transcript('c', 'u')).map((m) => m.text)).toEqual(['other bot'])
    })

    it('notHandled: the same input grouped (case and spaces aside), counted, per bot or all', async () => {
      const { store } = await fresh()
      await seedReports(store)
      expect(await store.notHandled({ bot: 'shop' })).toEqual([
        { text: 'Where is my order?', count: 2, users: 2, lastTs: T0 + 1, bots: ['shop'] },
        { text: 'asdfgh', count: 1, users: 1, lastTs: T0 + 2, bots: ['shop'] },
      ])
      const all = await store.notHandled({})
      expect(all[0]).toMatchObject({ text: 'Where is my order?', count: 3, users: 3, lastTs: T0 + 180_000 })
      expect([...(all[0]?.bots ?? [])].sort()).toEqual(['other', 'shop'])
      expect(await store.notHandled({ bot: 'nobody' })).toEqual([])
    })

    it('intents: counts by direction and average confidence (null when none carried one)', async () => {
      const { store } = await fresh()
      await seedReports(store)
      const lines = await store.intents({ bot: 'shop' })
      expect(lines).toEqual([
        { intent: 'NotHandled', count: 3, incoming: 3, outgoing: 0, avgConfidence: null },
        { intent: 'shop', count: 3, incoming: 2, outgoing: 1, avgConfidence: expect.closeTo(0.7, 9) },
      ])
      expect((await store.intents({}))[0]).toEqual({
        intent: 'NotHandled',
        count: 4,
        incoming: 4,
        outgoing: 0,
        avgConfidence: null,
      })
    })

    it('events: custom counts, revenue totals, shares, page launches, referrals by source', async () => {
      const { store } = await fresh()
      await seedReports(store)
      const report = await store.events({ bot: 'shop' })
      expect(report).toEqual({
        custom: [{ name: 'signup', count: 2 }],
        revenue: {
          total: 26.5,
          count: 3,
          byName: [
            { name: 'purchase', total: 25.5, count: 2 },
            { name: 'tip', total: 1, count: 1 },
          ],
        },
        shares: { count: 1, byName: [{ name: 'share', count: 1 }] },
        pageLaunches: [
          { page: 'https://shop.example/', count: 2 },
          { page: 'launch', count: 1 },
        ],
        referrals: [{ source: 'ADS', count: 2 }, expect.anything(), expect.anything()],
      })
      expect([...report.referrals.slice(1)].sort((a, b) => a.source.localeCompare(b.source))).toEqual([
        { source: '(none)', count: 1 },
        { source: 'WEB', count: 1 },
      ])
      expect(await store.events({ bot: 'other' })).toEqual({
        custom: [],
        revenue: { total: 0, count: 0, byName: [] },
        shares: { count: 0, byName: [] },
        pageLaunches: [],
        referrals: [],
      })
      // An event message carries the whole posted body and its amount.
      const purchase = (await store.recent({ bot: 'shop', limit: 500 })).find((m) => m.event?.type === 'revenueEvent')
      expect(purchase?.event).toEqual({
        type: 'revenueEvent',
        name: 'purchase',
        amount: 20,
        body: { type: 'revenueEvent', name: 'purchase', userId: 'ada', amount: 20 },
      })
    })

    it('segments: each user counted once, by their latest metadata', async () => {
      const { store } = await fresh()
      await seedReports(store)
      const segments = await store.segments({ bot: 'shop' })
      const byField = Object.fromEntries(segments.map((s) => [s.field, s.values]))
      expect(Object.keys(byField).sort()).toEqual(['locale', 'plan'])
      expect([...(byField.locale ?? [])].sort((a, b) => a.value.localeCompare(b.value))).toEqual([
        { value: 'de_DE', users: 1 },
        { value: 'fr_FR', users: 1 },
      ])
      expect(byField.plan).toEqual([{ value: 'pro', users: 1 }])
      expect(segments[0]?.field).toBe('locale')
      expect(await store.segments({ bot: 'other' })).toEqual([])
    })

    it('timeline: messages per bucket split by direction, since a time, per bot', async () => {
      const { store } = await fresh()
      await seedReports(store)
      expect(await store.timeline({ bot: 'shop', bucketMs: 60_000 })).toEqual([
        { t: T0, incoming: 3, outgoing: 0, events: 0 },
        { t: T0 + 60_000, incoming: 2, outgoing: 1, events: 0 },
        { t: T0 + 120_000, incoming: 0, outgoing: 1, events: 13 },
      ])
      expect(await store.timeline({ bucketMs: 3_600_000, since: T0 + 60_000 })).toEqual([
        { t: T0, incoming: 3, outgoing: 2, events: 13 },
      ])
      expect(await store.timeline({ bot: 'other', bucketMs: 60_000, since: T0 + 200_000 })).toEqual([])
    })

    it('usage: LLM tokens of the answers per UTC day and model, from platformJson; since a time, per bot', async () => {
      const { store } = await fresh()
      const DAY = 86_400_000
      const llm = (thread: string, model: string | undefined, i: number, o: number, at: number) =>
        out(
          'llm',
          {
            text: 'answer',
            userId: thread,
            conversationId: thread,
            platformJson: {
              traceId: 'a'.repeat(32),
              ...(model ? { model } : {}),
              usage: { inputTokens: i, outputTokens: o },
            },
          },
          at,
        )
      await addAll(store, [
        llm('c1', 'gpt-a', 10, 5, T0),
        llm('c1', 'gpt-a', 30, 10, T0 + 1000),
        llm('c2', 'gpt-a', 7, 3, T0 + 2000),
        llm('c2', 'gpt-b', 100, 50, T0 + 3000),
        llm('c3', undefined, 1, 1, T0 + DAY),
        llm('c3', 'gpt-a', 2, 2, T0 + DAY),
        // Not counted: a question (incoming), an answer without usage, tokens that are not numbers, another bot.
        inc('llm', { text: 'q', userId: 'c1', platformJson: { usage: { inputTokens: 9, outputTokens: 9 } } }, T0),
        out('llm', { text: 'plain', userId: 'c1', platformJson: { traceId: 'b'.repeat(32) } }, T0),
        out(
          'llm',
          { text: 'odd', userId: 'c1', platformJson: { usage: { inputTokens: 'many', outputTokens: 1 } } },
          T0,
        ),
        item(
          'other',
          'universal',
          'outgoing',
          { text: 'x', userId: 'u', platformJson: { usage: { inputTokens: 5, outputTokens: 5 } } },
          { at: T0 },
        ),
      ])
      const day0 = new Date(T0).toISOString().slice(0, 10)
      const day1 = new Date(T0 + DAY).toISOString().slice(0, 10)
      expect(await store.usage({ bot: 'llm' })).toEqual([
        { day: day0, model: 'gpt-a', messages: 3, conversations: 2, inputTokens: 47, outputTokens: 18 },
        { day: day0, model: 'gpt-b', messages: 1, conversations: 1, inputTokens: 100, outputTokens: 50 },
        { day: day1, model: null, messages: 1, conversations: 1, inputTokens: 1, outputTokens: 1 },
        { day: day1, model: 'gpt-a', messages: 1, conversations: 1, inputTokens: 2, outputTokens: 2 },
      ])
      expect((await store.usage({ bot: 'llm', since: T0 + DAY })).map((l) => l.day)).toEqual([day1, day1])
      expect(await store.usage({ bots: ['other'] })).toEqual([
        { day: day0, model: null, messages: 1, conversations: 1, inputTokens: 5, outputTokens: 5 },
      ])
      expect(await store.usage({ bots: [] })).toEqual([])
    })

    it('setPaused / paused: per (bot, thread), latest state wins, unknown threads are not paused', async () => {
      const { store } = await fresh()
      expect(await store.paused('b', 'u')).toBe(false)
      const before = Date.now()
      const state = await store.setPaused('b', 'u', true)
      expect(state).toEqual({ bot: 'b', thread: 'u', paused: true, updatedAt: expect.any(Number) })
      expect(state.updatedAt).toBeGreaterThanOrEqual(before)
      expect(await store.paused('b', 'u')).toBe(true)
      expect(await store.paused('c', 'u')).toBe(false)
      expect(await store.paused('b', 'v')).toBe(false)
      await store.setPaused('b', 'u', false)
      expect(await store.paused('b', 'u')).toBe(false)
    })

    it('messenger pages: saved, replaced by page id, listed', async () => {
      const { store } = await fresh()
      expect(await store.messengerPages()).toEqual([])
      await store.saveMessengerPage({ pageId: '1', appSecret: 's1', verifyToken: 'v1' })
      await store.saveMessengerPage({ pageId: '2', appSecret: 's2', verifyToken: 'v2', bot: 'shop' })
      await store.saveMessengerPage({ pageId: '1', appSecret: 's1b', verifyToken: 'v1b', bot: 'x' })
      const pages = await store.messengerPages()
      expect([...pages].sort((a, b) => a.pageId.localeCompare(b.pageId))).toEqual([
        { pageId: '1', appSecret: 's1b', verifyToken: 'v1b', bot: 'x' },
        { pageId: '2', appSecret: 's2', verifyToken: 'v2', bot: 'shop' },
      ])
    })

    it('counts: records and messages, of all bots or one', async () => {
      const { store } = await fresh()
      expect(await store.counts()).toEqual({ records: 0, messages: 0 })
      await seedReports(store)
      expect(await store.counts()).toEqual({ records: 21, messages: 21 })
      expect(await store.counts({ bot: 'shop' })).toEqual({ records: 20, messages: 20 })
      expect(await store.counts({ bot: 'nobody' })).toEqual({ records: 0, messages: 0 })
    })

    it('notHandled: an outgoing NotHandled reply counts the incoming message it answered (latest before it, same thread), once', async () => {
      const { store } = await fresh()
      const sdk = { v: '12.1.0-npm' }
      const say = (dir: 'incoming' | 'outgoing', text: string, userId: string, intent?: string, bot = 'b') =>
        item(bot, 'universal', dir, { text, userId, ...(intent ? { intent: { name: intent } } : {}) }, sdk)
      await addAll(store, [
        say('incoming', 'hello', 'u1'),
        say('outgoing', 'hi!', 'u1'),
        say('incoming', 'Flibber', 'u1'),
        say('incoming', 'hello', 'u2'), // another thread in between
        say('outgoing', 'Sorry?', 'u1', 'NotHandled'),
        say('outgoing', 'Could you rephrase?', 'u1', 'NotHandled'), // same input: counted once
        say('incoming', 'flibber ', 'u2', 'NotHandled'), // marked on the input itself
        say('outgoing', 'Sorry?', 'u2', 'NotHandled'), // answers the same input: still once
        say('outgoing', 'Nobody asked', 'u3', 'NotHandled'), // no input before it: nothing
        say('incoming', 'zonk', 'u1', undefined, 'c'), // another bot, same thread name
        say('outgoing', 'Eh?', 'u1', 'NotHandled', 'c'),
      ])
      expect(await store.notHandled({ bot: 'b' })).toEqual([
        { text: 'Flibber', count: 2, users: 2, lastTs: T0, bots: ['b'] },
      ])
      expect(await store.notHandled({ bot: 'c' })).toEqual([
        { text: 'zonk', count: 1, users: 1, lastTs: T0, bots: ['c'] },
      ])
      expect(await store.notHandled({})).toEqual([
        { text: 'Flibber', count: 2, users: 2, lastTs: T0, bots: ['b'] },
        { text: 'zonk', count: 1, users: 1, lastTs: T0, bots: ['c'] },
      ])
      expect(await store.notHandled({ bots: ['c'] })).toEqual(await store.notHandled({ bot: 'c' }))
      expect(await store.notHandled({ bot: 'other' })).toEqual([])
    })

    it('add: the dashbot SDK’s record types (all, connect), legacy platforms and any version string are kept', async () => {
      const { store } = await fresh()
      const connect = item('b', 'slack', 'connect', { bot: { id: 'B1' }, team: { id: 'T1' } }, { v: '12.1.0-npm' })
      const all = item(
        'b',
        'facebook',
        'all',
        {
          object: 'page',
          entry: [
            {
              id: 'P',
              time: 1,
              messaging: [
                { sender: { id: 'S' }, recipient: { id: 'P' }, timestamp: 1, message: { mid: 'm1', text: 'in' } },
                {
                  sender: { id: 'P' },
                  recipient: { id: 'S' },
                  timestamp: 2,
                  message: { mid: 'm2', text: 'out', is_echo: true },
                },
              ],
            },
          ],
        },
        { v: '12.1.0-npm' },
      )
      const activity = item(
        'b',
        'microsoft',
        'incoming',
        {
          type: 'message',
          text: 'from teams',
          from: { id: 'mu' },
          recipient: { id: 'bot' },
          conversation: { id: 'mc' },
        },
        { v: '9.9.9-botframework-legacy' },
      )
      const webchat = item('b', 'webchat', 'outgoing', { text: 'web', userId: 'wu' }, { v: '0.0.1-x' })
      expect(connect.messages).toEqual([])
      const added = await store.addMany([connect, all, activity, webchat])
      expect(added.map((a) => a.messages.length)).toEqual([0, 2, 1, 1])
      for (const [i, it] of [connect, all, activity, webchat].entries())
        expect(await store.record(added[i]?.id ?? 0)).toEqual({ id: added[i]?.id, ...it.record })
      const read = await store.recent({})
      expect(read).toEqual(added.flatMap((a) => a.messages))
      expect(read.map((m) => [m.platform, m.direction, m.userId, m.text])).toEqual([
        ['facebook', 'incoming', 'S', 'in'],
        ['facebook', 'outgoing', 'S', 'out'],
        ['microsoft', 'incoming', 'mu', 'from teams'],
        ['webchat', 'outgoing', 'wu', 'web'],
      ])
      expect((await store.conversations({})).map((c) => [c.platform, c.thread])).toEqual([
        ['webchat', 'wu'],
        ['microsoft', 'mc'],
        ['facebook', 'S'],
      ])
      expect(await store.counts()).toEqual({ records: 4, messages: 4 })
    })

    it('ReadFilter.bots: every read keeps to the listed bots, combined with bot; [] matches nothing', async () => {
      const { store } = await fresh()
      await seedReports(store)
      await addAll(store, [
        out('other', { text: 'No idea', userId: 'zed', intent: { name: 'NotHandled' } }, T0 + 200_000),
        ev('third', { type: 'customEvent', name: 'signup', userId: 'q' }, T0 + 200_000),
        inc('third', { text: 'hi', userId: 'q', platformUserJson: { plan: 'free' } }, T0 + 200_000),
      ])
      const reads: Record<string, (f: ReadFilter) => Promise<unknown>> = {
        recent: (f) => store.recent({ ...f, limit: 5000 }),
        conversations: (f) => store.conversations(f),
        notHandled: (f) => store.notHandled(f),
        intents: (f) => store.intents(f),
        events: (f) => store.events(f),
        segments: (f) => store.segments(f),
        timeline: (f) => store.timeline({ ...f, bucketMs: 60_000 }),
        counts: (f) => store.counts(f),
      }
      const none: Record<string, unknown> = {
        recent: [],
        conversations: [],
        notHandled: [],
        intents: [],
        events: {
          custom: [],
          revenue: { total: 0, count: 0, byName: [] },
          shares: { count: 0, byName: [] },
          pageLaunches: [],
          referrals: [],
        },
        segments: [],
        timeline: [],
        counts: { records: 0, messages: 0 },
      }
      for (const [name, read] of Object.entries(reads)) {
        const shop = await read({ bot: 'shop' })
        expect(shop, name).not.toEqual(none[name])
        expect(await read({ bots: ['shop'] }), name).toEqual(shop)
        expect(await read({ bots: ['shop', 'nobody'] }), name).toEqual(shop)
        expect(await read({ bot: 'shop', bots: ['shop', 'other'] }), name).toEqual(shop)
        expect(await read({ bot: 'shop', bots: ['other'] }), name).toEqual(none[name])
        expect(await read({ bots: [] }), name).toEqual(none[name])
        expect(await read({ bots: ['nobody'] }), name).toEqual(none[name])
        expect(await read({ bots: ['shop', 'other', 'third'] }), name).toEqual(await read({}))
      }
      // Two bots of three: exactly theirs.
      const two = await store.recent({ bots: ['other', 'third'], limit: 5000 })
      expect(new Set(two.map((m) => m.bot))).toEqual(new Set(['other', 'third']))
      expect(two).toHaveLength(4)
      expect(await store.counts({ bots: ['other', 'third'] })).toEqual({ records: 4, messages: 4 })
      expect((await store.notHandled({ bots: ['other', 'third'] })).map((l) => [l.text, l.count])).toEqual([
        ['Where is my order?', 1],
      ])
      expect((await store.conversations({ bots: ['other', 'third'] })).map((c) => c.bot).sort()).toEqual([
        'other',
        'third',
      ])
    })

    it('eraseUser: one user of one bot — records, messages, pauses of their threads, audit details; nothing else', async () => {
      const { store } = await fresh()
      const ada1 = await store.add(...args(inc('shop', { text: 'where is my parcel', userId: 'ada' }, T0)))
      const ada2 = await store.add(
        ...args(out('shop', { text: 'In transit', userId: 'ada', conversationId: 'c-ada' }, T0 + 1)),
      )
      const adaEvent = await store.add(
        ...args(ev('shop', { type: 'revenueEvent', name: 'buy', userId: 'ada', amount: 3 }, T0 + 2)),
      )
      const bob = await store.add(...args(inc('shop', { text: 'blorp', userId: 'bob' }, T0 + 3)))
      const adaOther = await store.add(...args(inc('other', { text: 'ada elsewhere', userId: 'ada' }, T0 + 4)))
      await store.setPaused('shop', 'ada', true)
      await store.setPaused('shop', 'c-ada', true)
      await store.setPaused('shop', 'bob', true)
      await store.setPaused('other', 'ada', true)
      const audit = (bot: string, target: string, detail: Record<string, unknown>) =>
        store.addAudit({ ts: T0, actor: 'op', action: 'operator-message', bot, target, detail })
      await audit('shop', 'ada', { text: 'hi ada' })
      await audit('shop', 'c-ada', { text: 'hi again' })
      await audit('shop', 'bob', { text: 'hi bob' })
      await audit('other', 'ada', { text: 'ada on other' })

      const result = await store.eraseUser('shop', 'ada')
      expect({ ...result, threads: [...result.threads].sort() }).toEqual({
        removed: 3,
        messages: 3,
        threads: ['ada', 'c-ada'],
      })
      for (const id of [ada1.id, ada2.id, adaEvent.id]) expect(await store.record(id)).toBeUndefined()
      for (const id of [bob.id, adaOther.id]) expect(await store.record(id)).toBeDefined()
      expect((await store.recent({ limit: 5000 })).map((m) => [m.bot, m.userId, m.text])).toEqual([
        ['shop', 'bob', 'blorp'],
        ['other', 'ada', 'ada elsewhere'],
      ])
      expect(await store.transcript('shop', 'ada')).toEqual([])
      expect(await store.transcript('shop', 'c-ada')).toEqual([])
      expect(await store.events({ bot: 'shop' })).toMatchObject({ revenue: { total: 0, count: 0 } })
      expect(await store.paused('shop', 'ada')).toBe(false)
      expect(await store.paused('shop', 'c-ada')).toBe(false)
      expect(await store.paused('shop', 'bob')).toBe(true)
      expect(await store.paused('other', 'ada')).toBe(true)
      const log = await store.audit({})
      expect(log.map((a) => [a.bot, a.target, a.detail])).toEqual([
        ['other', 'ada', { text: 'ada on other' }],
        ['shop', 'bob', { text: 'hi bob' }],
        ['shop', 'c-ada', null],
        ['shop', 'ada', null],
      ])
      expect(await store.counts()).toEqual({ records: 2, messages: 2 })
      expect(await store.eraseUser('shop', 'ada')).toEqual({ removed: 0, messages: 0, threads: [] })
      expect(await store.eraseUser('nobody', 'ada')).toEqual({ removed: 0, messages: 0, threads: [] })
    })

    it('eraseUser: a record carrying several messages goes whole, with the other messages in it', async () => {
      const { store } = await fresh()
      const entry = (sender: string, mid: string, text: string) => ({
        sender: { id: sender },
        recipient: { id: 'P' },
        timestamp: 1,
        message: { mid, text },
      })
      const batch = item('shop', 'facebook', 'incoming', {
        object: 'page',
        entry: [{ id: 'P', time: 1, messaging: [entry('ada', 'a', 'mine'), entry('bob', 'b', 'his')] }],
      })
      await store.add(batch.record, batch.messages)
      expect(await store.eraseUser('shop', 'ada')).toEqual({ removed: 1, messages: 2, threads: ['ada'] })
      expect(await store.counts()).toEqual({ records: 0, messages: 0 })
    })

    it('exportUser: one user’s records of one bot, in arrival order, page after page, as stored', async () => {
      const { store } = await fresh()
      const mine: number[] = []
      for (let i = 0; i < 1234; i += 200) {
        const batch = Array.from({ length: Math.min(200, 1234 - i) }, (_, j) => {
          const n = i + j
          if (n % 5 === 4) return inc('shop', { text: `not mine ${n}`, userId: 'someone' }, T0 + n)
          if (n % 7 === 6) return inc('other', { text: `other bot ${n}`, userId: 'big' }, T0 + n)
          return n % 2
            ? out('shop', { text: `to big ${n}`, userId: 'big' }, T0 + n)
            : inc('shop', { text: `${n}`, userId: 'big' }, T0 + n)
        })
        const results = await store.addMany(batch)
        for (const [j, r] of results.entries())
          if (batch[j]?.record.bot === 'shop' && batch[j]?.messages[0]?.userId === 'big') mine.push(r.id)
      }
      const got: StoredRecord[] = []
      for await (const r of store.exportUser('shop', 'big')) got.push(r)
      expect(got.map((r) => r.id)).toEqual(mine)
      expect(got.length).toBeGreaterThan(500)
      expect(got[0]).toEqual(await store.record(mine[0] ?? 0))
      expect(got.every((r) => r.bot === 'shop' && JSON.parse(r.raw).userId === 'big')).toBe(true)
      // Stopping early is fine (the iterator is lazy); an unknown user gives nothing.
      for await (const r of store.exportUser('shop', 'big')) {
        expect(r.id).toBe(mine[0])
        break
      }
      const none: StoredRecord[] = []
      for await (const r of store.exportUser('shop', 'nobody')) none.push(r)
      expect(none).toEqual([])
    })

    it('deleteOlderThan: the oldest first, at most `limit`, of one bot or all but some; messages go too', async () => {
      const { store } = await fresh()
      const day = 86_400_000
      // Newest stored first: retention goes by arrival time, not by id.
      await addAll(store, [
        inc('shop', { text: 'fresh', userId: 'u' }, T0),
        ...Array.from({ length: 7 }, (_, i) => inc('shop', { text: `old ${i}`, userId: 'u' }, T0 - 10 * day + i)),
        inc('shop', { text: 'oldest', userId: 'u' }, T0 - 20 * day),
        inc('keep', { text: 'kept old', userId: 'u' }, T0 - 30 * day),
        inc('other', { text: 'other old', userId: 'u' }, T0 - 30 * day),
        ev('shop', { type: 'customEvent', name: 'old event', userId: 'u' }, T0 - 5 * day),
      ])
      const before = T0 - day
      expect(await store.deleteOlderThan({ before, bot: 'shop', limit: 3 })).toBe(3)
      const left = async () => (await store.recent({ bot: 'shop', limit: 5000 })).map((m) => m.text)
      // Gone: "oldest", "old 0", "old 1". The firehose lists by event time (here the arrival time).
      expect(await left()).toEqual(['old 2', 'old 3', 'old 4', 'old 5', 'old 6', 'old event', 'fresh'])
      expect(await store.deleteOlderThan({ before, bot: 'shop', limit: 500 })).toBe(6)
      expect(await store.deleteOlderThan({ before, bot: 'shop', limit: 500 })).toBe(0)
      expect(await left()).toEqual(['fresh'])
      expect(await store.deleteOlderThan({ before, exceptBots: ['keep'], limit: 500 })).toBe(1)
      expect((await store.recent({ limit: 5000 })).map((m) => m.text)).toEqual(['kept old', 'fresh'])
      expect(await store.deleteOlderThan({ before, limit: 500 })).toBe(1)
      expect(await store.counts()).toEqual({ records: 1, messages: 1 })
      expect(await store.deleteOlderThan({ before: T0 + 1, exceptBots: ['shop'], limit: 10 })).toBe(0)
    })

    it('addAudit / audit: newest first, by bots ([] = none), paged with beforeId, limited; details as JSON', async () => {
      const { store } = await fresh()
      const detail = { paused: true, nested: { list: [1, 'two', null] }, text: 'héllo "x"' }
      const first = await store.addAudit({ ts: T0, actor: 'ann', action: 'pause', bot: 'shop', target: 'u1', detail })
      expect(first).toEqual({
        id: expect.any(Number),
        ts: T0,
        actor: 'ann',
        action: 'pause',
        bot: 'shop',
        target: 'u1',
        detail,
      })
      const added = [first]
      for (let i = 1; i < 12; i++)
        added.push(
          await store.addAudit({
            ts: T0 + i,
            actor: i % 2 ? 'bob' : 'ann',
            action: 'operator-message',
            bot: i % 3 ? 'shop' : 'other',
            target: `u${i}`,
            detail: { i },
          }),
        )
      added.push(
        await store.addAudit({
          ts: T0 + 99,
          actor: 'admin',
          action: 'messenger-page',
          bot: null,
          target: null,
          detail: null,
        }),
      )
      const ids = added.map((a) => a.id)
      expect([...ids].sort((a, b) => a - b)).toEqual(ids)
      const all = await store.audit({})
      expect(all).toEqual([...added].reverse())
      expect(await store.audit({ bots: [] })).toEqual([])
      const other = await store.audit({ bots: ['other'] })
      expect(other.map((a) => a.detail)).toEqual([{ i: 9 }, { i: 6 }, { i: 3 }])
      expect((await store.audit({ bots: ['shop', 'other'] })).length).toBe(12)
      expect(await store.audit({ limit: 2 })).toEqual(all.slice(0, 2))
      expect(await store.audit({ beforeId: all[1]?.id, limit: 3 })).toEqual(all.slice(2, 5))
      expect(await store.audit({ bots: ['shop'], beforeId: added[5]?.id })).toEqual(
        added
          .slice(0, 5)
          .filter((a) => a.bot === 'shop')
          .reverse(),
      )
    })

    it('ping: answers while the store is open', async () => {
      const { store } = await fresh()
      await expect(store.ping()).resolves.toBeUndefined()
    })

    it('close: adds still pending are committed, and a persistent store has them after reopening', async () => {
      const made = await fresh()
      const r = inc('b', { text: 'kept', userId: 'u' }, T0, 'kept.1')
      const pending = made.store.add(r.record, r.messages)
      await made.store.close()
      open.splice(open.indexOf(made.store), 1)
      const { id } = await pending
      if (!made.reopen) return
      const again = await made.reopen()
      open.push(again)
      expect((await again.recent({})).map((m) => m.text)).toEqual(['kept'])
      expect((await again.record(id))?.raw).toBe(r.record.raw)
      expect(await again.add(r.record, r.messages)).toEqual({ id, duplicate: true, messages: [] })
    })
  })
}
