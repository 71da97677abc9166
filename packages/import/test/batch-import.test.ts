/**
 * An import into a service that takes batches (the batch protocol, served by the core tests'
 * local fake service): acknowledgements still match record by record (the tracker's `sent`
 * event carries each record's exact body), so a stopped import checkpoints exactly what was
 * stored and a resume sends the rest once.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTracker, type Tracker } from '@convotrack/core'
import { importRecords } from '@convotrack/import'
import { afterEach, describe, expect, it } from 'vitest'
import { type FakeService, startFakeService } from '../../core/test/support/fake-service'

const dir = mkdtempSync(join(tmpdir(), 'convotrack-batch-import-'))
const trackers: Tracker[] = []
let svc: FakeService | undefined
afterEach(async () => {
  await Promise.all(trackers.splice(0).map((t) => t.close(1000)))
  await svc?.close()
})

const rows = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: i + 1, body: `message ${i + 1}`, author: `cust-${i % 37}` }))
const map = { text: 'body', userId: 'author' }

function tracker(url: string): Tracker {
  const t = createTracker({ apiKey: 'test-key', baseUrl: url, onError: () => {} })
  trackers.push(t)
  return t
}

describe('import with batching', () => {
  it('a stopped batched import checkpoints exactly what was stored; the resume sends the rest once', async () => {
    svc = await startFakeService({ batch: true }, { latencyMs: 5 })
    const s = svc
    const checkpoint = join(dir, 'cp.json')
    const stop = new AbortController()
    const t = tracker(s.url)
    t.on('sent', () => {
      if (s.stored.length >= 1_500) stop.abort()
    })
    const first = await importRecords(t, () => rows(4_000), { map, checkpoint, signal: stop.signal, batchRate: 0 })
    expect(t.stats().batching).toBe(true)
    expect(first.stopped).toBe('aborted')
    expect(first.sent).toBeGreaterThanOrEqual(1_500)
    expect(first.sent).toBeLessThan(4_000)
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { done: Array<[number, number]> }
    expect(saved.done.reduce((n, [a, b]) => n + b - a + 1, 0)).toBe(first.sent)
    expect(s.stored).toHaveLength(first.sent)
    expect(s.requests.batch).toBeGreaterThan(0)
    expect(s.requests.batch).toBeLessThan(first.sent / 4)

    const second = await importRecords(tracker(s.url), () => rows(4_000), { map, checkpoint, batchRate: 0 })
    expect(second).toMatchObject({ alreadyImported: first.sent, sent: 4_000 - first.sent, complete: true })
    const counts = new Map<number, number>()
    for (const r of s.stored) {
      const id = (r.body.platformJson as { id: number }).id
      counts.set(id, (counts.get(id) ?? 0) + 1)
    }
    expect(counts.size).toBe(4_000)
    expect([...counts.values()].every((c) => c === 1)).toBe(true)
  })
})
