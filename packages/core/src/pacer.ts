/**
 * Rate pacing after rate limits (429; a 503 is unavailability, the gate's business, see
 * `failure-policy.ts`). A limit is a rate, not a wall. Every method takes `now`, so it runs on a
 * driven clock in tests.
 * Every window (500 ms, longer until 20 answers came back) the pacer looks at the share of
 * answers that were rate-limit refusals:
 *
 * - over 20 %: the service is refusing for real. Requests are spaced at the rate it *accepted*
 *   in that window × 1.25 (a probe above it). Against a token bucket of L requests/s the accepted
 *   rate is L, so sending ends up between 1.25 L and ~1.5 L with L accepted: delivery converges
 *   on the limit, the excess is answered 429 and retried after its Retry-After;
 * - 20 % or less: refusals are noise (random 429s, a bucket barely touched): the refused records
 *   wait their Retry-After, and the rate, if paced and the pacer kept requests back, grows by
 *   × 1.25 per window (× 2 when nothing was refused). Random refusals never collapse throughput;
 * - nothing accepted: the gate's business (every request waits out the Retry-After), the
 *   rate stays;
 * - four windows without keeping anything back switch pacing off.
 */
export class RatePacer {
  /** Requests per second allowed; Infinity while not pacing. */
  rate = Number.POSITIVE_INFINITY
  private tokens = 0
  private refilledAt = 0
  private windowStart = 0
  private accepted = 0
  private limited = 0
  private keptBack = false
  private quiet = 0

  constructor(
    private readonly windowMs = 500,
    private readonly probe = 1.25,
    private readonly refusedShare = 0.2,
    private readonly minRate = 2,
  ) {}

  get pacing(): boolean {
    return this.rate !== Number.POSITIVE_INFINITY
  }

  /** May a request go now? 0 when it may (a token is taken), else the wait in ms for the next token. */
  admit(now: number): number {
    if (!this.pacing) return 0
    this.roll(now)
    if (!this.pacing) return 0
    const burst = Math.max(1, this.rate * 0.05)
    this.tokens = Math.min(burst, this.tokens + ((now - this.refilledAt) * this.rate) / 1000)
    this.refilledAt = now
    if (this.tokens >= 1) {
      this.tokens--
      return 0
    }
    this.keptBack = true
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.rate))
  }

  onAccepted(now: number): void {
    this.accepted++
    this.roll(now)
  }

  /** A rate-limit answer. */
  onLimited(now: number): void {
    this.limited++
    this.roll(now)
  }

  private roll(now: number): void {
    if (this.windowStart === 0) this.windowStart = now
    const elapsed = now - this.windowStart
    const answers = this.accepted + this.limited
    if (elapsed < this.windowMs || (answers < 20 && elapsed < 4 * this.windowMs)) return
    if (this.accepted > 0 && this.limited > answers * this.refusedShare) {
      this.quiet = 0
      this.rate = Math.max(this.minRate, ((this.accepted * 1000) / elapsed) * this.probe)
      this.tokens = Math.min(this.tokens, 1)
      this.refilledAt = now
    } else if (this.pacing && this.accepted > 0) {
      // Everything refused is the gate's business (every request waits out the Retry-After).
      if (this.keptBack) {
        // No refusal at all: the limit moved or went away; find it again quickly.
        this.rate *= this.limited === 0 ? 2 : this.probe
        this.quiet = 0
      } else if (++this.quiet >= 4) {
        this.rate = Number.POSITIVE_INFINITY
      }
    }
    this.windowStart = now
    this.accepted = 0
    this.limited = 0
    this.keptBack = false
  }
}
