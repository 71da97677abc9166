import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { type ConvotrackError, createTracker, DroppedRecordError, type Tracker, TransportError } from '@convotrack/core'
import { Agent, type Dispatcher } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

// The transport against a real HTTP server on 127.0.0.1 with injected faults.

const fast = { minDelayMs: 20, maxDelayMs: 400, maxRetryAfterMs: 2_000 }
let sink: Sink
let tracker: Tracker | undefined
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)

beforeEach(async () => {
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
  sink = await startSink()
})
afterEach(async () => {
  await tracker?.close(2_000)
  tracker = undefined
  await sink.close().catch(() => {})
  process.off('unhandledRejection', onUnhandled)
  // A rejection nobody handled fails the test.
  expect(unhandled).toEqual([])
})

function ids(): string[] {
  return sink.records.map((r) => r.body.userId as string).sort()
}

function logMany(t: Tracker, n: number): string[] {
  const sent: string[] = []
  for (let i = 0; i < n; i++) {
    const userId = `u${String(i).padStart(5, '0')}`
    t.universal.logIncoming({ text: `message ${i}`, userId })
    sent.push(userId)
  }
  return sent.sort()
}

describe('delivery', () => {
  it('posts to {baseUrl}/track with URL-encoded query, JSON content type, keep-alive', async () => {
    tracker = createTracker({ apiKey: 'key with&=chars', baseUrl: `${sink.url}/base/` })
    tracker.universal.logIncoming({ text: 'hi', userId: 'u1' })
    tracker.universal.logOutgoing({ text: 'hello', userId: 'u1' }, { v: '10.1.1-rest' })
    expect(await tracker.flush()).toEqual({ delivered: true, pending: 0, held: 0, sent: 2, failed: 0, dropped: 0 })
    const [a, b] = sink.records
    expect(a?.query.toString()).toBe('platform=universal&v=11.1.0-rest&type=incoming&apiKey=key+with%26%3Dchars')
    expect(a?.apiKey).toBe('key with&=chars')
    expect(a?.headers['content-type']).toBe('application/json')
    expect(a?.headers.connection).not.toBe('close')
    expect(b?.v).toBe('10.1.1-rest')
    expect(b?.type).toBe('outgoing')
  })

  it("through a dispatcher of the user's (an undici Agent): every record, its headers and the retries", async () => {
    // The real Agent, counting what goes through it: the records must travel through the user's
    // dispatcher, not the tracker's own connections.
    let dispatched = 0
    class CountingAgent extends Agent {
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        dispatched++
        return super.dispatch(options, handler)
      }
    }
    const agent = new CountingAgent({ keepAliveTimeout: 1_000 })
    try {
      tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, dispatcher: agent, retry: fast })
      sink.faults.error500 = 0.2
      const sent = logMany(tracker, 50)
      expect(await tracker.flush(10_000)).toMatchObject({ delivered: true, sent: 50, failed: 0 })
      expect(ids()).toEqual(sent)
      expect(tracker.stats().retried).toBeGreaterThan(0)
      expect(dispatched).toBe(sink.requests)
      expect(sink.records[0]?.headers['idempotency-key']).toMatch(/^[0-9a-f]{16}\.[0-9a-z]+$/)
      expect(sink.records[0]?.headers['user-agent']).toMatch(/^convotrack-node\//)
    } finally {
      await tracker?.close(1_000)
      tracker = undefined
      await agent.close()
    }
  })

  it('the body is a snapshot taken at the call', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    const msg = { text: 'before', userId: 'u1' }
    tracker.universal.logIncoming(msg)
    msg.text = 'after'
    await tracker.flush()
    expect(sink.records[0]?.body.text).toBe('before')
  })
})

describe('faults', () => {
  it('service down, then up once the tracker is retrying: every record delivered after flush', async () => {
    await sink.down()
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast })
    const retrying = new Promise<void>((r) => tracker?.once('retry', () => r()))
    const sent = logMany(tracker, 500)
    void retrying.then(() => sink.up())
    const result = await tracker.flush(20_000)
    expect(result).toMatchObject({ delivered: true, pending: 0, sent: 500, failed: 0, dropped: 0 })
    expect(ids()).toEqual(sent)
    expect(tracker.stats().retried).toBeGreaterThan(0)
  })

  it('after an outage, default policy: one backoff step per round, one probe at a time, quick recovery', async () => {
    await sink.down()
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, concurrency: 8 })
    const t = tracker
    let retries = 0
    const alongside: number[] = []
    const delays: number[] = []
    let probes!: () => void
    const fourProbes = new Promise<void>((r) => {
      probes = r
    })
    t.on('retry', (_e, _r, delayMs) => {
      // After the first round's 8 refusals, each retry is one probe's, alone in flight.
      if (++retries > 8) {
        alongside.push(t.stats().inFlight)
        delays.push(delayMs)
      }
      if (retries === 8 + 4) probes()
    })
    const sent = logMany(t, 200)
    await fourProbes
    expect(alongside).toEqual([0, 0, 0, 0])
    // Gate steps double from 200 ms but never exceed 1 s: recovery within about a second.
    expect(Math.max(...delays)).toBeLessThanOrEqual(1_000)
    await sink.up()
    expect((await t.flush(20_000)).delivered).toBe(true)
    expect(ids()).toEqual(sent)
  })

  it('10 % 500s, 429 with Retry-After, 5 % connection resets, all at once: 100 % delivered, each once', async () => {
    sink.faults.error500 = 0.1
    sink.faults.error429 = 0.05
    sink.faults.retryAfterSec = 0.05
    sink.faults.reset = 0.05
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast })
    const sent = logMany(tracker, 1_000)
    const result = await tracker.flush(30_000)
    expect(result).toMatchObject({ delivered: true, pending: 0, sent: 1_000, failed: 0 })
    // A reset after the server stored a record is the one case that could duplicate; our sink
    // resets before storing, so exactly-once holds here.
    expect(ids()).toEqual(sent)
    expect(tracker.stats().retried).toBeGreaterThan(50)
  })

  it('honours Retry-After on 429: holds every request until it has passed', async () => {
    sink.faults.status = 429
    sink.faults.retryAfterSec = 1
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast })
    const t = tracker
    const retried = new Promise<number>((r) => t.once('retry', (_e, _r, delayMs) => r(delayMs)))
    t.universal.logIncoming({ text: 'a', userId: 'u1' })
    const delayMs = await retried
    sink.faults.status = undefined
    // Scheduled for the Retry-After (1 s), not the backoff (20 ms); no clock is read here: the
    // timer is Node's, and one request more (not a storm of early ones) is what reached the sink.
    expect(delayMs).toBe(1_000)
    expect((await t.flush(5_000)).delivered).toBe(true)
    expect(sink.requests).toBe(2)
  })

  it('slow answers past the per-request deadline are retried', async () => {
    sink.faults.latencyMs = 400
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, timeoutMs: 150, retry: fast })
    tracker.universal.logIncoming({ text: 'a', userId: 'u1' })
    const errors: string[] = []
    tracker.on('retry', (e) => {
      errors.push(e.code)
      sink.faults.latencyMs = 0 // answers in time from now on
    })
    const result = await tracker.flush(10_000)
    expect(result.delivered).toBe(true)
    expect(errors).toContain('timeout')
  })

  it('4xx other than 408/429 is not retried and is reported with the status, never the key', async () => {
    sink.faults.status = 400
    const reported: ConvotrackError[] = []
    tracker = createTracker({
      apiKey: 'super-secret-key',
      baseUrl: sink.url,
      retry: fast,
      onError: (e) => reported.push(e),
    })
    tracker.universal.logIncoming({ text: 'a', userId: 'u1' })
    const result = await tracker.flush(5_000)
    expect(result).toMatchObject({ delivered: false, failed: 1, sent: 0 })
    expect(sink.requests).toBe(1)
    expect(reported[0]).toBeInstanceOf(TransportError)
    expect((reported[0] as TransportError).status).toBe(400)
    expect(reported[0]?.message).toContain('forced 400')
    expect(reported[0]?.message).not.toContain('super-secret-key')
  })

  it('gives up after maxAttempts on persistent 500s and counts the failure', async () => {
    sink.faults.status = 503
    const reported: ConvotrackError[] = []
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      retry: { ...fast, maxAttempts: 3 },
      onError: (e) => reported.push(e),
    })
    tracker.universal.logIncoming({ text: 'a', userId: 'u1' })
    const result = await tracker.flush(5_000)
    expect(result).toMatchObject({ delivered: false, failed: 1 })
    expect(sink.requests).toBe(3)
    expect(reported.map((e) => e.code)).toEqual(['http_503'])
    expect(tracker.stats()).toMatchObject({ retried: 2, failed: 1, queued: 0, inFlight: 0 })
  })

  it('501 and 505 are not retried', async () => {
    for (const status of [501, 505]) {
      sink.faults.status = status
      const t = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast, onError: () => {} })
      const before = sink.requests
      t.universal.logIncoming({ text: 'a', userId: 'u1' })
      expect((await t.flush(5_000)).failed).toBe(1)
      expect(sink.requests - before).toBe(1)
      await t.close()
    }
  })
})

describe('order', () => {
  it('each user’s records arrive in the order they were logged, through 500s, resets and retries; users go in parallel', async () => {
    sink.faults.error500 = 0.15
    sink.faults.reset = 0.05
    sink.faults.latencyMs = 2
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast })
    for (let n = 0; n < 30; n++)
      for (let u = 0; u < 20; u++) tracker.universal.logIncoming({ text: String(n), userId: `u${u}` })
    expect((await tracker.flush(30_000)).delivered).toBe(true)
    const byUser = new Map<string, number[]>()
    for (const r of sink.records) byUser.set(r.body.userId, [...(byUser.get(r.body.userId) ?? []), Number(r.body.text)])
    expect(byUser.size).toBe(20)
    for (const seq of byUser.values()) expect(seq).toEqual(Array.from({ length: 30 }, (_, n) => n))
    expect(tracker.stats().retried).toBeGreaterThan(20)
  })
})

describe('queue bound', () => {
  it('overflow drops are counted exactly, by reason, and reported', async () => {
    await sink.down()
    const drops: string[] = []
    let reportedCount = 0
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      maxQueueSize: 100,
      retry: fast,
      onError: (e) => {
        drops.push(e.code)
        reportedCount += e instanceof DroppedRecordError ? e.count : 0
      },
    })
    let droppedEvents = 0
    tracker.on('dropped', () => droppedEvents++)
    let queued = 0
    for (let i = 0; i < 250; i++) if (tracker.universal.logIncoming({ text: 't', userId: `u${i}` })) queued++
    expect(queued).toBe(100)
    expect(tracker.stats()).toMatchObject({
      dropped: 150,
      droppedByReason: { queue_full: 150, redacted: 0, closed: 0 },
    })
    expect(droppedEvents).toBe(150)
    // One report at the first drop, the rest in a summary (at the latest on flush): no error per record.
    await sink.up()
    const result = await tracker.flush(10_000)
    expect(drops).toEqual(['dropped_queue_full', 'dropped_queue_full'])
    expect(reportedCount).toBe(150)
    expect(result).toMatchObject({ delivered: false, sent: 100, dropped: 150, pending: 0 })
    expect(sink.records).toHaveLength(100)
    // The next flush starts clean.
    tracker.universal.logIncoming({ text: 't', userId: 'after' })
    expect((await tracker.flush(5_000)).delivered).toBe(true)
  })
})

describe('flush and close', () => {
  it('concurrent flushes all wait, never reject, and report a timeout as not delivered', async () => {
    await sink.down()
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast })
    tracker.universal.logIncoming({ text: 't', userId: 'u' })
    const early = await tracker.flush(100)
    expect(early).toMatchObject({ delivered: false, pending: 1 })
    const both = Promise.all([tracker.flush(10_000), tracker.flush(10_000)])
    await sink.up()
    const [a, b] = await both
    expect(a.pending).toBe(0)
    expect(b.pending).toBe(0)
    expect(sink.records).toHaveLength(1)
  })

  it('close() flushes, then drops new records as `closed` (counted and reported, never thrown)', async () => {
    const reported: string[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, onError: (e) => reported.push(e.code) })
    tracker.universal.logIncoming({ text: 't', userId: 'u' })
    expect(await tracker.close()).toMatchObject({ delivered: true, sent: 1 })
    expect(tracker.closed).toBe(true)
    expect(tracker.universal.logIncoming({ text: 't', userId: 'u' })).toBe(false)
    expect(
      tracker.trackSerialized({ platform: 'generic', type: 'incoming', v: '11.1.0-rest', userId: 'u', body: '{}' }),
    ).toBe(false)
    expect(tracker.stats()).toMatchObject({ dropped: 2, droppedByReason: { closed: 2 } })
    expect(reported).toEqual(['dropped_closed', 'dropped_closed'])
    expect(sink.records).toHaveLength(1)
  })

  it('close() with the service down gives up at its timeout and counts what was left', async () => {
    await sink.down()
    const reported: string[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, retry: fast, onError: (e) => reported.push(e.code) })
    logMany(tracker, 5)
    const result = await tracker.close(300)
    expect(result).toMatchObject({ delivered: false, pending: 0, failed: 5 })
    expect(reported).toContain('closed_with_pending')
  })

  it('an idle tracker (and one waiting on a retry) lets the process exit', async () => {
    const script = `
      import { createTracker } from ${JSON.stringify(fileURLToPath(new URL('../src/index.ts', import.meta.url)))}
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(sink.url)} })
      t.universal.logIncoming({ text: 'a', userId: 'u' })
      await t.flush(5000)
      const down = createTracker({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', retry: { minDelayMs: 60000 } })
      down.universal.logIncoming({ text: 'b', userId: 'u' })
      console.log('logged')
    `
    const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url))
    const child = spawn(tsx, ['--eval', script, '--input-type=module'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(out).toContain('logged')
    expect(code).toBe(0) // it ended: a tracker keeping it alive would show as a test timeout
    expect(sink.records).toHaveLength(1)
  })
})
