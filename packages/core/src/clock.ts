/** A timer of a {@link Clock}: Node's `Timeout` is one. */
export interface ClockTimer {
  ref(): unknown
  unref(): unknown
}

/**
 * Time as the delivery engine sees it: the time-driven rules (retry delays, Retry-After holds,
 * the gate, the burst window, pacing, the limiter's rounds, request deadlines) read `now` and set
 * timers only through it, so a test can drive them (see test/support/driven-clock.ts). Real time
 * by default; the caller's own budgets (`flush(timeoutMs)`, `close`) stay on real time.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /** A monotonic, sub-millisecond reading for latencies (loopback answers take < 1 ms). */
  precise(): number
  setTimeout(fn: () => void, ms: number): ClockTimer
  clearTimeout(timer: ClockTimer): void
}

export const realClock: Clock = {
  now: () => Date.now(),
  precise: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
}

/**
 * The internal option that hands `createTracker` a clock (tests only): a symbol, so it is in no
 * public type and no user sets it by accident.
 */
export const CLOCK = Symbol.for('convotrack.clock')

/** The clock in tracker options (`{ [CLOCK]: clock }`), else real time. */
export function clockOf(options: object): Clock {
  return (options as { [CLOCK]?: Clock })[CLOCK] ?? realClock
}
