/**
 * The kept answers of reads that may outgrow a request (reports/answer-cache.ts), with a clock
 * the test drives and computations it releases: fresh answers served without computing, a mark
 * or a told change computing again, the wait, `preparing`, a slow read's previous answer served
 * while a newer one is counted, errors handed to the next request, one computation per key, the
 * concurrency bound and eviction.
 */
import { describe, expect, it } from 'vitest'
import { AnswerCache, type AnswerCacheOptions } from '../src/reports/answer-cache'

/** A computation the test ends. */
function gate<T>() {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

function setup(options: Partial<AnswerCacheOptions> = {}) {
  const clock = { t: 1_000_000 }
  const cache = new AnswerCache<string>({
    waitMs: 50,
    maxAgeMs: 60_000,
    maxEntries: 10,
    concurrency: 2,
    now: () => clock.t,
    ...options,
  })
  return { clock, cache }
}

describe('AnswerCache', () => {
  it('serves a fresh answer without computing; a new mark, a told change or its age computes again', async () => {
    const { clock, cache } = setup()
    let calls = 0
    const compute = async () => `v${++calls}`
    expect(await cache.get('k', 'm1', compute)).toEqual({
      state: 'ready',
      value: 'v1',
      asOf: clock.t,
      refreshing: false,
    })
    clock.t += 1_000
    expect(await cache.get('k', 'm1', compute)).toMatchObject({ value: 'v1', asOf: clock.t - 1_000 })
    expect(calls).toBe(1)
    // Messages stored since: the store's mark moved.
    expect(await cache.get('k', 'm2', compute)).toMatchObject({ value: 'v2', refreshing: false })
    expect(await cache.get('k', 'm2', compute)).toMatchObject({ value: 'v2' })
    // A deletion told by the feed.
    cache.changed()
    expect(await cache.get('k', 'm2', compute)).toMatchObject({ value: 'v3' })
    // Older than maxAgeMs (changes nobody told).
    clock.t += 60_000
    expect(await cache.get('k', 'm2', compute)).toMatchObject({ value: 'v4', asOf: clock.t })
    expect(calls).toBe(4)
    // Another key is another answer.
    expect(await cache.get('other', 'm2', compute)).toMatchObject({ value: 'v5' })
  })

  it('a first computation past the wait answers preparing; requests meanwhile join it; then the answer', async () => {
    const { cache } = setup({ waitMs: 20 })
    const g = gate<string>()
    let calls = 0
    const compute = () => {
      calls++
      return g.promise
    }
    expect(await cache.get('k', 'm', compute)).toEqual({ state: 'preparing' })
    expect(await cache.get('k', 'm', compute)).toEqual({ state: 'preparing' })
    expect(calls).toBe(1)
    g.resolve('done')
    expect(await cache.get('k', 'm', compute)).toMatchObject({ state: 'ready', value: 'done', refreshing: false })
    expect(calls).toBe(1)
  })

  it('a computation that ends within the wait is served by the request that started it', async () => {
    // A wait far past the test's own timeout, and a computation that ends on a later turn of the
    // event loop (not synchronously): the request must wait for it, whatever the machine's load.
    const { cache } = setup({ waitMs: 3_600_000 })
    const answer = cache.get('k', 'm', () => new Promise((r) => setImmediate(() => r('soon'))))
    expect(await answer).toMatchObject({ state: 'ready', value: 'soon', refreshing: false })
  })

  it('a read slower than the wait: later requests get the previous answer at once while a newer one is counted', async () => {
    // A wait far past the test's own timeout: a request that waited for the gate would fail the test.
    const { clock, cache } = setup({ waitMs: 3_600_000 })
    const slow = (value: string, g?: ReturnType<typeof gate<string>>) => async () => {
      clock.t += 7_200_000 // the computation takes longer than the wait on the driven clock
      return g ? g.promise : value
    }
    const first = clock.t
    expect(await cache.get('k', 'm1', slow('old'))).toMatchObject({ state: 'ready', value: 'old', asOf: first })
    const g = gate<string>()
    let started = 0
    const next = slow('', g)
    const counting = () => {
      started++
      return next()
    }
    // New messages: no wait, the old answer, marked as being refreshed.
    expect(await cache.get('k', 'm2', counting)).toEqual({
      state: 'ready',
      value: 'old',
      asOf: first,
      refreshing: true,
    })
    expect(await cache.get('k', 'm2', counting)).toMatchObject({ value: 'old', refreshing: true })
    expect(started).toBe(1)
    g.resolve('new')
    await g.promise
    await new Promise((r) => setImmediate(r))
    expect(await cache.get('k', 'm2', counting)).toMatchObject({ value: 'new', refreshing: false })
    expect(started).toBe(1)
  })

  it('a failed computation: its error goes to the request waiting for it, and the next request computes again', async () => {
    const { cache } = setup()
    const fault = new Error('store down')
    await expect(cache.get('k', 'm', () => Promise.reject(fault))).rejects.toBe(fault)
    expect(await cache.get('k', 'm', async () => 'back')).toMatchObject({ value: 'back' })
  })

  it('a background computation that fails hands its error to the next request, once', async () => {
    const { clock, cache } = setup({ waitMs: 20 })
    await cache.get('k', 'm1', async () => {
      clock.t += 5_000
      return 'old'
    })
    const g = gate<string>()
    expect(await cache.get('k', 'm2', () => g.promise)).toMatchObject({ value: 'old', refreshing: true })
    const fault = new Error('statement timeout')
    g.reject(fault)
    await g.promise.catch(() => {})
    await new Promise((r) => setImmediate(r))
    await expect(cache.get('k', 'm2', async () => 'unused')).rejects.toBe(fault)
    // Still a slow read: the previous answer at once, and a new computation…
    expect(await cache.get('k', 'm2', async () => 'fresh')).toMatchObject({ value: 'old', refreshing: true })
    await new Promise((r) => setImmediate(r))
    // …whose answer the next request gets.
    expect(await cache.get('k', 'm2', async () => 'unused')).toMatchObject({ value: 'fresh', refreshing: false })
  })

  it('runs at most `concurrency` computations at once; the others wait for a place', async () => {
    const { cache } = setup({ waitMs: 10, concurrency: 2 })
    const gates = [gate<string>(), gate<string>(), gate<string>()]
    const started: number[] = []
    for (const [i, g] of gates.entries())
      expect(
        await cache.get(`k${i}`, 'm', () => {
          started.push(i)
          return g.promise
        }),
      ).toEqual({ state: 'preparing' })
    expect(started).toEqual([0, 1])
    gates[0]?.resolve('a')
    await gates[0]?.promise
    await new Promise((r) => setImmediate(r))
    expect(started).toEqual([0, 1, 2])
    gates[1]?.resolve('b')
    gates[2]?.resolve('c')
    expect(await cache.get('k2', 'm', async () => 'unused')).toMatchObject({ value: 'c' })
  })

  it('keeps at most maxEntries keys, the least recently used going first', async () => {
    const { cache } = setup({ maxEntries: 2 })
    let calls = 0
    const compute = async () => `v${++calls}`
    await cache.get('a', 'm', compute)
    await cache.get('b', 'm', compute)
    await cache.get('a', 'm', compute) // a used last
    await cache.get('c', 'm', compute) // b goes
    expect(cache.size).toBe(2)
    expect(calls).toBe(3)
    expect(await cache.get('a', 'm', compute)).toMatchObject({ value: 'v1' })
    expect(await cache.get('b', 'm', compute)).toMatchObject({ value: 'v4' })
  })
})
