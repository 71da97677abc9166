/**
 * importRecords against a real HTTP tracking endpoint (the test sink) through a real tracker.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTracker, type Tracker, type TrackerOptions } from '@convotrack/core'
import {
  type ImportProgress,
  type InvalidRecord,
  importRecords,
  SourceLine,
  type ValidationReport,
} from '@convotrack/import'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

let sink: Sink
const trackers: Tracker[] = []
const dir = mkdtempSync(join(tmpdir(), 'convotrack-import-'))
let n = 0
const checkpointPath = () => join(dir, `cp-${++n}.json`)

beforeAll(async () => {
  sink = await startSink()
})
afterAll(() => sink.close())
afterEach(async () => {
  await Promise.all(trackers.splice(0).map((t) => t.close(1000)))
  sink.clear()
  for (const k of Object.keys(sink.faults)) delete (sink.faults as Record<string, unknown>)[k]
})

function tracker(options: TrackerOptions = {}): Tracker {
  const t = createTracker({
    apiKey: 'test-key',
    baseUrl: sink.url,
    retry: { minDelayMs: 5, maxDelayMs: 20, maxAttempts: 2 },
    onError: () => {},
    ...options,
  })
  trackers.push(t)
  return t
}

/** A helpdesk-like export row. */
const row = (i: number) => ({
  id: i,
  body: `message ${i}`,
  author: `cust-${i % 7}`,
  ticket: `T-${i % 5}`,
  kind: i % 3 === 0 ? 'outgoing' : 'incoming',
})
const map = { text: 'body', userId: 'author', conversationId: 'ticket', direction: 'kind' }
const rows = (count: number) => Array.from({ length: count }, (_, i) => row(i + 1))
const ids = () => sink.records.map((r) => r.body.platformJson.id as number)

describe('importRecords', () => {
  it('posts universal records, incoming and outgoing, with v=10.1.1-rest and the exact wire body', async () => {
    const summary = await importRecords(tracker(), rows(3), { map })
    expect(summary).toMatchObject({ records: 3, valid: 3, sent: 3, failed: [], invalid: [], complete: true })
    const byId = new Map(sink.records.map((r) => [r.body.platformJson.id, r]))
    const first = byId.get(1)
    expect(first).toMatchObject({ platform: 'universal', type: 'incoming', v: '10.1.1-rest', apiKey: 'test-key' })
    expect(first?.body).toEqual({ text: 'message 1', userId: 'cust-1', conversationId: 'T-1', platformJson: row(1) })
    const third = byId.get(3)
    expect(third).toMatchObject({ platform: 'universal', type: 'outgoing', v: '10.1.1-rest' })
    expect(third?.body).toEqual({ text: 'message 3', userId: 'cust-3', conversationId: 'T-3', platformJson: row(3) })
  })

  it('posts as sms with v=11.1.0-rest when asked (the other sample variant of spec 4.4)', async () => {
    await importRecords(tracker(), rows(1), { map, platform: 'sms', v: '11.1.0-rest' })
    expect(sink.records.map((r) => [r.platform, r.type, r.v])).toEqual([['sms', 'incoming', '11.1.0-rest']])
  })

  it('validates every record before sending anything, reports the bad ones by position, then sends the good ones', async () => {
    const source = () => {
      const all: unknown[] = rows(30)
      all[4] = { body: 'no author' }
      all[9] = { author: 'x' }
      all[19] = { ...row(20), kind: 'sideways' }
      return all
    }
    let report: ValidationReport | undefined
    const requestsBefore = sink.requests
    let requestsAtReport = -1
    const seen: InvalidRecord[] = []
    const summary = await importRecords(tracker(), source, {
      map,
      onInvalid: (r) => seen.push(r),
      onValidated: (r) => {
        report = r
        requestsAtReport = sink.requests - requestsBefore
      },
    })
    expect(requestsAtReport).toBe(0)
    expect(report).toMatchObject({ records: 30, valid: 27, alreadyImported: 0, toSend: 27 })
    expect(report?.invalid.map((r) => [r.position, r.field])).toEqual([
      [5, 'userId'],
      [10, 'text'],
      [20, 'direction'],
    ])
    expect(seen).toEqual(report?.invalid)
    expect(summary).toMatchObject({ records: 30, valid: 27, sent: 27, complete: true })
    expect(summary.invalid).toHaveLength(3)
    expect(ids().sort((a, b) => a - b)).toEqual(
      rows(30)
        .map((r) => r.id)
        .filter((i) => ![5, 10, 20].includes(i)),
    )
  })

  it('dryRun validates and sends nothing; strict sends nothing when a record is invalid', async () => {
    const source = () => [...rows(5), { nope: true }]
    const requestsBefore = sink.requests
    const dryTracker = tracker()
    const dry = await importRecords(dryTracker, source, { map, dryRun: true })
    expect(dry).toMatchObject({ dryRun: true, records: 6, valid: 5, sent: 0 })
    expect(dry.invalid.map((r) => r.position)).toEqual([6])
    const strictTracker = tracker()
    const strict = await importRecords(strictTracker, source, { map, strict: true })
    expect(strict).toMatchObject({ stopped: 'invalid_records', sent: 0, complete: false })
    // Anything either of them had queued is on the wire once its flush resolves.
    await dryTracker.flush()
    await strictTracker.flush()
    expect(sink.requests - requestsBefore).toBe(0)
  })

  it('streams a one-pass source (a paginated API): invalid records reported as they come, the rest sent', async () => {
    async function* pages() {
      for (let page = 0; page < 4; page++) {
        await new Promise((r) => setImmediate(r)) // each page arrives later, from the network
        for (let i = 1; i <= 10; i++) yield i === 5 && page === 2 ? { body: 'orphan' } : row(page * 10 + i)
      }
    }
    const seen: number[] = []
    const summary = await importRecords(tracker(), pages(), { map, onInvalid: (r) => seen.push(r.position) })
    expect(seen).toEqual([25])
    expect(summary).toMatchObject({ records: 40, valid: 39, sent: 39, complete: true })
    expect(new Set(ids()).size).toBe(39)
  })

  it('keeps to the rate limit', async () => {
    // A lower bound only (the pace is the property; a slow machine only adds to it). The spacing
    // itself is tested on a driven clock in rate-limit.test.ts.
    const started = performance.now()
    const summary = await importRecords(tracker(), rows(31), { map, rate: 100 })
    const elapsed = performance.now() - started
    expect(summary.sent).toBe(31)
    // 31 records at 100/s: the last one leaves 300 ms after the first
    expect(elapsed).toBeGreaterThanOrEqual(280)
  })

  it('holds at most maxInFlight records unacknowledged', async () => {
    sink.faults.latencyMs = 20
    const t = tracker({ concurrency: 8 })
    let most = 0
    const watch = setInterval(() => {
      const s = t.stats()
      most = Math.max(most, s.queued + s.inFlight)
    }, 2)
    const summary = await importRecords(t, rows(40), { map, maxInFlight: 3 })
    clearInterval(watch)
    expect(summary.sent).toBe(40)
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(3)
  })

  it('reports progress with the total, the rate and an ETA', async () => {
    sink.faults.latencyMs = 5
    const updates: ImportProgress[] = []
    await importRecords(tracker({ concurrency: 2 }), () => rows(60), {
      map,
      onProgress: (p) => updates.push(p),
      progressIntervalMs: 20,
    })
    const last = updates.at(-1)
    expect(last).toMatchObject({ total: 60, sent: 60, failed: 0, inFlight: 0, etaSeconds: 0 })
    const middle = updates.find((u) => u.sent > 0 && u.sent < 60)
    expect(middle?.ratePerSecond).toBeGreaterThan(0)
    expect(middle?.etaSeconds).toBeGreaterThan(0)
  })

  it('sends identical rows as many times as they appear', async () => {
    const same = { body: 'ok', author: 'u1' }
    const summary = await importRecords(tracker(), [same, same, same], { map })
    expect(summary.sent).toBe(3)
    expect(sink.records).toHaveLength(3)
  })
})

describe('checkpoint and resume', () => {
  it('a stopped import resumes with every record delivered exactly once', async () => {
    sink.faults.latencyMs = 5
    const checkpoint = checkpointPath()
    const stop = new AbortController()
    const t = tracker()
    t.on('sent', () => {
      if (sink.records.length >= 40) stop.abort()
    })
    const first = await importRecords(t, () => rows(120), { map, checkpoint, signal: stop.signal, rate: 400 })
    expect(first.stopped).toBe('aborted')
    expect(first.complete).toBe(false)
    expect(first.sent).toBeGreaterThanOrEqual(40)
    expect(first.sent).toBeLessThan(120)
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { done: Array<[number, number]> }
    const savedCount = saved.done.reduce((n, [a, b]) => n + b - a + 1, 0)
    expect(savedCount).toBe(first.sent)
    expect(sink.records).toHaveLength(first.sent)

    const second = await importRecords(tracker(), () => rows(120), { map, checkpoint })
    expect(second).toMatchObject({ alreadyImported: first.sent, sent: 120 - first.sent, complete: true })
    const counts = new Map<number, number>()
    for (const id of ids()) counts.set(id, (counts.get(id) ?? 0) + 1)
    expect(counts.size).toBe(120)
    expect([...counts.values()].every((c) => c === 1)).toBe(true)

    // a third run has nothing left to do
    const third = await importRecords(tracker(), () => rows(120), { map, checkpoint })
    expect(third).toMatchObject({ alreadyImported: 120, sent: 0, complete: true })
    expect(sink.records).toHaveLength(120)
  })

  it('records the service refused stay out of the checkpoint and go on the next run', async () => {
    const checkpoint = checkpointPath()
    sink.faults.status = 400
    const refused = await importRecords(tracker(), () => rows(10), { map, checkpoint, maxFailures: 4, maxInFlight: 1 })
    expect(refused.stopped).toBe('too_many_failures')
    expect(refused.failed.map((f) => [f.position, f.code])).toEqual([
      [1, 'http_400'],
      [2, 'http_400'],
      [3, 'http_400'],
      [4, 'http_400'],
    ])
    expect(JSON.parse(readFileSync(checkpoint, 'utf8')).done).toEqual([])

    delete sink.faults.status
    const retried = await importRecords(tracker(), () => rows(10), { map, checkpoint })
    expect(retried).toMatchObject({ sent: 10, alreadyImported: 0, complete: true })
    expect(ids().sort((a, b) => a - b)).toEqual(rows(10).map((r) => r.id))
  })

  it('positions come from SourceLine line numbers, so fixing a bad line and rerunning sends just that line', async () => {
    const checkpoint = checkpointPath()
    const file = (fixed: boolean) => () => [
      new SourceLine(1, row(1)),
      new SourceLine(2, fixed ? row(2) : { body: 'broken' }),
      new SourceLine(4, row(4)),
    ]
    const before = await importRecords(tracker(), file(false), { map, checkpoint })
    expect(before.invalid.map((r) => r.position)).toEqual([2])
    expect(before.sent).toBe(2)
    const after = await importRecords(tracker(), file(true), { map, checkpoint })
    expect(after).toMatchObject({ sent: 1, alreadyImported: 2, invalid: [] })
    expect(ids().sort()).toEqual([1, 2, 4])
  })

  it("respects the tracker's ignore list (skipped, checkpointed) and never hangs on a redact that rewrites bodies", async () => {
    const checkpoint = checkpointPath()
    const ignoring = tracker({ ignoreUserIds: ['cust-1'] })
    const summary = await importRecords(ignoring, () => rows(14), { map, checkpoint })
    expect(summary).toMatchObject({ sent: 12, skipped: 2, complete: true })
    expect(sink.records.some((r) => r.body.userId === 'cust-1')).toBe(false)

    sink.clear()
    const rewriting = tracker({ redact: (body) => ({ ...body, text: '[redacted]' }) })
    const redacted = await importRecords(rewriting, () => rows(3), { map })
    // Each record's fate is its own (no body matching), so a rewritten body is still acknowledged.
    expect(redacted).toMatchObject({ sent: 3, unconfirmed: 0, complete: true })
    expect(sink.records.map((r) => r.body.text)).toEqual(['[redacted]', '[redacted]', '[redacted]'])
  })
})
