/**
 * End to end: a default tracker (`@convotrack/core`) against a real collector on a SQLite file,
 * through a counting pass-through proxy so the test sees what was really sent (`/track` singles
 * or `/track/batch`). `convotrack import` of 100 000 rows is in batch-import.volume.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type Collector, startCollector } from '@convotrack/collector'
import { createTracker, type TrackerOptions } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { countingProxy } from './support/counting-proxy'

const dir = mkdtempSync(join(tmpdir(), 'convotrack-batch-e2e-'))
const BOT = { name: 'shop', apiKey: 'shop-key' }

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Universal message `i` of `users` users; the text carries the sequence number within its user. */
const message = (i: number, users: number) => ({
  text: `u${i % users}#${Math.floor(i / users)}`,
  userId: `user-${i % users}`,
  conversationId: `conv-${i % users}`,
})

async function storedRaws(collector: Collector): Promise<Map<string, number>> {
  const { records } = await collector.store.counts()
  const raws = new Map<string, number>()
  for (let id = 1; id <= records; id++) {
    const r = await collector.store.record(id)
    if (r) raws.set(r.raw, (raws.get(r.raw) ?? 0) + 1)
  }
  return raws
}

async function expectOrdered(collector: Collector, users: number, perUser: number): Promise<void> {
  for (let u = 0; u < users; u++) {
    const texts = (await collector.store.transcript(BOT.name, `conv-${u}`)).map((m) => m.text as string)
    expect(texts).toEqual(Array.from({ length: perUser }, (_, n) => `u${u}#${n}`))
  }
}

describe('a default tracker against the collector', () => {
  let collector: Collector
  beforeAll(async () => {
    collector = await startCollector({ port: 0, db: join(dir, 'default.db'), demoBot: false, bots: [BOT] })
  })
  afterAll(() => collector.close())

  it('switches to batches on its own: everything stored once, in order per conversation', async () => {
    const proxy = await countingProxy(collector.url)
    const tracker = createTracker({ apiKey: BOT.apiKey, baseUrl: proxy.url })
    try {
      const N = 3_000
      const USERS = 50
      for (let i = 0; i < N; i++) {
        if (i % 2) tracker.universal.logOutgoing(message(i, USERS))
        else tracker.universal.logIncoming(message(i, USERS))
        if (i % 500 === 499) await sleep(5) // a bot's traffic arrives over time, not in one turn
      }
      const result = await tracker.flush(60_000)
      expect(result).toMatchObject({ delivered: true, sent: N, failed: 0, dropped: 0 })
      expect(await collector.store.counts()).toEqual({ records: N, messages: N })
      const batches = proxy.count('/track/batch')
      const singles = proxy.count('/track')
      expect(batches).toBeGreaterThan(0)
      // Singles only until the first answer carrying the advertisement (one round of requests).
      expect(singles).toBeLessThan(N / 20)
      expect(batches + singles).toBeLessThan(N / 10)
      await expectOrdered(collector, USERS, N / USERS)
    } finally {
      await tracker.close()
      await proxy.close()
    }
  })

  it('`batch: false` keeps one record per request', async () => {
    const proxy = await countingProxy(collector.url)
    const tracker = createTracker({ apiKey: BOT.apiKey, baseUrl: proxy.url, batch: false } as TrackerOptions)
    try {
      const before = await collector.store.counts()
      for (let i = 0; i < 200; i++) tracker.universal.logIncoming({ text: `single ${i}`, userId: `s-${i % 10}` })
      expect(await tracker.flush(60_000)).toMatchObject({ delivered: true, sent: 200 })
      expect(proxy.count('/track')).toBe(200)
      expect(proxy.count('/track/batch')).toBe(0)
      expect((await collector.store.counts()).records - before.records).toBe(200)
    } finally {
      await tracker.close()
      await proxy.close()
    }
  })
})

describe('a collector restart mid-stream', () => {
  it('loses nothing the tracker reported as sent, and stores nothing twice', async () => {
    const db = join(dir, 'restart.db')
    let collector = await startCollector({ port: 0, db, demoBot: false, bots: [BOT] })
    const port = collector.port
    const tracker = createTracker({ apiKey: BOT.apiKey, baseUrl: collector.url })
    const sent = new Set<string>()
    const failed: string[] = []
    tracker.on('sent', (record) => sent.add(record.body))
    tracker.on('error', (error) => failed.push(error.code))
    const N = 4_000
    const USERS = 40
    try {
      let restarted = false
      for (let i = 0; i < N; i++) {
        if (i % 2) tracker.universal.logOutgoing(message(i, USERS))
        else tracker.universal.logIncoming(message(i, USERS))
        if (i % 200 === 199) await sleep(10)
        if (i === N / 2) {
          // Mid-stream: close (connections cut, in-flight requests lost) and start again on the same file and port.
          await collector.close()
          const acknowledged = sent.size
          // Down until the tracker has met the outage (a retry), or has nothing left to send.
          await vi.waitFor(
            () => {
              const s = tracker.stats()
              if (s.retried === 0 && s.queued + s.inFlight > 0) throw new Error('not yet')
            },
            { timeout: 60_000, interval: 5 },
          )
          collector = await startCollector({ port, db, demoBot: false, bots: [BOT] })
          restarted = true
          // Everything acknowledged before the restart is in the file.
          const raws = await storedRaws(collector)
          expect(raws.size).toBeGreaterThanOrEqual(acknowledged)
        }
      }
      expect(restarted).toBe(true)
      const result = await tracker.flush(60_000)
      expect(result).toMatchObject({ delivered: true, failed: 0, dropped: 0 })
      expect(sent.size).toBe(N)
      // The restart did hit traffic: some requests failed and were sent again.
      expect(tracker.stats().retried).toBeGreaterThan(0)
      expect(tracker.stats().batching).toBe(true)
      const raws = await storedRaws(collector)
      for (const body of sent) expect(raws.get(body), body).toBe(1)
      expect(await collector.store.counts()).toEqual({ records: N, messages: N })
      await expectOrdered(collector, USERS, N / USERS)
    } finally {
      await tracker.close()
      await collector.close()
    }
  }, 120_000)
})
