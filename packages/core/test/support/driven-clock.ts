/**
 * A clock the test moves (see src/clock.ts): time stands still until `advance` or `runUntil`,
 * which fire the timers due on the way in order, each at its own time. Sockets stay real: after
 * each instant's timers, the test's `quiet` condition (every request out is held by the service, or none
 * is out) is awaited before time moves on, so what happens at one instant has happened before
 * the next — however slow the machine.
 */
import { vi } from 'vitest'
import { CLOCK, type Clock, type ClockTimer } from '../../src/clock'

interface Pending extends ClockTimer {
  at: number
  seq: number
  fn: () => void
}

/** Until this is true, the world has not settled at the current instant. */
export type Quiet = () => boolean

/** Generous: a hang detector for one settle step, not a speed limit. */
const SETTLE_TIMEOUT_MS = 60_000

export class DrivenClock implements Clock {
  private t: number
  private seq = 0
  private timers: Pending[] = []

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start
  }

  /** Tracker options that put the tracker on this clock. */
  get option(): { [CLOCK]: Clock } {
    return { [CLOCK]: this }
  }

  now(): number {
    return this.t
  }

  precise(): number {
    return this.t
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: Pending = {
      at: this.t + Math.max(0, ms),
      seq: this.seq++,
      fn,
      ref: () => timer,
      unref: () => timer,
    }
    this.timers.push(timer)
    return timer
  }

  clearTimeout(timer: ClockTimer): void {
    this.timers = this.timers.filter((x) => x !== timer)
  }

  /** When the next timer is due (undefined: none set). */
  get nextAt(): number | undefined {
    return this.next()?.at
  }

  /** Waits until `quiet` holds (real I/O finishing at this instant), the clock standing still. */
  async settle(quiet: Quiet): Promise<void> {
    await new Promise((r) => setImmediate(r))
    await vi.waitFor(
      () => {
        if (!quiet()) throw new Error(`the world did not settle at this instant: ${quiet}`)
      },
      { timeout: SETTLE_TIMEOUT_MS, interval: 1 },
    )
  }

  /** Moves time forward `ms`, firing the timers due on the way at their times and settling after each instant. */
  async advance(ms: number, quiet: Quiet): Promise<void> {
    const end = this.t + ms
    await this.settle(quiet)
    for (let t = this.next(); t && t.at <= end; t = this.next()) {
      await this.fire(t, quiet)
    }
    this.t = end
    await this.settle(quiet)
  }

  /**
   * Fires timers in order (settling after each) until `done` holds; throws when no timer is left
   * and it still does not, or past `limitMs` of driven time (a rule that never lets go).
   */
  async runUntil(done: () => boolean, quiet: Quiet, limitMs = 600_000): Promise<void> {
    const end = this.t + limitMs
    await this.settle(quiet)
    while (!done()) {
      const t = this.next()
      if (!t) throw new Error(`nothing left to happen and not done: ${done}`)
      if (t.at > end) throw new Error(`not done within ${limitMs} ms of driven time: ${done}`)
      await this.fire(t, quiet)
    }
  }

  private next(): Pending | undefined {
    let best: Pending | undefined
    for (const t of this.timers) if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t
    return best
  }

  /** Fires `t` and every other timer due at its instant (in the order they were set), then settles. */
  private async fire(t: Pending, quiet: Quiet): Promise<void> {
    if (t.at > this.t) this.t = t.at
    for (let due = this.next(); due && due.at <= this.t; due = this.next()) {
      this.timers = this.timers.filter((x) => x !== due)
      due.fn()
    }
    await this.settle(quiet)
  }
}

/** Resolves `p`'s outcome as a flag check (for `runUntil(() => settled.done, …)`). */
export function track<T>(p: Promise<T>): { done: boolean; value: Promise<T> } {
  const state = { done: false, value: p }
  p.then(
    () => {
      state.done = true
    },
    () => {
      state.done = true
    },
  )
  return state
}
