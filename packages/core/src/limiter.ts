/**
 * Adaptive concurrency: how many requests may be in flight. AIMD with a slow start and a
 * latency guard (the TCP Reno / Vegas ideas, as in Netflix's concurrency-limits):
 *
 * - it grows only while records wait for a free slot (the limit is what holds delivery back)
 *   and the service's latency holds: +1 per success below the slow-start threshold (doubles per
 *   round trip), +1/limit above it (one per round trip);
 * - it halves on a congestion signal (a timeout, a 5xx, a reset), at most once per round trip:
 *   only a request sent after the previous cut can cut again;
 * - it never leaves [floor, cap]. Little's law sizes the jump: when saturated, the limit goes
 *   straight to 2 × arrival rate × latency if that is higher (500 records/s against a service
 *   200 ms away needs about 100 in flight; 2× leaves room to work off a backlog).
 */
export class ConcurrencyLimiter {
  private value: number
  private threshold = Number.POSITIVE_INFINITY
  private lastCut = 0
  private minLatency = Number.POSITIVE_INFINITY
  private minSince = 0

  constructor(
    readonly floor: number,
    readonly cap: number,
    initial: number,
  ) {
    this.value = Math.min(cap, Math.max(floor, initial))
  }

  /** Requests allowed in flight now. */
  get limit(): number {
    return Math.floor(this.value)
  }

  /**
   * A request answered after `latencyMs`. `saturated`: every slot was taken and records were
   * waiting for one, so more concurrency would have sent more.
   */
  onSuccess(latencyMs: number, saturated: boolean, now: number, arrivalsPerSec = 0): void {
    // The baseline is the lowest latency of the last 30 s: a route change re-baselines.
    if (latencyMs < this.minLatency || now - this.minSince > 30_000) {
      this.minLatency = latencyMs
      this.minSince = now
    }
    if (!saturated || this.value >= this.cap) return
    // Latency well above the baseline: requests queue at the service; more would only wait there.
    if (latencyMs > 2 * this.minLatency + 20) return
    this.value += this.value < this.threshold ? 1 : 1 / this.value
    const little = Math.ceil((2 * arrivalsPerSec * latencyMs) / 1000)
    if (little > this.value && this.value < this.threshold) this.value = little
    if (this.value > this.cap) this.value = this.cap
  }

  /** A congestion signal from a request sent at `sentAt`. */
  onCongestion(sentAt: number, now: number): void {
    if (sentAt < this.lastCut) return // the same round trip's news: already cut
    this.lastCut = now
    this.value = Math.max(this.floor, this.value / 2)
    this.threshold = this.value
  }
}
