import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Paces records to at most `perSecond`, evenly spaced (no bursts beyond one record after a
 * stall). `Infinity` or 0 means no limit.
 *
 * @example const limit = new RateLimit(50); for (const r of records) { await limit.take(); send(r) }
 */
export class RateLimit {
  private readonly interval: number
  private next = 0

  constructor(perSecond: number) {
    this.interval = perSecond > 0 && Number.isFinite(perSecond) ? 1000 / perSecond : 0
  }

  /** Resolves when the next record may go (at once when there is no limit). */
  async take(signal?: AbortSignal): Promise<void> {
    if (this.interval === 0) return
    const now = performance.now()
    // After a stall, start again from now instead of sending the backlog in one burst.
    this.next = Math.max(this.next, now - this.interval)
    const wait = this.next - now
    this.next += this.interval
    // Below a few ms a timer costs more than it saves; the debt carries to the next wait.
    if (wait >= 4) await sleep(wait, undefined, { signal }).catch(() => undefined)
  }
}
