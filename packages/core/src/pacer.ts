/**
 * Rate pacing after a rate limit (429, or 503 with Retry-After). A limit is a rate, not a wall:
 * once the service says "slower", requests are spaced at the rate it was *accepting* over the
 * last window, times a probe factor, re-measured every window. Against a token bucket of L
 * requests/s the accepted rate is L, so sending settles near L × 1.25 with L accepted (the
 * excess is answered 429 and retried after its Retry-After): delivery converges on the limit.
 * Against random 429s (a fraction p of answers, whatever the rate) the accepted rate is
 * (1 − p) × sent, so the next window allows (1 − p) × 1.25 × sent, more than sent for p < 20 %:
 * random refusals never collapse throughput. A window with no refusal while the pacer held
 * requests back raises the rate by the probe factor; a few quiet windows switch pacing off.
 */
export class RatePacer {
  /** Requests per second allowed; Infinity while not pacing. */
  rate = Number.POSITIVE_INFINITY
  private tokens = 0
  private refilledAt = 0
  private windowStart = 0
  private accepted = 0
  private limited = 0
  private sent = 0
  private held = false
  private quiet = 0

  constructor(
    private readonly windowMs = 500,
    private readonly probe = 1.25,
    private readonly minRate = 2,
  ) {}

  get pacing(): boolean {
    return this.rate !== Number.POSITIVE_INFINITY
  }

  /**
   * May a request go now? Returns 0 when it may (and takes a token), else the wait in ms until
   * one is available.
   */
  admit(now: number): number {
    this.roll(now)
    if (!this.pacing) {
      this.sent++
      return 0
    }
    const burst = Math.max(1, this.rate * 0.05)
    this.tokens = Math.min(burst, this.tokens + ((now - this.refilledAt) * this.rate) / 1000)
    this.refilledAt = now
    if (this.tokens >= 1) {
      this.tokens--
      this.sent++
      return 0
    }
    this.held = true
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.rate))
  }

  onAccepted(now: number, n = 1): void {
    this.roll(now)
    this.accepted += n
  }

  /** A rate-limit answer: the pacer engages (at the latest at the end of this window). */
  onLimited(now: number): void {
    this.roll(now)
    this.limited++
    if (!this.pacing && now - this.windowStart >= 100) this.roll(now, true)
  }

  private roll(now: number, force = false): void {
    const elapsed = now - this.windowStart
    if (!force && elapsed < this.windowMs) return
    if (this.windowStart !== 0 && elapsed > 0 && this.sent > 0) {
      const acceptedRate = (this.accepted * 1000) / Math.min(elapsed, 2 * this.windowMs)
      if (this.limited > 0) {
        this.quiet = 0
        const next = this.accepted > 0 ? acceptedRate * this.probe : this.rate / 2
        this.rate = Math.max(this.minRate, Number.isFinite(next) ? next : this.minRate)
        if (this.tokens > 1) this.tokens = 1
        this.refilledAt = now
      } else if (this.pacing) {
        if (this.held) this.rate *= this.probe
        if (++this.quiet >= 4) this.rate = Number.POSITIVE_INFINITY
      }
    }
    this.windowStart = now
    this.accepted = 0
    this.limited = 0
    this.sent = 0
    this.held = false
  }
}
