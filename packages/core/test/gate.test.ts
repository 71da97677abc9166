import { describe, expect, it } from 'vitest'
import { Gate } from '../src/gate'
import { DrivenClock } from './support/driven-clock'

// The global gate on a driven clock: closed until the time it was given, then one wake-up.

const always = () => true

describe('Gate', () => {
  it('holds until the time it was closed for, then wakes the engine once (a probe goes)', async () => {
    const clock = new DrivenClock()
    const gate = new Gate(clock)
    let woken = 0
    const wake = () => woken++
    gate.close(clock.now(), 1_000)
    expect(gate.probing).toBe(true)
    expect(gate.round).toBe(1)
    expect(gate.isClosed(clock.now(), wake, false)).toBe(true)
    expect(gate.isClosed(clock.now(), wake, false)).toBe(true) // one timer, however often asked
    await clock.advance(999, always)
    expect(woken).toBe(0)
    expect(gate.isClosed(clock.now(), wake, false)).toBe(true)
    await clock.advance(1, always)
    expect(woken).toBe(1)
    expect(gate.isClosed(clock.now(), wake, false)).toBe(false)
    gate.opened()
    expect(gate.probing).toBe(false)
  })

  it('a later closing extends it; an earlier one never shortens it', async () => {
    const clock = new DrivenClock()
    const gate = new Gate(clock)
    gate.close(clock.now(), 1_000)
    await clock.advance(500, always)
    gate.close(clock.now(), 200) // would end at 700: the gate stays closed until 1 000
    expect(gate.round).toBe(2)
    await clock.advance(499, always)
    expect(gate.isClosed(clock.now(), () => {}, false)).toBe(true)
    await clock.advance(1, always)
    expect(gate.isClosed(clock.now(), () => {}, false)).toBe(false)
  })

  it('reopen() (a 503 that was one instance’s) opens at once and cancels the wake-up', async () => {
    const clock = new DrivenClock()
    const gate = new Gate(clock)
    let woken = 0
    gate.close(clock.now(), 3_000, 7)
    expect(gate.unavailableSeq).toBe(7)
    expect(gate.isClosed(clock.now(), () => woken++, false)).toBe(true)
    gate.reopen()
    expect(gate.unavailableSeq).toBeUndefined()
    expect(gate.isClosed(clock.now(), () => woken++, false)).toBe(false)
    expect(clock.nextAt).toBeUndefined()
    await clock.advance(5_000, always)
    expect(woken).toBe(0)
  })
})
