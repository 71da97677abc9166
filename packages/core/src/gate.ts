import type { Clock, ClockTimer } from './clock'

/**
 * The global gate: stops every request while the service is unreachable, unavailable (503 +
 * Retry-After) or refusing everything (429 + Retry-After), then lets one probe through
 * (half-open) before the rest follow, so a down service costs one probe per backoff step, not
 * one failed request per record. When to close it is the failure policy's call (`failure-policy.ts`).
 */
export class Gate {
  /** Closed until this time (ms since epoch). */
  until = 0
  /** Bumped each time the gate closes: failures of requests sent in an earlier round are that round's, not new ones. */
  round = 0
  /** Half-open after the gate: one request probes the service before the rest follow. */
  probing = false
  /** Consecutive connect failures: the backoff step of the next closing. */
  connectFailures = 0
  /**
   * `seq` of the request whose 503 closed the gate (undefined when no 503 closed it): a
   * request sent after it and served says the 503 was one instance's (see `servedReopens`).
   */
  unavailableSeq: number | undefined = undefined
  private timer: ClockTimer | undefined

  constructor(private readonly clock: Clock) {}

  /**
   * True while the gate is closed at `now`; then `wake` runs once when it reopens (the timer
   * keeps the process alive only when `keepAlive`).
   */
  isClosed(now: number, wake: () => void, keepAlive: boolean): boolean {
    if (this.until <= now) return false
    if (!this.timer) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined
        wake()
      }, this.until - now)
      if (!keepAlive) this.timer.unref()
    }
    return true
  }

  /**
   * Closes the gate for `waitMs` from `now` (a new round) and probes when it reopens.
   * `unavailableSeq`: a 503 closes it, for that request.
   */
  close(now: number, waitMs: number, unavailableSeq?: number): void {
    this.round++
    this.unavailableSeq = unavailableSeq
    this.until = Math.max(this.until, now + waitMs)
    this.probing = true
  }

  /** The service answered: open up fully. */
  opened(): void {
    this.connectFailures = 0
    this.probing = false
  }

  /** Opens at once (the 503 that closed it was one instance's). */
  reopen(): void {
    this.until = 0
    this.unavailableSeq = undefined
    this.stop()
  }

  ref(ref: boolean): void {
    if (this.timer) ref ? this.timer.ref() : this.timer.unref()
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer)
    this.timer = undefined
  }
}
