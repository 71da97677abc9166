/**
 * Adaptive concurrency: how many requests may be in flight. AIMD with a slow start, checked
 * round trip by round trip against the delivery rate (the TCP Reno / BBR ideas, as in
 * Netflix's concurrency-limits; why not a latency-gradient limiter: see the core README):
 *
 * - it grows only while records wait for a free slot (the limit is what keeps delivery back):
 *   +1 per success below the slow-start threshold (doubles per round trip), +1/limit above it;
 *   Little's law sizes a jump: up to 2 × arrival rate × baseline latency (500 records/s against
 *   a service 200 ms away needs about 100 in flight), at most one jump per round and at most
 *   4× the round's limit (a burst's arrival rate is not a rate the service can take: the round
 *   that follows checks what the jump was worth);
 * - every round trip the delivery rate is checked: when the limit has grown by a quarter or
 *   more since the last checked round and it did not deliver at least 10 % more (a service or
 *   a loopback that is CPU-bound, where more sockets only cost), the limit goes back to the
 *   smaller one and stays there for 5 s;
 * - it halves when more than a quarter of a round trip's answers are congestion signals (a
 *   timeout, a 5xx, a reset: a minority is the service's own errors, which more or fewer
 *   requests in flight would not change), at most once per round trip. A round without a cut
 *   re-enters slow start, so a backlog after a fault burst drains at full speed again;
 * - it never leaves [floor, cap].
 */
export class ConcurrencyLimiter {
  private value: number
  private threshold = Number.POSITIVE_INFINITY
  private lastCut = 0
  private minLatency = Number.POSITIVE_INFINITY
  private minSince = 0
  private roundStart = 0
  private roundDone = 0
  private roundBacklogged = 0
  private roundLimit = 0
  private prevRate = 0
  private prevLimit = 0
  private holdUntil = 0
  private roundCongested = 0
  /** The Little's-law jump was taken this round. */
  private roundJumped = false

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
   * A request sent at `sentAt` (ms since the epoch) answered after `latencyMs`. `saturated`:
   * every slot was taken when it left and records are waiting for one, so more concurrency
   * could have sent more. `backlogged`: records are waiting (the round's rate is what the limit
   * delivers, not what was offered).
   */
  onSuccess(
    latencyMs: number,
    sentAt: number,
    saturated: boolean,
    backlogged: boolean,
    now: number,
    arrivalsPerSec = 0,
  ): void {
    // The baseline is the lowest latency of the last 30 s: a route change re-baselines.
    if (latencyMs < this.minLatency || now - this.minSince > 30_000) {
      this.minLatency = latencyMs
      this.minSince = now
    }
    this.round(sentAt, backlogged, now)
    if (!saturated || this.value >= this.cap || now < this.holdUntil) return
    const before = this.value
    this.value += this.value < this.threshold ? 1 : 1 / this.value
    if (this.value < this.threshold && !this.roundJumped) {
      const little = Math.ceil((2 * arrivalsPerSec * this.minLatency) / 1000)
      if (little > this.value) {
        this.value = Math.max(before, Math.min(little, 4 * this.roundLimit))
        this.roundJumped = true
      }
    }
    if (this.value > this.cap) this.value = this.cap
  }

  /**
   * A congestion signal (a timeout, a 5xx, a reset) from a request sent at `sentAt`. A minority
   * of them is the service's own errors, not congestion: the limit halves when more than a
   * quarter of a round trip's answers are such signals (judged when the round ends), or at once
   * when a whole limit's worth failed with nothing answered (a service that stopped answering
   * ends no round). At most once per round trip: only a request sent after the cut cuts again.
   */
  onCongestion(sentAt: number, now: number): void {
    this.roundCongested++
    if (sentAt >= this.lastCut && this.roundDone === 0 && this.roundCongested >= Math.max(2, this.limit)) {
      this.cut(now)
      this.roundCongested = 0
    }
  }

  private cut(now: number): void {
    this.lastCut = now
    this.value = Math.max(this.floor, this.value / 2)
    this.threshold = this.value
  }

  /**
   * One round trip: it ends with the first answer to a request sent after it began (the TCP /
   * BBR notion: answers arrive in bursts one latency apart, so counting answers alone would
   * measure a burst), and lasts at least 10 ms and 8 answers so a loopback's rate is not noise.
   */
  private round(sentAt: number, backlogged: boolean, now: number): void {
    if (this.roundStart === 0) {
      this.roundStart = now
      this.roundLimit = this.limit
    }
    this.roundDone++
    if (backlogged) this.roundBacklogged++
    const elapsed = now - this.roundStart
    if (sentAt < this.roundStart || this.roundDone < 8 || elapsed < 10) return
    const rate = (this.roundDone * 1000) / elapsed
    const congested = this.roundCongested * 4 > this.roundDone + this.roundCongested
    if (congested && this.roundStart >= this.lastCut) this.cut(now)
    // Only a round where records kept waiting says what the limit is worth (a round of slow
    // start is one too: its limit grew as it went, but it still delivered what it could).
    const limited = this.roundBacklogged >= this.roundDone * 0.8
    if (limited && !congested) {
      if (this.prevLimit > 0 && this.roundLimit >= this.prevLimit * 1.25 && rate < this.prevRate * 1.1) {
        // More in flight delivered no more: back to the smaller limit, and stay there a while.
        this.value = Math.max(this.floor, this.prevLimit)
        this.threshold = this.value
        this.holdUntil = now + 5_000
      } else {
        if (this.prevLimit === 0 || this.roundLimit >= this.prevLimit * 1.25 || this.roundLimit < this.prevLimit) {
          this.prevLimit = this.roundLimit
          this.prevRate = rate
        } else if (rate > this.prevRate) {
          this.prevRate = rate // the best this level delivered (a first round is often a cold one)
        }
        if (now >= this.holdUntil) this.threshold = Number.POSITIVE_INFINITY // clean round: slow start again
      }
    } else {
      this.prevLimit = 0 // demand-bound or congested: no comparison across this round
    }
    this.roundCongested = 0
    this.roundJumped = false
    this.roundStart = now
    this.roundDone = 0
    this.roundBacklogged = 0
    this.roundLimit = this.limit
  }
}
