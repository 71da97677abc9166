/**
 * The report summaries' contract, run on SQLite and PostgreSQL (sqlite-store.contract.test.ts,
 * pg-store.contract.test.ts): after mixed ingest (out-of-order event times, NotHandled inputs and
 * replies, events, metadata), duplicates, erasure, retention and two writers at once, every
 * report read from the summaries equals a full recount of the stored messages; ranges cut at
 * their edges; day buckets follow the time zone (a DST day included); transcripts go by event time.
 */
import {
  type IncomingRecord,
  type NormalizedMessage,
  normalizeRecord,
  type ReadFilter,
  type RecordPlatform,
  type RecordStore,
  type StoredMessage,
  type StoredRecordType,
} from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { localeOf } from '../src/store/store-rows'
import { freshStores, type StoreFactory } from './store-contract'

type Obj = Record<string, unknown>
type Item = { record: IncomingRecord; messages: NormalizedMessage[] }

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** 2026-03-01 00:00 UTC: a month with a DST change in Europe (29 March) and in the US (8 March). */
const BASE = Date.UTC(2026, 2, 1)

export function rec(
  bot: string,
  platform: string,
  type: string,
  body: Obj,
  at: { eventTs: number; receivedAt?: number; key?: string },
): Item {
  const record: IncomingRecord = {
    bot,
    platform: platform as RecordPlatform,
    type: type as StoredRecordType,
    v: '11.1.0-rest',
    raw: JSON.stringify(body),
    receivedAt: at.receivedAt ?? at.eventTs,
    eventTs: at.eventTs,
  }
  if (at.key !== undefined) record.idempotencyKey = at.key
  return { record, messages: normalizeRecord(platform as RecordPlatform, type as StoredRecordType, body) }
}

/** A deterministic pseudo-random sequence (mulberry32), so a failure replays. */
export function prng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PHRASES = ['Where is my order?', 'where is my ORDER?  ', 'asdf', 'Ünïcode ÄÖÜ', 'cancel', '']

/**
 * `n` records of mixed shapes over three days of event time, arriving out of order (received
 * at BASE + 10 days + i seconds); some carry idempotency keys, a few of them repeated.
 */
export function traffic(n: number, seed: number, keyPrefix = 'k', threadPrefix = ''): Item[] {
  const rnd = prng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T
  const items: Item[] = []
  for (let i = 0; i < n; i++) {
    const bot = pick(['shop', 'shop', 'help'])
    const user = `u${Math.floor(rnd() * 12)}`
    const thread = rnd() < 0.3 || threadPrefix !== '' ? `${threadPrefix}c-${user}-${Math.floor(rnd() * 2)}` : undefined
    const eventTs = BASE + Math.floor(rnd() * 3 * DAY)
    const at = {
      eventTs,
      receivedAt: BASE + 10 * DAY + i * 1000,
      key: rnd() < 0.3 ? `${keyPrefix}${i % 40}` : undefined,
    }
    const r = rnd()
    const base: Obj = { userId: user, ...(thread ? { conversationId: thread } : {}) }
    if (r < 0.35) {
      const nh = rnd() < 0.3
      const body: Obj = { ...base, text: nh ? pick(PHRASES) : `hello ${i % 7}` }
      if (nh) body.intent = { name: 'NotHandled' }
      else if (rnd() < 0.6)
        body.intent = { name: pick(['buy', 'track', 'help']), confidence: Math.round(rnd() * 100) / 100 }
      if (rnd() < 0.3) body.platformUserJson = { locale: pick(['en_GB', 'de_DE', 'fr_FR', 'en-GB']), n: i }
      items.push(rec(bot, pick(['universal', 'generic', 'sms']), 'incoming', body, at))
    } else if (r < 0.7) {
      const body: Obj = { ...base, text: `reply ${i % 5}` }
      // LLM answers (the usage report): tokens with a model, without one, and one it must not count.
      if (i % 3 === 0)
        body.platformJson = {
          ...(i % 9 === 0 ? {} : { model: i % 2 ? 'model-a' : 'model-b' }),
          usage: { inputTokens: i % 4 === 0 ? String(i) : i % 5 === 0 ? 1e300 : (i % 50) + 1, outputTokens: i % 7 },
        }
      if (rnd() < 0.25) body.intent = { name: 'NotHandled' }
      else if (rnd() < 0.4) body.intent = { name: pick(['buy', 'track']) }
      items.push(rec(bot, 'universal', 'outgoing', body, at))
    } else {
      const type = pick(['customEvent', 'revenueEvent', 'pageLaunchEvent', 'referralEvent', 'shareEvent'])
      const body: Obj = { ...base, type, name: pick(['signup', 'buy', 'launch']) }
      if (type === 'revenueEvent') body.amount = Math.round(rnd() * 1000) / 100
      if (type === 'pageLaunchEvent' && rnd() < 0.7) body.extraInfo = { url: pick(['https://a/', 'https://b/']) }
      if (type === 'referralEvent' && rnd() < 0.7) body.source = pick(['ADS', 'WEB', 7])
      if (type === 'shareEvent') body.sharedMessage = { text: 'x' }
      items.push(rec(bot, 'generic', 'event', body, at))
    }
  }
  return items
}

/** An event's name in the reports: a page launch's page, a referral's source, else its name. */
export function eventKey(event: NonNullable<StoredMessage['event']>): string {
  const body = event.body as Obj
  if (event.type === 'pageLaunchEvent') return String((body.extraInfo as Obj | undefined)?.url ?? event.name)
  if (event.type === 'referralEvent') return String(body.source ?? '(none)')
  return event.name
}

/** Every stored message, read through the firehose (all time, in pages). */
export async function allMessages(store: RecordStore): Promise<StoredMessage[]> {
  const out: StoredMessage[] = []
  let afterId = 0
  for (;;) {
    const page = await store.recent({ afterId, limit: 5000 })
    if (page.length === 0) break
    out.push(...page)
    if (page.length < 5000) break
    afterId = Math.max(...page.map((m) => m.id))
  }
  return out.sort((a, b) => a.id - b.id)
}

const phrase = (t: string | null) => (t ?? '').trim().toLowerCase()
const inRange = (ts: number, f: ReadFilter) => ts >= (f.from ?? 0) && (f.to === undefined || f.to === null || ts < f.to)
const byTsId = (a: StoredMessage, b: StoredMessage) => a.ts - b.ts || a.id - b.id

/**
 * The NotHandled inputs, recounted: incoming NotHandled, and the latest incoming stored before
 * each outgoing NotHandled reply (arrival order: what the bot had when it replied).
 */
function nhInputs(all: StoredMessage[]): StoredMessage[] {
  const inputs = new Map<number, StoredMessage>()
  for (const m of all) if (m.direction === 'incoming' && m.intent === 'NotHandled') inputs.set(m.id, m)
  for (const o of all) {
    if (o.direction !== 'outgoing' || o.intent !== 'NotHandled') continue
    const before = all
      .filter((i) => i.bot === o.bot && i.thread === o.thread && i.direction === 'incoming' && i.id < o.id)
      .at(-1)
    if (before) inputs.set(before.id, before)
  }
  return [...inputs.values()]
}

/** Every report of `filter`, recounted from the messages (rollup reports at whole hours). */
function recount(all: StoredMessage[], filter: ReadFilter) {
  const inScope = (m: StoredMessage) => filter.bot === undefined || m.bot === filter.bot
  const msgs = all.filter((m) => inScope(m) && inRange(m.ts, filter))
  const intents = new Map<string, { count: number; incoming: number; outgoing: number; sum: number; n: number }>()
  for (const m of msgs) {
    if (m.intent === null || m.direction === 'event') continue
    const e = intents.get(m.intent) ?? { count: 0, incoming: 0, outgoing: 0, sum: 0, n: 0 }
    e.count++
    if (m.direction === 'incoming') e.incoming++
    if (m.direction === 'outgoing') e.outgoing++
    if (m.confidence !== null) {
      e.sum += m.confidence
      e.n++
    }
    intents.set(m.intent, e)
  }
  const nh = new Map<string, { text: string; count: number; users: Set<string>; lastTs: number; bots: Set<string> }>()
  for (const m of nhInputs(all.filter(inScope))) {
    if (!inRange(m.ts, filter)) continue
    const p = phrase(m.text)
    const e = nh.get(p) ?? { text: m.text ?? '', count: 0, users: new Set(), lastTs: 0, bots: new Set() }
    e.count++
    // Users are counted per bot: the same id in two bots is two users.
    e.users.add(`${m.bot}/${m.userId}`)
    e.bots.add(m.bot)
    e.lastTs = Math.max(e.lastTs, m.ts)
    if ((m.text ?? '') < e.text) e.text = m.text ?? ''
    nh.set(p, e)
  }
  const hours = new Map<number, { t: number; incoming: number; outgoing: number; events: number }>()
  for (const m of msgs) {
    const t = Math.floor(m.ts / HOUR) * HOUR
    const b = hours.get(t) ?? { t, incoming: 0, outgoing: 0, events: 0 }
    if (m.direction === 'incoming') b.incoming++
    if (m.direction === 'outgoing') b.outgoing++
    if (m.direction === 'event') b.events++
    hours.set(t, b)
  }
  const events = new Map<string, number>()
  for (const m of msgs) {
    if (!m.event) continue
    const key = eventKey(m.event)
    events.set(`${m.event.type}/${key}`, (events.get(`${m.event.type}/${key}`) ?? 0) + 1)
  }
  return {
    counts: { records: new Set(msgs.map((m) => m.recordId)).size, messages: msgs.length },
    intents: [...intents.entries()]
      .map(([intent, e]) => ({
        intent,
        count: e.count,
        incoming: e.incoming,
        outgoing: e.outgoing,
        avgConfidence: e.n ? e.sum / e.n : null,
      }))
      .sort((a, b) => b.count - a.count || (a.intent < b.intent ? -1 : 1)),
    notHandled: [...nh.values()]
      .map((e) => ({ text: e.text, count: e.count, users: e.users.size, lastTs: e.lastTs, bots: [...e.bots].sort() }))
      .sort((a, b) => b.count - a.count || b.lastTs - a.lastTs),
    timeline: [...hours.values()].sort((a, b) => a.t - b.t),
    events,
  }
}

/** Conversations, recounted (all time): events make and count in none. */
function recountConversations(all: StoredMessage[], nhIds: Set<number>) {
  const threads = new Map<string, StoredMessage[]>()
  for (const m of all.filter((x) => x.direction !== 'event'))
    threads.set(`${m.bot}/${m.thread}`, [...(threads.get(`${m.bot}/${m.thread}`) ?? []), m])
  return [...threads.values()]
    .map((ms) => {
      const last = [...ms].sort(byTsId).at(-1) as StoredMessage
      return {
        bot: last.bot,
        thread: last.thread,
        messages: ms.length,
        lastTs: last.ts,
        lastText: last.text,
        firstTs: Math.min(...ms.map((m) => m.ts)),
        notHandled: ms.filter((m) => nhIds.has(m.id)).length,
        lastId: last.id,
      }
    })
    .sort((a, b) => b.lastTs - a.lastTs || b.lastId - a.lastId)
    .map(({ lastId: _, ...c }) => c)
}

/**
 * The overview's users, new users and conversations, recounted over the range widened to whole
 * hours: users with a message in it; users whose first message ever is in it; threads (events make
 * none) whose first message is in it.
 */
function overviewRecount(
  all: StoredMessage[],
  filter: ReadFilter,
): { users: number; newUsers: number; conversations: number } {
  const from = Math.floor((filter.from ?? 0) / HOUR) * HOUR
  const to = filter.to === undefined || filter.to === null ? null : Math.ceil(filter.to / HOUR) * HOUR
  const within = (t: number) => t >= from && (to === null || t < to)
  const firsts = new Map<string, number>()
  const users = new Set<string>()
  const firstSeen = new Map<string, number>()
  for (const m of all) {
    if (filter.bot !== undefined && m.bot !== filter.bot) continue
    if (m.userId !== '') {
      const u = `${m.bot}/${m.userId}`
      if (within(m.ts)) users.add(u)
      firstSeen.set(u, Math.min(m.ts, firstSeen.get(u) ?? m.ts))
    }
    if (m.direction === 'event') continue
    const k = `${m.bot}/${m.thread}`
    firsts.set(k, Math.min(m.ts, firsts.get(k) ?? m.ts))
  }
  return {
    users: users.size,
    newUsers: [...firstSeen.values()].filter(within).length,
    conversations: [...firsts.values()].filter(within).length,
  }
}

/**
 * The overview of `filter` equals the recount ({@link overviewRecount}), and its NotHandled count
 * the NotHandled report's inputs over the same hours and bots. The report is held to a recount of
 * the messages where they were stored one writer at a time; this holds the overview's hour totals
 * to it wherever the inputs came from (two writers at once can make a reply mark another input
 * than a recount of the stored order would: what the bot had received when it replied).
 */
export async function expectOverviewRecount(
  store: RecordStore,
  all: StoredMessage[],
  filter: ReadFilter,
  what = 'overview',
): Promise<void> {
  const overview = await store.overview(filter)
  expect(overview, what).toMatchObject(overviewRecount(all, filter))
  const lines = await store.notHandled({ ...filter, limit: 5000 })
  expect(lines.length, what).toBeLessThan(5000)
  expect(overview.notHandled, `${what}: NotHandled inputs`).toBe(lines.reduce((n, l) => n + l.count, 0))
}

/** A token count the usage report believes: 0 … 10¹² (a sum of larger ones would overflow). */
const believed = (v: unknown): v is number => typeof v === 'number' && v >= 0 && v <= 1e12

/** `YYYY-MM-DD` of an instant in a time zone. */
const localDay = (t: number, tz: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(t)

/**
 * The usage report, recounted from the stored answers' records: tokens where
 * `platformJson.usage.inputTokens` is a number, per day in `tz` and model.
 */
async function expectUsageMatchesRecount(store: RecordStore, all: StoredMessage[], filter: ReadFilter) {
  const tz = filter.tz ?? 'UTC'
  const lines = new Map<
    string,
    { day: string; model: string | null; n: number; threads: Set<string>; i: number; o: number }
  >()
  for (const m of all) {
    if (m.direction !== 'outgoing' || (filter.bot !== undefined && m.bot !== filter.bot) || !inRange(m.ts, filter))
      continue
    const record = await store.record(m.recordId)
    const pj = (JSON.parse(record?.raw ?? '{}') as Obj).platformJson as Obj | undefined
    const u = pj?.usage as Obj | undefined
    const input = u?.inputTokens
    if (!believed(input)) continue
    const model = typeof pj?.model === 'string' ? pj.model : null
    const day = localDay(m.ts, tz)
    const k = `${day}/${model}`
    const l = lines.get(k) ?? { day, model, n: 0, threads: new Set(), i: 0, o: 0 }
    l.n++
    l.threads.add(`${m.bot}/${m.thread}`)
    l.i += input
    l.o += believed(u?.outputTokens) ? u.outputTokens : 0
    lines.set(k, l)
  }
  const want = [...lines.values()]
    .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : (a.model ?? '') < (b.model ?? '') ? -1 : 1))
    .map((l) => ({
      day: l.day,
      model: l.model,
      messages: l.n,
      conversations: l.threads.size,
      inputTokens: l.i,
      outputTokens: l.o,
    }))
  expect(await store.usage(filter)).toEqual(want)
}

export async function expectMatchesRecount(store: RecordStore, filter: ReadFilter = {}) {
  const all = await allMessages(store)
  await expectUsageMatchesRecount(store, all, filter)
  await expectUsageMatchesRecount(store, all, { ...filter, tz: 'Europe/Berlin' })
  const want = recount(all, filter)
  expect(await store.counts(filter)).toEqual(want.counts)
  const intents = await store.intents(filter)
  expect(intents.map(({ avgConfidence: _, ...i }) => i)).toEqual(want.intents.map(({ avgConfidence: _, ...i }) => i))
  for (const [i, line] of intents.entries()) {
    const avg = want.intents[i]?.avgConfidence ?? null
    if (avg === null) expect(line.avgConfidence).toBeNull()
    else expect(line.avgConfidence).toBeCloseTo(avg, 9)
  }
  const nh = await store.notHandled(filter)
  // Lines of equal count and last time may come in either order: compared as sets.
  const key = (l: { text: string; count: number; users: number; lastTs: number; bots: string[] }) =>
    `${phrase(l.text)}|${l.text}|${l.count}|${l.users}|${l.lastTs}|${l.bots.join(',')}`
  expect(nh.map(key).sort()).toEqual(want.notHandled.map(key).sort())
  expect(nh.map((l) => l.count)).toEqual(want.notHandled.map((l) => l.count))
  expect(await store.timeline({ ...filter, bucketMs: HOUR })).toEqual(want.timeline)
  const ev = await store.events(filter)
  const got = new Map<string, number>()
  for (const c of ev.custom) got.set(`customEvent/${c.name}`, c.count)
  for (const c of ev.revenue.byName) got.set(`revenueEvent/${c.name}`, c.count)
  for (const c of ev.shares.byName) got.set(`shareEvent/${c.name}`, c.count)
  for (const c of ev.pageLaunches) got.set(`pageLaunchEvent/${c.page}`, c.count)
  for (const c of ev.referrals) got.set(`referralEvent/${c.source}`, c.count)
  expect(Object.fromEntries([...got].sort())).toEqual(Object.fromEntries([...want.events].sort()))
  // Segments: users whose first-to-last-seen span meets the range (whole hours), by their latest metadata.
  const users = new Map<string, { first: number; last: number; json: Obj | null }>()
  for (const m of [...all].sort(byTsId)) {
    if (m.userId === '' || (filter.bot !== undefined && m.bot !== filter.bot)) continue
    const u = users.get(`${m.bot}/${m.userId}`) ?? { first: m.ts, last: m.ts, json: null }
    u.first = Math.min(u.first, m.ts)
    u.last = Math.max(u.last, m.ts)
    if (m.userJson) u.json = m.userJson as Obj
    users.set(`${m.bot}/${m.userId}`, u)
  }
  const from = Math.floor((filter.from ?? 0) / HOUR) * HOUR
  const to = filter.to === undefined || filter.to === null ? null : Math.ceil(filter.to / HOUR) * HOUR
  const locales = new Map<string, number>()
  for (const u of users.values()) {
    if (!u.json || u.json.locale === undefined || u.last < from || (to !== null && u.first >= to)) continue
    const l = localeOf(String(u.json.locale))
    locales.set(l, (locales.get(l) ?? 0) + 1)
  }
  const seg = (await store.segments(filter)).find((s) => s.field === 'locale')
  expect(Object.fromEntries((seg?.values ?? []).map((v) => [v.value, v.users]))).toEqual(Object.fromEntries(locales))
  await expectOverviewRecount(store, all, filter)
  if (filter.from === undefined && filter.to === undefined && filter.bot === undefined) {
    const nhIds = new Set(nhInputs(all).map((m) => m.id))
    const convs = await store.conversations({ limit: 5000 })
    expect(
      convs.map(({ bot, thread, messages, lastTs, lastText, firstTs, notHandled }) => ({
        bot,
        thread,
        messages,
        lastTs,
        lastText,
        firstTs,
        notHandled,
      })),
    ).toEqual(recountConversations(all, nhIds))
  }
}

/** Stores `items` in batches of `size` through addMany, every third batch one by one through add. */
export async function load(store: RecordStore, items: Item[], size = 25) {
  for (let i = 0; i < items.length; i += size) {
    const batch = items.slice(i, i + size)
    if ((i / size) % 3 === 2) await Promise.all(batch.map((b) => store.add(b.record, b.messages)))
    else await store.addMany(batch)
  }
}

/** Runs the summaries' contract against stores made by `factory`. */
export function runRollupContract(name: string, factory: StoreFactory): void {
  describe(`report summaries: ${name}`, () => {
    const { fresh, open } = freshStores(factory)

    it('equal a full recount after mixed ingest with duplicates, at all time, per bot and over ranges', async () => {
      const { store } = await fresh()
      const items = traffic(600, 1)
      await load(store, items)
      // The same records again: every one with a key is a duplicate and adds nothing.
      await load(
        store,
        items.filter((i) => i.record.idempotencyKey !== undefined),
        40,
      )
      await expectMatchesRecount(store)
      // The usage report has answers with and without a model to count.
      expect(new Set((await store.usage({})).map((l) => l.model))).toEqual(new Set([null, 'model-a', 'model-b']))
      await expectMatchesRecount(store, { bot: 'shop' })
      await expectMatchesRecount(store, { from: BASE + 5 * HOUR, to: BASE + 30 * HOUR })
      // A whole UTC day between two partial ones (the intents and events: its day rows, their hours).
      await expectMatchesRecount(store, { from: BASE + 5 * HOUR, to: BASE + 2 * DAY + 7 * HOUR })
      await expectMatchesRecount(store, { bot: 'help', from: BASE + DAY })
      // Ends after every input: answered from the per-hour phrase rows, as an open range is.
      await expectMatchesRecount(store, { from: BASE + 5 * HOUR, to: BASE + 40 * DAY })
      await expectMatchesRecount(store, { bot: 'shop', to: BASE + 2 * DAY })
    })

    it('equal a full recount after erasure and retention', async () => {
      const { store } = await fresh()
      await load(store, traffic(500, 2))
      await store.eraseUser('shop', 'u3')
      await store.eraseUser('help', 'u5')
      await expectMatchesRecount(store)
      // Retention goes by receive time (records of the first 150 seconds of arrival), in small steps.
      while ((await store.deleteOlderThan({ before: BASE + 10 * DAY + 150_000, limit: 40 })) > 0) {}
      await expectMatchesRecount(store)
      await expectMatchesRecount(store, { bot: 'shop', from: BASE + 20 * HOUR, to: BASE + 50 * HOUR })
      await expectMatchesRecount(store, { from: BASE + 30 * HOUR })
      // Erased users leave nothing behind in the NotHandled report or the conversations.
      const all = await allMessages(store)
      expect(all.some((m) => m.bot === 'shop' && m.userId === 'u3')).toBe(false)
      expect((await store.conversations({ bot: 'shop', limit: 5000 })).some((c) => c.userId === 'u3')).toBe(false)
    })

    it('equal a full recount after two writers stored at once (same threads, same hours, same keys)', async () => {
      const { store, reopen } = await fresh()
      if (!reopen) return // an in-memory database has no second writer
      const other = await reopen()
      open.push(other)
      const a = traffic(400, 3, 'shared')
      // Same bots, users, hours, phrases and idempotency keys; threads of their own, so which
      // input a NotHandled reply answered never depends on the other writer's uncommitted rows.
      const b = traffic(400, 4, 'shared', 'w2-')
      await Promise.all([load(store, a, 20), load(other, b, 20)])
      await expectMatchesRecount(store)
      await expectMatchesRecount(other, { bot: 'shop' })
      await expectMatchesRecount(other, { from: BASE + DAY })
    })

    it('NotHandled: a reply marks the input before it once, even when the input came in an earlier batch', async () => {
      const { store } = await fresh()
      const at = (m: number) => ({ eventTs: BASE + m * 60_000 })
      await store.addMany([rec('b', 'universal', 'incoming', { text: 'Blorp?', userId: 'u' }, at(1))])
      await store.addMany([
        rec('b', 'universal', 'outgoing', { text: 'Sorry?', userId: 'u', intent: { name: 'NotHandled' } }, at(2)),
        rec('b', 'universal', 'outgoing', { text: 'Still no', userId: 'u', intent: { name: 'NotHandled' } }, at(3)),
      ])
      // An input stored late with an earlier event time is not the one the reply answered.
      await store.add(...args(rec('b', 'universal', 'incoming', { text: 'older', userId: 'u' }, at(0))))
      expect(await store.notHandled({})).toEqual([
        { text: 'Blorp?', count: 1, users: 1, lastTs: BASE + 60_000, bots: ['b'] },
      ])
      expect((await store.conversations({}))[0]).toMatchObject({ notHandled: 1, messages: 4, firstTs: BASE })
      await expectMatchesRecount(store)
    })

    it('NotHandled: a long input is stored and grouped by its first 500 characters (a summary key stays indexable)', async () => {
      const { store } = await fresh()
      // 6 000 characters that do not compress: past PostgreSQL's ~2.7 kB index row limit as a key.
      const rnd = prng(7)
      const long = Array.from({ length: 6000 }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join('')
      const said = (text: string, user: string, m: number) =>
        rec(
          'b',
          'universal',
          'incoming',
          { text, userId: user, intent: { name: 'NotHandled' } },
          { eventTs: BASE + m * 60_000 },
        )
      const results = await store.addMany([said(long, 'u1', 1), said(`${long.slice(0, 500)}-other ending`, 'u2', 2)])
      expect(results.map((r) => r.duplicate)).toEqual([false, false])
      const [line] = await store.notHandled({})
      expect(line).toMatchObject({ count: 2, users: 2, lastTs: BASE + 120_000 })
      await store.eraseUser('b', 'u2')
      expect(await store.notHandled({})).toMatchObject([{ count: 1, users: 1, lastTs: BASE + 60_000 }])
    })

    it('ranges: from inclusive, to exclusive, at hour edges; the timeline cuts partial hours exactly', async () => {
      const { store } = await fresh()
      const hi = (t: number, text = 'hi') => rec('b', 'universal', 'incoming', { text, userId: 'u' }, { eventTs: t })
      await store.addMany([hi(BASE - 1), hi(BASE), hi(BASE + HOUR - 1), hi(BASE + HOUR), hi(BASE + 2 * HOUR)])
      expect(await store.counts({ from: BASE, to: BASE + HOUR })).toEqual({ records: 2, messages: 2 })
      expect(await store.counts({ from: BASE + HOUR })).toEqual({ records: 2, messages: 2 })
      expect(await store.counts({ to: BASE })).toEqual({ records: 1, messages: 1 })
      // A range edge inside an hour: the timeline reads that part from the messages.
      expect(await store.timeline({ bucketMs: HOUR, from: BASE + 1, to: BASE + HOUR + 1 })).toEqual([
        { t: BASE, incoming: 1, outgoing: 0, events: 0 },
        { t: BASE + HOUR, incoming: 1, outgoing: 0, events: 0 },
      ])
      expect(await store.timeline({ bucketMs: 60_000, from: BASE, to: BASE + HOUR })).toEqual([
        { t: BASE, incoming: 1, outgoing: 0, events: 0 },
        { t: BASE + HOUR - 60_000, incoming: 1, outgoing: 0, events: 0 },
      ])
      expect((await store.recent({ from: BASE, to: BASE + HOUR })).map((m) => m.ts)).toEqual([BASE, BASE + HOUR - 1])
      expect((await store.conversations({ from: BASE + 3 * HOUR })).length).toBe(0)
      expect((await store.conversations({ to: BASE - 1 })).length).toBe(0)
      expect((await store.conversations({ from: BASE + HOUR, to: BASE + HOUR + 1 })).length).toBe(1)
    })

    it('day buckets in a time zone: midnight local time, a 23-hour DST day, a half-hour zone', async () => {
      const { store } = await fresh()
      // Europe/Berlin: 29 March 2026 has 23 hours (02:00 → 03:00); midnight is 23:00 UTC before, 22:00 UTC after.
      const mar28 = Date.UTC(2026, 2, 27, 23)
      const mar29 = Date.UTC(2026, 2, 28, 23)
      const mar30 = Date.UTC(2026, 2, 29, 22)
      const at = (t: number) => rec('b', 'universal', 'incoming', { text: 'x', userId: 'u' }, { eventTs: t })
      await store.addMany([at(mar28), at(mar29 - 1), at(mar29), at(mar30 - 1), at(mar30), at(mar30 + 5 * HOUR)])
      const day = await store.timeline({ bucketMs: DAY, tz: 'Europe/Berlin', from: mar28, to: mar30 + DAY })
      expect(day).toEqual([
        { t: mar28, incoming: 2, outgoing: 0, events: 0 },
        { t: mar29, incoming: 2, outgoing: 0, events: 0 },
        { t: mar30, incoming: 2, outgoing: 0, events: 0 },
      ])
      expect(mar30 - mar29).toBe(23 * HOUR)
      // UTC days differ: the same messages fall on other days.
      const utc = await store.timeline({ bucketMs: DAY, from: mar28, to: mar30 + DAY })
      expect(utc.map((b) => b.t)).toEqual([27, 28, 29, 30].map((d) => Date.UTC(2026, 2, d)))
      expect(utc.map((b) => b.incoming)).toEqual([1, 2, 2, 1])
      // Asia/Kolkata (+05:30): each UTC hour goes to the local day its start falls in.
      const kolkata = await store.timeline({ bucketMs: DAY, tz: 'Asia/Kolkata', from: mar28, to: mar30 + DAY })
      expect(kolkata.reduce((n, b) => n + b.incoming, 0)).toBe(6)
      for (const b of kolkata) expect(new Date(b.t + 5.5 * HOUR).toISOString().slice(11, 16)).toBe('00:00')
    })

    it('event time: transcripts and the firehose in event-time order; receivedAt kept', async () => {
      const { store } = await fresh()
      const received = BASE + 40 * DAY
      const said = (text: string, eventTs: number) =>
        rec('b', 'universal', 'incoming', { text, userId: 'u' }, { eventTs, receivedAt: received })
      await store.addMany([said('second', BASE + 2000), said('first', BASE + 1000), said('third', BASE + 3000)])
      const t = await store.transcript('b', 'u')
      expect(t.map((m) => m.text)).toEqual(['first', 'second', 'third'])
      expect(t.map((m) => m.receivedAt)).toEqual([received, received, received])
      expect(t.map((m) => m.ts)).toEqual([BASE + 1000, BASE + 2000, BASE + 3000])
      const page = await store.transcript('b', 'u', { limit: 1, beforeId: t[2]?.id })
      expect(page.map((m) => m.text)).toEqual(['second'])
      expect((await store.recent({})).map((m) => m.text)).toEqual(['first', 'second', 'third'])
      // Counted in the hour they happened, not the hour they arrived.
      expect(await store.counts({ from: BASE, to: BASE + HOUR })).toEqual({ records: 3, messages: 3 })
      expect(await store.counts({ from: received - HOUR })).toEqual({ records: 0, messages: 0 })
    })
  })
}

const args = (i: Item) => [i.record, i.messages] as const
