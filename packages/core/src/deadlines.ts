import { EventEmitter } from 'node:events'

/** Abort handle of one request: undici aborts it on `'abort'`. */
export class RequestDeadline extends EventEmitter {
  timedOut = false
  at = 0
}

/**
 * The absolute per-request deadline (connect to last byte). One sweeper timer checks every
 * in-flight request, and the abort handle is an EventEmitter (which undici accepts as
 * `signal`): on Node 20 a per-request `AbortSignal` costs 35–40 % of delivery throughput and
 * `AbortSignal.timeout` more (measured in bench/).
 */
export class Deadlines {
  private readonly live = new Set<RequestDeadline>()
  private readonly spare: RequestDeadline[] = []
  private sweeper: NodeJS.Timeout | undefined

  constructor(private readonly timeoutMs: number) {}

  start(): RequestDeadline {
    // Handles are reused: undici removes its listener when the request settles.
    const deadline = this.spare.pop() ?? new RequestDeadline()
    deadline.at = Date.now() + this.timeoutMs
    deadline.timedOut = false
    this.live.add(deadline)
    if (!this.sweeper) {
      const every = Math.max(10, Math.min(250, Math.floor(this.timeoutMs / 4)))
      this.sweeper = setInterval(() => this.sweep(), every)
      this.sweeper.unref()
    }
    return deadline
  }

  /** The request settled: its handle is reused when undici let go of it. */
  settle(deadline: RequestDeadline): void {
    this.live.delete(deadline)
    if (!deadline.timedOut && deadline.listenerCount('abort') === 0) this.spare.push(deadline)
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = undefined
  }

  private sweep(): void {
    const now = Date.now()
    for (const d of this.live) {
      if (d.at > now) continue
      this.live.delete(d)
      d.timedOut = true
      d.emit('abort')
    }
    if (this.live.size === 0) this.stop()
  }
}
