import {
  type ConvotrackError,
  createTracker,
  DroppedRecordError,
  type Tracker,
  type TrackerOptions,
} from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'
import { DrivenClock, track } from './support/driven-clock'
import { type FakeService, startFakeService } from './support/fake-service'

// The delivery engine with DEFAULT options against local services that behave like real
// networks: far away, rate-limited, refusing at random, silent, flapping, down. Behaviour only
// (everything delivered, no attempts burnt, bounded memory, exact drops); speed is measured in bench/.
//
// Time is driven (test/support/driven-clock.ts): the tracker's rules and the service's latency,
// delays and token bucket share one clock that moves only when the test moves it, and only once
// every request out has reached the service and is held there (or none is out). Sockets are real.
// So "200 ms away" is exactly 200 ms to the limiter however loaded the machine is, and a Retry-After
// of 1 s costs no real second.

let svc: FakeService | undefined
let tracker: Tracker | undefined
let clock = new DrivenClock()
afterEach(async () => {
  await tracker?.close(2_000)
  tracker = undefined
  await svc?.close()
  svc = undefined
  clock = new DrivenClock()
})

const log = (t: Tracker) => (i: number, userId: string) => t.universal.logIncoming({ text: `m${i}`, userId })

/** Quiet at this instant: every request the tracker has out is held by the service (or none is out). */
const quiet = (): boolean => (tracker?.stats().inFlight ?? 0) === (svc?.held ?? 0)

async function service(faults: Parameters<typeof startFakeService>[1] = {}): Promise<FakeService> {
  svc = await startFakeService({}, faults, clock)
  return svc
}

function driven(options: TrackerOptions): Tracker {
  tracker = createTracker({ ...options, ...clock.option } as TrackerOptions)
  return tracker
}

/** Logs `total` records at `perSec` in 10 ms ticks of driven time over `users` users. */
async function offer(add: (i: number, userId: string) => void, total: number, perSec: number, users = 100) {
  const perTick = Math.max(1, Math.round(perSec / 100))
  let i = 0
  while (i < total) {
    for (let k = 0; k < perTick && i < total; k++, i++) add(i, `u${i % users}`)
    await clock.advance(10, quiet)
  }
}

/** flush() with no deadline of its own, the clock driven until it resolves (a rule that never lets go fails it). */
async function flush(t: Tracker) {
  const flushed = track(t.flush(Number.POSITIVE_INFINITY))
  await clock.runUntil(() => flushed.done, quiet)
  return flushed.value
}

/** Resolves at the first event of `name` whose arguments pass `which`. */
function first(t: Tracker, name: 'retry' | 'sent', which: (...args: unknown[]) => boolean = () => true) {
  const state = { done: false }
  t.on(name, (...args: unknown[]) => {
    if (which(...args)) state.done = true
  })
  return state
}

function storedOnce(s: FakeService, n: number): void {
  expect(s.stored).toHaveLength(n)
  expect(new Set(s.stored.map((r) => r.body.text)).size).toBe(n)
}

/** Offers `total` records at `perSec` to a service with `faults`: every one is delivered, and stored once. */
async function deliveredOnce(faults: Parameters<typeof service>[0], total: number, perSec: number) {
  const s = await service(faults)
  const t = driven({ apiKey: 'k', baseUrl: s.url })
  await offer(log(t), total, perSec)
  expect(await flush(t)).toMatchObject({ delivered: true, sent: total, failed: 0 })
  storedOnce(s, total)
  return s
}

describe('delivery engine, default options', () => {
  it('a service 200 ms away at 500 records/s: concurrency grows past the old fixed 16 and the backlog stays small', async () => {
    const s = await service({ latencyMs: 200 })
    const t = driven({ apiKey: 'k', baseUrl: s.url })
    await offer(log(t), 1_000, 500)
    // With 16 in flight, 80 records/s: ~800 would still be waiting when the offer ends.
    expect(t.stats().queued).toBeLessThan(300)
    expect(s.maxInFlight).toBeGreaterThan(40)
    expect(await flush(t)).toMatchObject({ delivered: true, sent: 1_000, failed: 0, dropped: 0 })
    storedOnce(s, 1_000)
    // The sockets follow the limit: about one per request in flight (undici's Pool opened about
    // twice as many), each reused for many records.
    expect(s.maxSockets).toBeLessThan(s.maxInFlight * 1.5)
    expect(s.connections).toBeLessThan(s.maxInFlight * 2)
  })

  it('a token bucket (100 req/s, 429 + Retry-After: 1 beyond): everything delivered, refusals a minority', async () => {
    const s = await deliveredOnce({ bucketPerSec: 100, retryAfterSec: 1 }, 600, 200)
    // Paced near the bucket's rate: not a storm of refused requests.
    expect(s.requests.limited).toBeLessThan(600)
    // On the driven clock the count is the rules' alone (206 of 806 requests): without pacing,
    // only the gate after 8 refusals in a row, it is 385 of 985.
    expect(s.requests.limited).toBeLessThan(300)
  })

  it('10 % of answers 429 + Retry-After: 1 at random: everything delivered, nothing failed', async () => {
    const s = await deliveredOnce({ random429: 0.1, retryAfterSec: 1 }, 1_000, 500)
    expect(s.requests.limited).toBeGreaterThan(0)
  })

  it('503 + Retry-After: the gate holds every request, then all delivered', async () => {
    const s = await service({ unavailable: true, retryAfterSec: 1 })
    const t = driven({ apiKey: 'k', baseUrl: s.url })
    for (let i = 0; i < 300; i++) log(t)(i, `u${i}`)
    // Two Retry-After periods and a half.
    await clock.advance(2_500, quiet)
    const during = s.requests.track
    // The first round (at most the starting limit of 16), then one probe per Retry-After.
    expect(during).toBeLessThanOrEqual(16 + 8 + 4)
    expect(during).toBeGreaterThan(16) // the probes went
    s.faults.unavailable = false
    expect(await flush(t)).toMatchObject({ delivered: true, sent: 300, failed: 0 })
    storedOnce(s, 300)
  })

  it('503 + Retry-After to the first record: a record for another conversation waits until the time it gave', async () => {
    let once = true
    const s = await service({
      retryAfterSec: 1,
      unavailableIf: (raw) => {
        if (!raw.includes('"first"') || !once) return undefined
        once = false
        return 0
      },
    })
    const t = driven({ apiKey: 'k', baseUrl: s.url })
    const retried = first(t, 'retry')
    t.universal.logIncoming({ text: 'first', userId: 'a' })
    await clock.runUntil(() => retried.done, quiet) // the 503 is in
    t.universal.logIncoming({ text: 'second', userId: 'b' })
    expect(await flush(t)).toMatchObject({ delivered: true, sent: 2, failed: 0 })
    const unavailableAt = s.answers.find((a) => a.status === 503)?.at as number
    const second = s.answers.find((a) => a.status === 201 && a.raw.includes('"second"'))?.at as number
    // 503 says the service is unavailable, not this request: nothing goes before the time it gave.
    expect(second - unavailableAt).toBeGreaterThanOrEqual(1_000)
    expect(s.stored.map((r) => r.body.text).sort()).toEqual(['first', 'second'])
  })

  it('503 + Retry-After from one instance while a request sent after it is served: only that record waits', async () => {
    const s = await service({ retryAfterSec: 3, unavailableIf: (raw) => (raw.includes('"slow"') ? 300 : undefined) })
    const t = driven({ apiKey: 'k', baseUrl: s.url })
    const retried = first(t, 'retry')
    t.universal.logIncoming({ text: 'slow', userId: 'a' })
    await clock.advance(1, quiet) // "slow" is at the service; "fast" is sent a millisecond after it
    t.universal.logIncoming({ text: 'fast', userId: 'b' })
    await clock.settle(quiet)
    expect(s.stored.map((r) => r.body.text)).toEqual(['fast'])
    await clock.runUntil(() => retried.done, quiet) // the 503 of "slow" is in, after "fast" was served
    s.faults.unavailableIf = undefined
    t.universal.logIncoming({ text: 'after', userId: 'c' })
    await clock.settle(quiet)
    // Not held by a gate: "after" went at once while "slow" waits out its own Retry-After.
    expect(s.stored.map((r) => r.body.text)).toEqual(['fast', 'after'])
    expect(t.stats().retrying).toBe(1)
    expect(await flush(t)).toMatchObject({ delivered: true, sent: 3, failed: 0 })
  })

  it('a host that accepts connections and never answers: gate, one probe at a time, no attempts burnt; then recovery', async () => {
    const s = await service({ silent: true })
    const t = driven({ apiKey: 'k', baseUrl: s.url, timeoutMs: 300, retry: { maxAttempts: 2 } })
    // Several deadlines pass: the first round's, then three probes'.
    let retries = 0
    t.on('retry', () => retries++)
    for (let i = 0; i < 100; i++) log(t)(i, `u${i}`)
    await clock.runUntil(() => retries >= 16 + 3, quiet)
    const st = t.stats()
    expect(st.failed).toBe(0) // 2 attempts each, several deadlines passed: none spent
    expect(st.sent).toBe(0)
    expect(st.queued + st.inFlight).toBe(100)
    expect(s.requests.track).toBe(0) // nothing answered
    expect(s.maxInFlight).toBeLessThanOrEqual(16)
    s.faults.silent = false
    expect(await flush(t)).toMatchObject({ delivered: true, sent: 100, failed: 0 })
    storedOnce(s, 100)
  })

  it('a flapping host (refusing and accepting every 150 ms): all delivered in order, no attempts burnt', async () => {
    const s = await service()
    // What failed, and how, is part of the failure message (a CI log is all we get).
    const errors: string[] = []
    const t = driven({
      apiKey: 'k',
      baseUrl: s.url,
      retry: { maxAttempts: 2 },
      onError: (e) => errors.push(`${e.name}: ${e.message}`),
    })
    // The host flips every 15 ticks of 10 ms, each flip done before time moves on.
    let down = false
    for (let i = 0, tick = 1; i < 500; tick++) {
      for (let k = 0; k < 3 && i < 500; k++, i++)
        t.universal.logIncoming({ text: String(Math.floor(i / 10)), userId: `u${i % 10}` })
      await clock.advance(10, quiet)
      if (tick % 15 === 0) {
        down = !down
        await (down ? s.down() : s.up())
      }
    }
    if (down) await s.up()
    const result = await flush(t)
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
    const s = await service({ hangUp: (raw) => (raw.includes('"first"') && resets++ === 0 ? 200 : undefined) })
    const errors: string[] = []
    // One attempt: a failure that spends it is a failed record.
    const t = driven({ apiKey: 'k', baseUrl: s.url, retry: { maxAttempts: 1 }, onError: (e) => errors.push(e.message) })
    t.universal.logIncoming({ text: 'first', userId: 'a' })
    await clock.advance(1, quiet)
    // Sent after "first" and answered before it fails: the service was answering, so the reset
    // of "first" (on a fresh connection) looks like its own fault at the time it comes.
    t.universal.logIncoming({ text: 'second', userId: 'b' })
    await clock.settle(quiet)
    expect(s.stored.map((r) => r.body.text)).toEqual(['second'])
    await clock.runUntil(() => t.stats().retrying === 1, quiet) // the reset of "first" is in
    expect(t.stats()).toMatchObject({ failed: 0, retrying: 1 }) // alone so far: the verdict waits
    // Within the burst window (1 s) the service goes away: "third" is refused 900 ms after the
    // reset, so "first" was the first failure of a burst.
    await clock.advance(900, quiet)
    expect(t.stats()).toMatchObject({ failed: 0, retrying: 1 })
    await s.down()
    const refused = first(t, 'retry', (_e, rec) => (rec as { userId?: string }).userId === 'c')
    t.universal.logIncoming({ text: 'third', userId: 'c' })
    await clock.settle(() => refused.done && quiet())
    await s.up()
    const result = await flush(t)
    expect(result, `${JSON.stringify(result)}\n${errors.join('\n')}`).toMatchObject({
      delivered: true,
      sent: 3,
      failed: 0,
    })
    expect(s.stored.map((r) => r.body.text).sort()).toEqual(['first', 'second', 'third'])
  })

  it('a reset alone (the service answers before and after) spends the attempt: the record fails once the burst window has passed', async () => {
    // "poison" is reset once the tracker has heard the answer to "fine", sent after it: the
    // service was up (an event, not a delay).
    let fineDelivered: Promise<unknown> = Promise.resolve()
    const s = await service({ hangUp: (raw) => (raw.includes('"poison"') ? fineDelivered : undefined) })
    const errors: ConvotrackError[] = []
    const t = driven({ apiKey: 'k', baseUrl: s.url, retry: { maxAttempts: 1 }, onError: (e) => errors.push(e) })
    fineDelivered = new Promise((r) => t.once('sent', r))
    t.universal.logIncoming({ text: 'poison', userId: 'a' })
    await clock.advance(1, quiet)
    // Sent after "poison" and answered before its reset: the service is up.
    t.universal.logIncoming({ text: 'fine', userId: 'b' })
    const result = await flush(t)
    expect(result).toMatchObject({ delivered: false, pending: 0, sent: 1, failed: 1 })
    expect(s.stored.map((r) => r.body.text)).toEqual(['fine'])
    expect(errors).toHaveLength(1)
    expect(errors[0]?.message).toBe('tracking service unreachable (UND_ERR_SOCKET); 1 attempt')
  })

  // On real time: what it shows is how the limiter meets a real loopback that shares the CPU with
  // the client (its rounds measure real delivery rates); on a driven clock no time passes at all.
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
    svc = await service()
    await svc.down()
    const errors: ConvotrackError[] = []
    const limit = 256 * 1024
    tracker = driven({ apiKey: 'k', baseUrl: svc.url, maxQueueBytes: limit, onError: (e) => errors.push(e) })
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
    const result = await flush(tracker)
    expect(result).toMatchObject({ delivered: false, sent: queued, dropped: 5_000 - queued })
    // Reported in summaries, not one error per record, and the counts add up.
    const drops = errors.filter((e) => e instanceof DroppedRecordError) as DroppedRecordError[]
    expect(drops.length).toBeLessThanOrEqual(3)
    expect(drops.reduce((n, e) => n + e.count, 0)).toBe(5_000 - queued)
  })
})
