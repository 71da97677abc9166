import { type ConvotrackError, createTracker, RefusedRecordError, type Tracker } from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'
import { type FakeService, startFakeService } from './support/fake-service'

// Batched delivery (the batch protocol) against a local service that implements it, and a
// spec-only service that must keep getting one record per request.

let svc: FakeService | undefined
let tracker: Tracker | undefined
afterEach(async () => {
  await tracker?.close(2_000)
  tracker = undefined
  await svc?.close()
  svc = undefined
})

function logUsers(t: Tracker, users: number, each: number): void {
  for (let n = 0; n < each; n++)
    for (let u = 0; u < users; u++) t.universal.logIncoming({ text: String(n), userId: `u${u}` })
}

function ordered(s: FakeService, users: number, each: number): void {
  const byUser = new Map<string, number[]>()
  for (const r of s.stored)
    byUser.set(r.body.userId as string, [...(byUser.get(r.body.userId as string) ?? []), Number(r.body.text)])
  expect(byUser.size).toBe(users)
  for (const seq of byUser.values()) expect(seq).toEqual(Array.from({ length: each }, (_, n) => n))
}

describe('batching', () => {
  it('a spec-only service (no Convotrack-Batch header) gets one record per request, with an Idempotency-Key', async () => {
    svc = await startFakeService({ batch: false })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    logUsers(tracker, 20, 10)
    expect(await tracker.flush(10_000)).toMatchObject({ delivered: true, sent: 200 })
    expect(svc.requests).toMatchObject({ track: 200, batch: 0 })
    const keys = svc.stored.map((r) => r.key)
    expect(new Set(keys).size).toBe(200)
    for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
  })

  it('after the header, records go in batches: all stored once, in order per conversation, far fewer requests', async () => {
    svc = await startFakeService({ batch: true })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    tracker.universal.logIncoming({ text: 'first', userId: 'first' })
    await tracker.flush(5_000) // discovery: the first answer carries the header
    svc.stored.length = 0
    logUsers(tracker, 50, 40)
    expect(await tracker.flush(10_000)).toMatchObject({ delivered: true, sent: 2_001, failed: 0 })
    expect(svc.stored).toHaveLength(2_000)
    ordered(svc, 50, 40)
    expect(svc.requests.track).toBe(1)
    expect(svc.requests.batch).toBeLessThan(100)
    expect(Math.max(...svc.batchSizes)).toBeLessThanOrEqual(500)
  })

  it('batches close at max-records and max-bytes', async () => {
    svc = await startFakeService({ batch: true, maxRecords: 7, maxBytes: 2_000 })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    tracker.universal.logIncoming({ text: 'first', userId: 'first' })
    await tracker.flush(5_000)
    for (let i = 0; i < 100; i++) tracker.universal.logIncoming({ text: 'x'.repeat(i % 2 ? 10 : 300), userId: `u${i}` })
    tracker.universal.logIncoming({ text: 'y'.repeat(3_000), userId: 'big' }) // over max-bytes alone: sent on /track
    expect(await tracker.flush(10_000)).toMatchObject({ delivered: true, sent: 102 })
    expect(Math.max(...svc.batchSizes)).toBeLessThanOrEqual(7)
    expect(svc.requests.track).toBe(2)
    expect(svc.stored).toHaveLength(102)
  })

  it('a mixed batch: good records stored, refused ones reported per record (code, path) and counted as failed', async () => {
    svc = await startFakeService({ batch: true })
    const errors: ConvotrackError[] = []
    const sent: string[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, onError: (e) => errors.push(e) })
    tracker.on('sent', (r) => sent.push(r.body))
    tracker.universal.logIncoming({ text: 'first', userId: 'first' })
    await tracker.flush(5_000)
    for (let i = 0; i < 30; i++) {
      // The service refuses an empty userId; the tracker accepts it (the service's rule, not the spec's).
      tracker.trackSerialized({
        platform: 'universal',
        type: 'incoming',
        v: '11.1.0-rest',
        userId: `u${i}`,
        body: JSON.stringify(i % 3 === 0 ? { text: `t${i}`, userId: '' } : { text: `t${i}`, userId: `u${i}` }),
      })
    }
    const result = await tracker.flush(5_000)
    expect(result).toMatchObject({ delivered: false, sent: 21, failed: 10 })
    expect(svc.stored).toHaveLength(21)
    expect(errors).toHaveLength(10)
    for (const e of errors) {
      expect(e).toBeInstanceOf(RefusedRecordError)
      expect(e.code).toBe('missing_field')
      expect((e as RefusedRecordError).path).toBe('userId')
    }
    // Each `sent` event carries the exact body that was stored.
    expect(sent.sort()).toEqual(svc.stored.map((r) => r.raw).sort())
  })

  it('a batch whose answer is lost is retried whole with the same keys: stored once', async () => {
    svc = await startFakeService({ batch: true })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, retry: { minDelayMs: 20 } })
    tracker.universal.logIncoming({ text: 'first', userId: 'first' })
    await tracker.flush(5_000)
    svc.stored.length = 0
    svc.faults.loseAnswers = 2
    logUsers(tracker, 10, 30)
    expect(await tracker.flush(10_000)).toMatchObject({ delivered: true, sent: 301, failed: 0 })
    expect(svc.stored).toHaveLength(300)
    expect(new Set(svc.stored.map((r) => r.key)).size).toBe(300)
    ordered(svc, 10, 30)
    expect(tracker.stats().retried).toBeGreaterThan(0)
  })

  it('batches through 429s and 503s: retried whole, everything stored once and in order', async () => {
    svc = await startFakeService({ batch: true }, { random429: 0.2, retryAfterSec: 0.05 })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    tracker.universal.logIncoming({ text: 'first', userId: 'first' })
    await tracker.flush(5_000)
    logUsers(tracker, 20, 50)
    expect(await tracker.flush(20_000)).toMatchObject({ delivered: true, sent: 1_001, failed: 0 })
    expect(new Set(svc.stored.map((r) => r.key)).size).toBe(1_001)
    svc.stored.shift()
    ordered(svc, 20, 50)
  })

  it('batch: false forces one record per request', async () => {
    svc = await startFakeService({ batch: true })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, batch: false })
    logUsers(tracker, 10, 10)
    expect(await tracker.flush(5_000)).toMatchObject({ delivered: true, sent: 100 })
    expect(svc.requests).toMatchObject({ track: 100, batch: 0 })
  })

  it('a /track/batch that answers 404 falls back to single records, that batch included', async () => {
    svc = await startFakeService({ batch: true, batchNotFound: true })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    tracker.universal.logIncoming({ text: 'first', userId: 'first' })
    await tracker.flush(5_000)
    logUsers(tracker, 10, 10)
    expect(await tracker.flush(5_000)).toMatchObject({ delivered: true, sent: 101, failed: 0 })
    expect(svc.requests.batch).toBe(1)
    expect(svc.stored).toHaveLength(101)
    svc.stored.shift()
    ordered(svc, 10, 10)
  })
})
