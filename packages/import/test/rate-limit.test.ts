/**
 * RateLimit on a driven clock (vitest's fake timers: performance.now and the timer it sleeps on):
 * the spacing is exact and independent of the machine's speed.
 */
import { RateLimit } from '@convotrack/import'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance', 'setTimeout', 'clearTimeout'] })
})
afterEach(() => {
  vi.useRealTimers()
})

/** Takes `n` slots; returns the driven time at which each one was granted. */
async function grants(limit: RateLimit, n: number): Promise<number[]> {
  const at: number[] = []
  for (let i = 0; i < n; i++) {
    const taken = limit.take()
    await vi.runAllTimersAsync()
    await taken
    at.push(performance.now())
  }
  return at
}

describe('RateLimit', () => {
  it('spaces records evenly: 100/s is one every 10 ms, the first at once', async () => {
    const t0 = performance.now()
    const at = (await grants(new RateLimit(100), 31)).map((t) => t - t0)
    expect(at[0]).toBe(0)
    expect(at[30]).toBe(300) // 31 records at 100/s: the last one 300 ms after the first
    for (let i = 1; i < at.length; i++) expect((at[i] as number) - (at[i - 1] as number)).toBe(10)
  })

  it('after a stall, starts again from now: one record of the backlog at most goes at once, no burst', async () => {
    const limit = new RateLimit(10) // one every 100 ms
    await grants(limit, 2)
    vi.advanceTimersByTime(5_000) // the caller was busy elsewhere for 5 s
    const t0 = performance.now()
    const at = (await grants(limit, 4)).map((t) => t - t0)
    expect(at).toEqual([0, 0, 100, 200])
  })

  it('0 and Infinity mean no limit', async () => {
    for (const perSecond of [0, Number.POSITIVE_INFINITY]) {
      const t0 = performance.now()
      const at = await grants(new RateLimit(perSecond), 50)
      expect(at.every((t) => t === t0)).toBe(true)
    }
  })
})
