import type { Clock, ClockTimer } from './clock'

/** Something with an absolute deadline that can be cut short (an attempt in flight). */
export interface Timed {
  /** Milliseconds since the epoch after which it is cut. */
  deadlineAt: number
  /** The deadline passed: cut it now. */
  expire(): void
}

/**
 * The absolute per-request deadline (connect to last byte). One sweeper timer checks every
 * request in flight and cuts the late ones; a request carries no timer, no `AbortSignal` and
 * no listener of its own (on Node 20 a per-request `AbortSignal` costs 35–40 % of delivery
 * throughput, `AbortSignal.timeout` more: measured in bench/).
 */
export class Deadlines {
  private readonly live = new Set<Timed>()
  private sweeper: ClockTimer | undefined
  private readonly every: number

  constructor(
    private readonly timeoutMs: number,
    private readonly clock: Clock,
  ) {
    this.every = Math.max(10, Math.min(250, Math.floor(timeoutMs / 4)))
  }

  /** Starts the clock of `t` at `now`. */
  start(t: Timed, now: number): void {
    t.deadlineAt = now + this.timeoutMs
    this.live.add(t)
    if (!this.sweeper) this.arm()
  }

  /** `t` ended on its own. */
  done(t: Timed): void {
    this.live.delete(t)
  }

  stop(): void {
    if (this.sweeper) this.clock.clearTimeout(this.sweeper)
    this.sweeper = undefined
  }

  /** A timer re-armed after each sweep (a clock has no interval: one kind of timer to drive). */
  private arm(): void {
    this.sweeper = this.clock.setTimeout(this.sweep, this.every)
    this.sweeper.unref()
  }

  private readonly sweep = (): void => {
    this.sweeper = undefined
    const now = this.clock.now()
    for (const t of this.live) {
      if (t.deadlineAt > now) continue
      this.live.delete(t)
      t.expire()
    }
    if (this.live.size > 0 && !this.sweeper) this.arm()
  }
}
