import { describe, expect, it } from 'vitest'
import { Deadlines, type Timed } from '../src/deadlines'
import { DrivenClock } from './support/driven-clock'

// The per-request deadline on a driven clock: one sweeper timer, cut exactly when due.

const always = () => true

function timed(): Timed & { expired: number } {
  return {
    deadlineAt: 0,
    expired: 0,
    expire() {
      this.expired++
    },
  }
}

/** A 300 ms deadline on a driven clock, and one request started on it now. */
function started() {
  const clock = new DrivenClock()
  const deadlines = new Deadlines(300, clock)
  const t = timed()
  deadlines.start(t, clock.now())
  return { clock, deadlines, t }
}

describe('Deadlines', () => {
  it('cuts a request once its deadline has passed, not a millisecond before', async () => {
    const { clock, t } = started()
    await clock.advance(299, always)
    expect(t.expired).toBe(0)
    await clock.advance(1, always)
    expect(t.expired).toBe(1)
    // Nothing left in flight: the sweeper stops (no timer keeps running).
    expect(clock.nextAt).toBeUndefined()
  })

  it('a request that ended on its own is never cut; the sweeper runs only while requests are in flight', async () => {
    const { clock, deadlines, t: done } = started()
    const late = timed()
    await clock.advance(100, always)
    deadlines.start(late, clock.now())
    deadlines.done(done)
    await clock.advance(349, always)
    expect(done.expired).toBe(0)
    // Due at 400; the sweeps run every 75 ms (a quarter of the timeout) from the first start:
    // the one after 400 is at 450.
    expect(late.expired).toBe(0)
    await clock.advance(1, always)
    expect(late.expired).toBe(1)
    expect(clock.nextAt).toBeUndefined()
  })

  it('stop() cancels the sweeper', async () => {
    const { clock, deadlines, t } = started()
    deadlines.stop()
    expect(clock.nextAt).toBeUndefined()
    await clock.advance(1_000, always)
    expect(t.expired).toBe(0)
  })
})
