/**
 * Data lifecycle on a real collector, on SQLite and on a real PostgreSQL: erasure of one end
 * user with the live feed open (on PostgreSQL: also the feed of a second collector on the same
 * database) and retention sweeps. The NDJSON export of 100 000 records is in
 * lifecycle-export.volume.test.ts.
 */
import { type Collector, type RecordStore, startCollector } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { eraseUserVerb } from '../src/cli-verbs'
import { addAt, backends } from './support/backends'
import { openStream, type Receiver, say, startReceiver } from './support/team'

let collector: Collector | undefined
let second: Collector | undefined
let receiver: Receiver | undefined
const stores: RecordStore[] = []
afterEach(async () => {
  await collector?.close()
  await second?.close()
  await receiver?.close()
  for (const s of stores.splice(0)) await s.close()
  collector = undefined
  second = undefined
  receiver = undefined
})

// SQLite, and a real PostgreSQL server started for this file (each test gets its own database).
const BACKENDS = backends()

const ADMIN = { authorization: 'Bearer tok_admin_0123456789abcdef' }
const get = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${collector?.url}${path}`, { headers: ADMIN })
  expect(res.status, path).toBe(200)
  return (await res.json()) as T
}

describe.each(BACKENDS)('on $name', (backend) => {
  describe('erasure', () => {
    it('removes one user of one bot from every report, transcript and raw view; the live feed is told', async () => {
      receiver = await startReceiver()
      const db = await backend.db()
      const options = {
        port: 0,
        log: false as const,
        ...(db ? { db } : {}),
        bots: [
          { name: 'shop', apiKey: 'shop-key', pauseWebhookUrl: `${receiver.url}/pause` },
          { name: 'other', apiKey: 'other-key' },
        ],
        auth: { tokens: [{ name: 'admin', token: ADMIN.authorization.slice(7), role: 'admin' as const, bots: ['*'] }] },
      }
      collector = await startCollector(options)
      // On a shared database, a second collector's dashboards are told as well.
      second = db ? await startCollector(options) : undefined
      const url = collector.url
      const gone = [
        await say(url, 'shop-key', 'ada', 'where is my parcel'),
        await say(url, 'shop-key', 'ada', 'blorp zzz'),
        await say(url, 'shop-key', 'ada', 'my address is 1 Secret Lane'),
      ]
      const keptSameBot = await say(url, 'shop-key', 'bob', 'blorp zzz')
      const keptOtherBot = await say(url, 'other-key', 'ada', 'ada on another bot')
      const pause = await fetch(`${url}/api/pause`, {
        method: 'POST',
        headers: { ...ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify({ bot: 'shop', thread: 'ada', paused: true }),
      })
      expect(pause.status).toBe(200)
      const stream = await openStream(`${url}/api/stream`, ADMIN)
      const elsewhere = second ? await openStream(`${second.url}/api/stream`, ADMIN) : undefined

      const res = await fetch(`${url}/api/users/ada?bot=shop`, { method: 'DELETE', headers: ADMIN })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ removed: 3, messages: 3 })

      await expect
        .poll(() => stream.events.find((e) => e.event === 'erase')?.data, { timeout: 5000 })
        .toEqual({
          bot: 'shop',
          userId: 'ada',
          threads: ['ada'],
        })
      stream.close()
      if (elsewhere) {
        await expect
          .poll(() => elsewhere.events.find((e) => e.event === 'erase')?.data, { timeout: 5000 })
          .toEqual({ bot: 'shop', userId: 'ada', threads: ['ada'] })
        elsewhere.close()
        expect(elsewhere.events.filter((e) => e.event === 'erase')).toHaveLength(1)
        // The other collector reads the same database: nothing of ada on shop there either.
        const there = await fetch(`${second?.url}/api/transcript?bot=shop&thread=ada`, { headers: ADMIN })
        expect(await there.json()).toMatchObject({ messages: [], paused: false })
      }
      const transcript = await get<{ messages: unknown[]; paused: boolean }>('/api/transcript?bot=shop&thread=ada')
      expect(transcript).toMatchObject({ messages: [], paused: false })
      for (const id of gone) expect((await fetch(`${url}/api/records/${id}`, { headers: ADMIN })).status).toBe(404)
      expect((await fetch(`${url}/api/records/${keptSameBot}`, { headers: ADMIN })).status).toBe(200)
      expect((await fetch(`${url}/api/records/${keptOtherBot}`, { headers: ADMIN })).status).toBe(200)
      const everything = JSON.stringify([
        await get('/api/messages?limit=5000'),
        await get('/api/conversations'),
        await get('/api/reports/not-handled'),
        await get('/api/reports/intents'),
        await get('/api/reports/segments'),
        await get('/api/reports/events'),
      ])
      for (const text of ['where is my parcel', 'Secret Lane']) expect(everything).not.toContain(text)
      expect(everything).toContain('ada on another bot')
      const shop = await get<Array<{ text: string; userId: string }>>('/api/messages?bot=shop')
      expect(shop.map((m) => [m.userId, m.text])).toEqual([['bob', 'blorp zzz']])
      const audit = await get<Array<Record<string, unknown>>>('/api/audit')
      expect(audit[0]).toMatchObject({
        actor: 'admin',
        action: 'erase',
        bot: 'shop',
        target: 'ada',
        detail: { removed: 3 },
      })
      // The pause of ada is an audited action about her: its details are blanked, the fact stays.
      expect(audit.find((a) => a.action === 'pause')).toMatchObject({ target: 'ada', detail: null })
      const exported = await fetch(`${url}/api/export?bot=shop&user=ada`, { headers: ADMIN })
      expect(exported.status).toBe(200)
      expect(await exported.text()).toBe('')
      const other = await fetch(`${url}/api/export?bot=other&user=ada`, { headers: ADMIN })
      expect(
        (await other.text())
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).raw.text),
      ).toEqual(['ada on another bot'])
    })

    it('the erase-user CLI verb erases from the database and audits it', async () => {
      const file = await backend.cliDb()
      const store = await backend.open(file)
      await addAt(store, 'shop', 'ada', 'one', Date.now())
      await addAt(store, 'shop', 'ada', 'two', Date.now())
      await addAt(store, 'shop', 'bob', 'three', Date.now())
      await store.close()
      expect(await eraseUserVerb(['--db', file, '--bot', 'shop', '--user', 'ada'])).toEqual({ removed: 2, messages: 2 })
      const after = await backend.open(file)
      try {
        expect(await after.counts()).toEqual({ records: 1, messages: 1 })
        expect((await after.audit({}))[0]).toMatchObject({ action: 'erase', target: 'ada', detail: { removed: 2 } })
      } finally {
        await after.close()
      }
      await expect(eraseUserVerb(['--db', file, '--bot', 'shop'])).rejects.toThrow(/--user is required/)
    })
  })

  describe('retention', () => {
    it('deletes records older than retainDays (per bot over global) in small steps; the live feed is told', async () => {
      const inner = await backend.store()
      stores.push(inner)
      const steps: number[] = []
      const store = new Proxy(inner, {
        get(target, prop, receiver) {
          if (prop === 'deleteOlderThan')
            return async (opts: { limit: number }) => {
              const n = await target.deleteOlderThan(opts as Parameters<RecordStore['deleteOlderThan']>[0])
              steps.push(n)
              return n
            }
          return Reflect.get(target, prop, receiver)
        },
      })
      const day = 86_400_000
      const now = Date.now()
      for (let i = 0; i < 1200; i += 100)
        await Promise.all(
          Array.from({ length: 100 }, (_, j) =>
            addAt(store, 'shop', `old-${(i + j) % 7}`, `old shop ${i + j}`, now - 3 * day - i - j),
          ),
        )
      await addAt(store, 'other', 'o1', 'other 3 days old', now - 3 * day)
      await addAt(store, 'other', 'o2', 'other 40 days old', now - 40 * day)
      await addAt(store, 'shop', 'fresh', 'fresh shop', now)
      collector = await startCollector({
        port: 0,
        log: false,
        store,
        retainDays: 30,
        bots: [
          { name: 'shop', apiKey: 'shop-key', retainDays: 1 },
          { name: 'other', apiKey: 'other-key' },
        ],
      })
      const stream = await openStream(`${collector.url}/api/stream`)
      // The sweep at start may already have run; run it (again) and wait for it.
      await collector.sweepRetention()
      await expect
        .poll(() => stream.events.filter((e) => e.event === 'expire').length, { timeout: 5000 })
        .toBeGreaterThan(0)
      stream.close()
      const texts = (await (await fetch(`${collector.url}/api/messages?limit=5000`)).json()) as Array<{ text: string }>
      expect(texts.map((t) => t.text).sort()).toEqual(['fresh shop', 'other 3 days old'])
      expect(steps.every((n) => n <= 500)).toBe(true)
      expect(steps.filter((n) => n > 0).length).toBeGreaterThanOrEqual(3)
      // Ingest goes on as usual after (and between) sweeps.
      await say(collector.url, 'shop-key', 'new', 'after the sweep')
      expect(await collector.store.counts()).toEqual({ records: 3, messages: 3 })
    })

    it('refuses a retainDays that is not a positive number', async () => {
      await expect(startCollector({ port: 0, log: false, retainDays: 0 })).rejects.toThrow(
        /retainDays must be a positive number/,
      )
    })
  })
})
