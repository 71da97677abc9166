import { describe, expect, it } from 'vitest'
import { RatePacer } from '../src/pacer'

// Pacing after rate limits on a driven clock: the test plays the service, millisecond by
// millisecond, so each rule of the core README ("Rate limits are a rate") is checked exactly.

const T0 = 1_000_000

interface Run {
  /** Requests sent, accepted and refused per second of the run. */
  sent: number[]
  accepted: number[]
  refused: number[]
  rates: number[]
}

/**
 * Offers `offeredPerSec` requests (always something waiting) for `seconds`, through the pacer,
 * to a service that `answers(now)` each at once: true accepted, false refused (429).
 */
function drive(p: RatePacer, seconds: number, answers: (now: number) => boolean, start = T0): Run {
  const run: Run = { sent: [], accepted: [], refused: [], rates: [] }
  for (let sec = 0; sec < seconds; sec++) {
    let sent = 0
    let accepted = 0
    let refused = 0
    for (let ms = 0; ms < 1_000; ms++) {
      const now = start + sec * 1_000 + ms
      // Up to 2 requests per ms are offered (2 000/s): far above any limit here.
      for (let k = 0; k < 2; k++) {
        if (p.admit(now) > 0) break
        sent++
        if (answers(now)) {
          accepted++
          p.onAccepted(now)
        } else {
          refused++
          p.onLimited(now)
        }
      }
    }
    run.sent.push(sent)
    run.accepted.push(accepted)
    run.refused.push(refused)
    run.rates.push(p.rate)
  }
  return run
}

/** A token bucket of `perSec` requests per second (burst one second's worth). */
function bucket(perSec: number): (now: number) => boolean {
  let tokens = perSec
  let at = T0
  return (now) => {
    tokens = Math.min(perSec, tokens + ((now - at) * perSec) / 1_000)
    at = now
    if (tokens < 1) return false
    tokens--
    return true
  }
}

describe('RatePacer (driven clock)', () => {
  it('does not pace until refused: every request admitted at once', () => {
    const p = new RatePacer()
    expect(p.pacing).toBe(false)
    const run = drive(p, 2, () => true)
    expect(run.sent).toEqual([2_000, 2_000])
    expect(p.pacing).toBe(false)
  })

  it('converges on a token bucket: sends between the bucket rate and ~1.5× it, delivers the bucket rate', () => {
    const p = new RatePacer()
    const run = drive(p, 10, bucket(300))
    // Once paced (after the first windows), sending settles near the accepted rate × 1.25.
    for (const sent of run.sent.slice(3)) {
      expect(sent).toBeGreaterThanOrEqual(300)
      expect(sent).toBeLessThanOrEqual(300 * 1.6)
    }
    for (const accepted of run.accepted.slice(3)) expect(accepted).toBeGreaterThanOrEqual(290)
    expect(p.pacing).toBe(true)
  })

  it('refusals of 20 % or less are noise: never paced, nothing held back', () => {
    const p = new RatePacer()
    let n = 0
    const run = drive(p, 5, () => ++n % 10 !== 0) // every 10th refused
    expect(p.pacing).toBe(false)
    expect(run.sent.every((s) => s === 2_000)).toBe(true)
  })

  it('everything refused is the gate’s business: the pacer does not start pacing on it', () => {
    const p = new RatePacer()
    drive(p, 3, () => false)
    expect(p.pacing).toBe(false)
  })

  it('probing: a limit that went away is found again (× 2 per window while held back with nothing refused), then pacing switches off', () => {
    const p = new RatePacer()
    const limited = drive(p, 5, bucket(100))
    expect(p.pacing).toBe(true)
    const paced = p.rate
    // The limit is lifted: nothing refused.
    const free = drive(p, 4, () => true, T0 + 5_000)
    expect(free.rates[0]).toBeGreaterThanOrEqual(paced * 2)
    // Doubling each window until the pacer holds nothing back; four quiet windows switch it off.
    const after = drive(p, 6, () => true, T0 + 9_000)
    expect(p.pacing).toBe(false)
    expect(after.sent.at(-1)).toBe(2_000)
    expect(limited.sent.at(-1)).toBeLessThan(200)
  })

  it('a paced rate grows × 1.25 per window when refusals turn into noise', () => {
    const p = new RatePacer()
    drive(p, 5, bucket(100))
    const paced = p.rate
    let n = 0
    // Every 10th refused: noise. The pacer held requests back, so the rate probes upwards.
    drive(p, 1, () => ++n % 10 !== 0, T0 + 5_000)
    expect(p.rate).toBeGreaterThan(paced)
  })

  it('admit tells how long until the next token', () => {
    const p = new RatePacer()
    drive(p, 3, bucket(50))
    const now = T0 + 3_000
    let wait = 0
    for (let i = 0; i < 100 && wait === 0; i++) wait = p.admit(now)
    expect(wait).toBeGreaterThan(0)
    expect(wait).toBeLessThanOrEqual(Math.ceil(1_000 / p.rate))
  })
})
