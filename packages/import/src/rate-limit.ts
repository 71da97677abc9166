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
    if (wait >= 4) await sleep(wait, signal)
  }
}

/**
 * Waits `ms`, or less when `signal` aborts. On the global setTimeout (not node:timers/promises)
 * so tests can drive it with fake timers.
 */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
