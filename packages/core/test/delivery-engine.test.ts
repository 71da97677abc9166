import { type ConvotrackError, createTracker, DroppedRecordError, type Tracker } from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'
import { type FakeService, offer, startFakeService } from './support/fake-service'

// The delivery engine with DEFAULT options against local services that behave like real
// networks: far away, rate-limited, refusing at random, silent, flapping, down. Behaviour only
// (everything delivered, no attempts burnt, bounded memory, exact drops); speed is measured in bench/.

let svc: FakeService | undefined
let tracker: Tracker | undefined
afterEach(async () => {
  await tracker?.close(2_000)
  tracker = undefined
  await svc?.close()
  svc = undefined
})

const log = (t: Tracker) => (i: number, userId: string) => t.universal.logIncoming({ text: `m${i}`, userId })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!ok()) {
    if (Date.now() > end) throw new Error(`not true within ${timeoutMs} ms: ${ok}`)
    await sleep(5)
  }
}

/** Resolves in a later millisecond than now (requests are ordered by their send time in ms). */
async function laterMillisecond(): Promise<void> {
  const now = Date.now()
  while (Date.now() <= now) await new Promise((r) => setImmediate(r))
}

function storedOnce(s: FakeService, n: number): void {
  expect(s.stored).toHaveLength(n)
  expect(new Set(s.stored.map((r) => r.body.text)).size).toBe(n)
}

describe('delivery engine, default options', () => {
  it('a service 200 ms away at 500 records/s: concurrency grows past the old fixed 16 and the backlog stays small', async () => {
    svc = await startFakeService({}, { latencyMs: 200 })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    await offer(log(tracker), 1_000, 500)
    // With 16 in flight, 80 records/s: ~800 would still be waiting when the offer ends.
    expect(tracker.stats().queued).toBeLessThan(300)
    expect(svc.maxInFlight).toBeGreaterThan(40)
    expect(await tracker.flush(20_000)).toMatchObject({ delivered: true, sent: 1_000, failed: 0, dropped: 0 })
    storedOnce(svc, 1_000)
    // The sockets follow the limit: about one per request in flight (undici's Pool opened about
    // twice as many), each reused for many records.
    expect(svc.maxSockets).toBeLessThan(svc.maxInFlight * 1.5)
    expect(svc.connections).toBeLessThan(svc.maxInFlight * 2)
  })

  it('a token bucket (100 req/s, 429 + Retry-After: 1 beyond): everything delivered, refusals a minority', async () => {
    svc = await startFakeService({}, { bucketPerSec: 100, retryAfterSec: 1 })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    await offer(log(tracker), 600, 200)
    expect(await tracker.flush(30_000)).toMatchObject({ delivered: true, sent: 600, failed: 0 })
    storedOnce(svc, 600)
    // Paced near the bucket's rate: not a storm of refused requests.
    expect(svc.requests.limited).toBeLessThan(600)
  })

  it('10 % of answers 429 + Retry-After: 1 at random: everything delivered, nothing failed', async () => {
    svc = await startFakeService({}, { random429: 0.1, retryAfterSec: 1 })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    await offer(log(tracker), 1_000, 500)
    expect(await tracker.flush(30_000)).toMatchObject({ delivered: true, sent: 1_000, failed: 0 })
    storedOnce(svc, 1_000)
    expect(svc.requests.limited).toBeGreaterThan(0)
  })

  it('503 + Retry-After: the gate holds every request, then all delivered', async () => {
    svc = await startFakeService({}, { unavailable: true, retryAfterSec: 1 })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    // Wait for two probes: retries that come after the first round's (which all fail at once).
    let firstAt = 0
    let probes = 0
    const twoProbes = new Promise<void>((r) =>
      tracker?.on('retry', () => {
        const now = Date.now()
        if (firstAt === 0) firstAt = now
        else if (now - firstAt >= 500 && ++probes === 2) r()
      }),
    )
    for (let i = 0; i < 300; i++) log(tracker)(i, `u${i}`)
    await twoProbes
    const during = svc.requests.track
    // The first round (at most the starting limit of 16), then about one probe per Retry-After.
    expect(during).toBeLessThanOrEqual(16 + 8 + 4)
    svc.faults.unavailable = false
    expect(await tracker.flush(20_000)).toMatchObject({ delivered: true, sent: 300, failed: 0 })
    storedOnce(svc, 300)
  })

  it('503 + Retry-After to the first record: a record for another conversation waits until the time it gave', async () => {
    let first = true
    svc = await startFakeService(
      {},
      {
        retryAfterSec: 1,
        unavailableIf: (raw) => {
          if (!raw.includes('"first"') || !first) return undefined
          first = false
          return 0
        },
      },
    )
    const s = svc
    tracker = createTracker({ apiKey: 'k', baseUrl: s.url })
    const retried = new Promise<void>((r) => tracker?.on('retry', () => r()))
    tracker.universal.logIncoming({ text: 'first', userId: 'a' })
    await retried // the 503 is in
    tracker.universal.logIncoming({ text: 'second', userId: 'b' })
    expect(await tracker.flush(10_000)).toMatchObject({ delivered: true, sent: 2, failed: 0 })
    const unavailableAt = s.answers.find((a) => a.status === 503)?.at as number
    const second = s.answers.find((a) => a.status === 201 && a.raw.includes('"second"'))?.at as number
    // 503 says the service is unavailable, not this request: nothing goes before the time it gave.
    expect(second - unavailableAt).toBeGreaterThanOrEqual(1_000)
    expect(s.stored.map((r) => r.body.text).sort()).toEqual(['first', 'second'])
  })

  it('503 + Retry-After from one instance while a request sent after it is served: only that record waits', async () => {
    svc = await startFakeService(
      {},
      { retryAfterSec: 3, unavailableIf: (raw) => (raw.includes('"slow"') ? 300 : undefined) },
    )
    const s = svc
    tracker = createTracker({ apiKey: 'k', baseUrl: s.url })
    const t = tracker
    const retried = new Promise<void>((r) => t.on('retry', () => r()))
    t.universal.logIncoming({ text: 'slow', userId: 'a' })
    await until(() => s.inFlight === 1)
    await laterMillisecond() // sent after "slow"
    t.universal.logIncoming({ text: 'fast', userId: 'b' })
    await until(() => s.stored.length === 1)
    await retried // the 503 of "slow" is in, after "fast" was served
    s.faults.unavailableIf = undefined
    t.universal.logIncoming({ text: 'after', userId: 'c' })
    await until(() => s.stored.length === 2)
    // Not held by a gate: "after" went at once while "slow" waits out its own Retry-After.
    expect(s.stored.map((r) => r.body.text)).toEqual(['fast', 'after'])
    expect(t.stats().retrying).toBe(1)
    expect(await t.flush(10_000)).toMatchObject({ delivered: true, sent: 3, failed: 0 })
  })

  it('a host that accepts connections and never answers: gate, one probe at a time, no attempts burnt; then recovery', async () => {
    svc = await startFakeService({}, { silent: true })
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, timeoutMs: 300, retry: { maxAttempts: 2 } })
    // Several deadlines pass: the first round's, then three probes' (retry events, no clock).
    let retries = 0
    const deadlines = new Promise<void>((r) => tracker?.on('retry', () => ++retries === 16 + 3 && r()))
    for (let i = 0; i < 100; i++) log(tracker)(i, `u${i}`)
    await deadlines
    const s = tracker.stats()
    expect(s.failed).toBe(0) // 2 attempts each, several deadlines passed: none spent
    expect(s.sent).toBe(0)
    expect(s.queued + s.inFlight).toBe(100)
    expect(svc.requests.track).toBe(0) // nothing answered
    expect(svc.maxInFlight).toBeLessThanOrEqual(16)
    svc.faults.silent = false
    expect(await tracker.flush(20_000)).toMatchObject({ delivered: true, sent: 100, failed: 0 })
    storedOnce(svc, 100)
  })

  it('a flapping host (refusing and accepting every 150 ms): all delivered in order, no attempts burnt', async () => {
    svc = await startFakeService()
    const s = svc
    // What failed, and how, is part of the failure message (a CI log is all we get).
    const errors: string[] = []
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: s.url,
      retry: { maxAttempts: 2 },
      onError: (e) => errors.push(`${e.name}: ${e.message}`),
    })
    let down = false
    const flap = setInterval(() => {
      down = !down
      void (down ? s.down() : s.up()).catch(() => {})
    }, 150)
    try {
      await offer(
        (i) => tracker?.universal.logIncoming({ text: String(Math.floor(i / 10)), userId: `u${i % 10}` }),
        500,
        250,
      )
    } finally {
      clearInterval(flap)
    }
    if (down) await s.up()
    const result = await tracker.flush(20_000)
    expect(result, `${JSON.stringify(result)}\n${errors.slice(0, 5).join('\n')}`).toMatchObject({
      delivered: true,
      sent: 500,
      failed: 0,
    })
    const byUser = new Map<string, number[]>()
    for (const r of s.stored)
      byUser.set(r.body.userId as string, [...(byUser.get(r.body.userId as string) ?? []), Number(r.body.text)])
    for (const seq of byUser.values()) expect(seq).toEqual([...seq].sort((a, b) => a - b))
  })

  it('the first failure of a burst gets its attempt back: one reset, then the service goes away and returns: delivered', async () => {
    let resets = 0
    svc = await startFakeService({}, { hangUp: (raw) => (raw.includes('"first"') && resets++ === 0 ? 200 : undefined) })
    const s = svc
    const errors: string[] = []
    // One attempt: a failure that spends it is a failed record.
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: s.url,
      retry: { maxAttempts: 1 },
      onError: (e) => errors.push(e.message),
    })
    tracker.universal.logIncoming({ text: 'first', userId: 'a' })
    await laterMillisecond()
    // Sent after "first" and answered before it fails: the service was answering, so the reset
    // of "first" (on a fresh connection) looks like its own fault at the time it comes.
    tracker.universal.logIncoming({ text: 'second', userId: 'b' })
    await until(() => s.stored.length === 1)
    await until(() => resets === 1 && tracker?.stats().inFlight === 0)
    expect(tracker.stats()).toMatchObject({ failed: 0, retrying: 1 }) // alone so far: the verdict waits
    // Within the burst window the service goes away: "third" is refused, so "first" was the
    // first failure of a burst.
    await s.down()
    const t = tracker
    const refused = new Promise<void>((r) => t.on('retry', (_e, rec) => rec.userId === 'c' && r()))
    tracker.universal.logIncoming({ text: 'third', userId: 'c' })
    await refused // "third" failed without an answer within the burst window
    await s.up()
    const result = await tracker.flush(10_000)
    expect(result, `${JSON.stringify(result)}\n${errors.join('\n')}`).toMatchObject({
      delivered: true,
      sent: 3,
      failed: 0,
    })
    expect(s.stored.map((r) => r.body.text).sort()).toEqual(['first', 'second', 'third'])
  })

  it('a reset alone (the service answers before and after) spends the attempt: the record fails once the burst window has passed', async () => {
    // "poison" is reset once the tracker has heard the answer to "fine", sent after it: the
    // service was up (an event, not a delay: under load an answer can take longer than any delay).
    const fineDelivered = async () => {
      while ((tracker?.stats().sent ?? 0) < 1) await new Promise((r) => setTimeout(r, 5))
    }
    svc = await startFakeService({}, { hangUp: (raw) => (raw.includes('"poison"') ? fineDelivered() : undefined) })
    const s = svc
    const errors: ConvotrackError[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: s.url, retry: { maxAttempts: 1 }, onError: (e) => errors.push(e) })
    tracker.universal.logIncoming({ text: 'poison', userId: 'a' })
    await laterMillisecond()
    // Sent after "poison" and answered before its reset: the service is up.
    tracker.universal.logIncoming({ text: 'fine', userId: 'b' })
    const result = await tracker.flush(10_000)
    expect(result).toMatchObject({ delivered: false, pending: 0, sent: 1, failed: 1 })
    expect(s.stored.map((r) => r.body.text)).toEqual(['fine'])
    expect(errors).toHaveLength(1)
    expect(errors[0]?.message).toBe('tracking service unreachable (UND_ERR_SOCKET); 1 attempt')
  })

  it('a burst of 21 000 records from 10 callers, no pacing: all delivered with defaults, nothing dropped', async () => {
    svc = await startFakeService()
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    const t = tracker
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        for (let i = 0; i < 2_100; i++) {
          t.universal.logIncoming({ text: `c${c}-${i}`, userId: `c${c}-u${i % 50}` })
          if (i % 700 === 0) await Promise.resolve()
        }
      }),
    )
    expect(await tracker.flush(60_000)).toMatchObject({ delivered: true, sent: 21_000, dropped: 0, failed: 0 })
    expect(svc.stored).toHaveLength(21_000)
    // A loopback service gains nothing from hundreds of sockets (one per request in flight): the
    // limit does not climb to the cap (256).
    expect(svc.maxSockets).toBeLessThan(256)
  })

  it('service down: memory bounded by bytes, drops exact, no serialization or error per dropped record', async () => {
    svc = await startFakeService()
    await svc.down()
    const errors: ConvotrackError[] = []
    const limit = 256 * 1024
    tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, maxQueueBytes: limit, onError: (e) => errors.push(e) })
    let dropEvents = 0
    tracker.on('dropped', () => dropEvents++)
    const text = 'x'.repeat(200)
    let queued = 0
    let bodyLength = 0
    // A getter that counts reads: a dropped call must not serialize (read) the message.
    let reads = 0
    for (let i = 0; i < 5_000; i++) {
      const msg = {
        userId: `u${String(i).padStart(5, '0')}`,
        get text() {
          reads++
          return text
        },
      }
      if (tracker.universal.logIncoming(msg)) queued++
    }
    bodyLength = JSON.stringify({ text, userId: 'u00000' }).length
    const s = tracker.stats()
    expect(s.queued + s.inFlight).toBe(queued)
    expect(queued * bodyLength).toBeLessThanOrEqual(limit + 2 * bodyLength)
    expect(queued * bodyLength).toBeGreaterThan(limit - 2 * bodyLength)
    expect(s.dropped).toBe(5_000 - queued)
    expect(s.droppedByReason.queue_full).toBe(5_000 - queued)
    expect(dropEvents).toBe(5_000 - queued)
    expect(reads).toBeLessThanOrEqual(queued * 3) // validation + serialization of queued ones only
    await svc.up()
    const result = await tracker.flush(20_000)
    expect(result).toMatchObject({ delivered: false, sent: queued, dropped: 5_000 - queued })
    // Reported in summaries, not one error per record, and the counts add up.
    const drops = errors.filter((e) => e instanceof DroppedRecordError) as DroppedRecordError[]
    expect(drops.length).toBeLessThanOrEqual(3)
    expect(drops.reduce((n, e) => n + e.count, 0)).toBe(5_000 - queued)
  })
})
