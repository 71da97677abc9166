import { describe, expect, it } from 'vitest'
import { ConcurrencyLimiter } from '../src/limiter'

// The adaptive concurrency limit on a driven clock: every request, answer and millisecond is the
// test's, so each rule of the core README ("Adaptive concurrency") is checked exactly.

const T0 = 1_000_000

/**
 * Round trips against a service: each round sends `limit` requests at `t`, all answered
 * `latencyOf(limit)` ms later, with records still waiting (`backlogged`) and every slot taken.
 * Returns the limit after each round.
 */
function rounds(
  l: ConcurrencyLimiter,
  n: number,
  latencyOf: (inFlight: number) => number,
  opts: { arrivals?: number; start?: number } = {},
): { limits: number[]; now: number } {
  let now = opts.start ?? T0
  const limits: number[] = []
  for (let r = 0; r < n; r++) {
    const inFlight = l.limit
    const sentAt = now
    const latency = latencyOf(inFlight)
    now = sentAt + latency
    for (let i = 0; i < inFlight; i++) l.onSuccess(latency, sentAt, true, true, now, opts.arrivals ?? 0)
    limits.push(l.limit)
  }
  return { limits, now }
}

describe('ConcurrencyLimiter (driven clock)', () => {
  it('slow start: +1 per saturated answer, so the limit doubles per round trip while more in flight delivers more', () => {
    const l = new ConcurrencyLimiter(4, 256, 16)
    // A service 50 ms away: the delivery rate grows with the limit.
    const { limits } = rounds(l, 5, () => 50)
    expect(limits).toEqual([32, 64, 128, 256, 256])
  })

  it('grows only while every slot is taken and records wait', () => {
    const l = new ConcurrencyLimiter(4, 256, 16)
    for (let i = 0; i < 100; i++) l.onSuccess(50, T0, false, false, T0 + 50 + i)
    expect(l.limit).toBe(16)
  })

  it("Little's law jump: 2 × arrival rate × baseline latency, at most 4× the round's limit, once per round", () => {
    const l = new ConcurrencyLimiter(4, 256, 16)
    // 500 records/s against 200 ms: Little's law says 200; capped at 4 × 16.
    l.onSuccess(200, T0, true, true, T0 + 200, 500)
    expect(l.limit).toBe(64)
    // The same round: no second jump, slow start goes on (+1).
    l.onSuccess(200, T0, true, true, T0 + 200, 500)
    expect(l.limit).toBe(65)
  })

  it('no jump when Little says fewer than the limit', () => {
    const l = new ConcurrencyLimiter(4, 256, 16)
    l.onSuccess(10, T0, true, true, T0 + 10, 100) // 2 × 100/s × 10 ms = 2
    expect(l.limit).toBe(17)
  })

  it('a larger limit that delivers no more (a CPU-bound loopback) goes back to the smaller one and holds 5 s', () => {
    const l = new ConcurrencyLimiter(4, 256, 16)
    // Latency grows with the requests in flight: the rate is 1 600 records/s whatever the limit.
    const cpuBound = (inFlight: number) => Math.max(10, inFlight / 1.6)
    const { limits, now } = rounds(l, 5, cpuBound)
    // A round is judged when it ends (at the first answer to a request sent after it began), so
    // the verdict on the 32-round comes one round trip later: 16 → 32 → 64, then back to 16, held.
    expect(limits).toEqual([32, 64, 16, 16, 16])
    // After the hold, slow start again.
    const later = rounds(l, 1, cpuBound, { start: now + 5_000 })
    expect(later.limits[0]).toBeGreaterThan(16)
  })

  it('congestion: a whole limit of failures with nothing answered halves the limit at once, once per round trip', () => {
    const l = new ConcurrencyLimiter(4, 256, 16)
    for (let i = 0; i < 15; i++) l.onCongestion(T0, T0 + 100)
    expect(l.limit).toBe(16)
    l.onCongestion(T0, T0 + 100)
    expect(l.limit).toBe(8)
    // Requests sent before the cut are that round's: they do not cut again.
    for (let i = 0; i < 16; i++) l.onCongestion(T0 + 50, T0 + 150)
    expect(l.limit).toBe(8)
    // Sent after the cut: they do.
    for (let i = 0; i < 8; i++) l.onCongestion(T0 + 200, T0 + 300)
    expect(l.limit).toBe(4)
  })

  it('congestion: more than a quarter of a round trip’s answers are congestion signals → halved at the round’s end; a minority is not', () => {
    const minority = new ConcurrencyLimiter(4, 256, 32)
    const majority = new ConcurrencyLimiter(4, 256, 32)
    for (const [l, bad] of [
      [minority, 4],
      [majority, 12],
    ] as const) {
      // Round 1 starts at the first answer; requests of round 2 are sent at T0 + 20.
      for (let i = 0; i < 20; i++) l.onSuccess(20, T0 - 20, false, false, T0)
      for (let i = 0; i < bad; i++) l.onCongestion(T0 - 20, T0 + 10)
      // The first answer to a request sent after the round began ends it.
      l.onSuccess(20, T0 + 20, false, false, T0 + 40)
    }
    expect(minority.limit).toBe(32)
    expect(majority.limit).toBe(16)
  })

  it('never leaves [floor, cap]', () => {
    const up = new ConcurrencyLimiter(4, 20, 16)
    rounds(up, 5, () => 50)
    expect(up.limit).toBe(20)
    const l = new ConcurrencyLimiter(4, 20, 16)
    let t = T0 + 1_000_000
    for (let i = 0; i < 10; i++) {
      t += 1_000
      for (let k = 0; k < 32; k++) l.onCongestion(t, t + 1)
    }
    expect(l.limit).toBe(4)
  })
})
