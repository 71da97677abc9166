/**
 * Hands records to the tracker and learns, record by record, what became of each: every call
 * asks for its records' fate (`onRecord`), so an outcome is tied to the source position that
 * produced it — no matching of bodies, and a `redact` that rewrites bodies changes nothing.
 */
import type { ApiVersion, RecordHandle, RecordOutcome, Tracker, UniversalMessage } from '@convotrack/core'
import type { Direction } from './mapping'

/** The universal-shaped platforms an import may post as (spec 4.4: `universal`, some samples `sms`). */
export type ImportPlatform = 'universal' | 'sms' | 'generic'

/** What became of a handed-over record. */
export interface DeliveryHooks {
  acknowledged(position: number): void
  failed(position: number, code: string, message: string): void
  /** Not sent on purpose: the tracker's ignore list or `redact` dropped it. */
  skipped(position: number): void
  /** Delivered or not, the tracker gave no sign (kept for summaries; fates make it rare). */
  unconfirmed(position: number): void
}

/** @internal Ties each record's fate to its source position; see the file comment. */
export class Delivery {
  private count = 0
  private readonly wakers = new Set<() => void>()

  constructor(
    private readonly tracker: Tracker,
    private readonly platform: ImportPlatform,
    private readonly v: ApiVersion,
    private readonly hooks: DeliveryHooks,
  ) {}

  /** Records handed over and not settled yet. */
  get outstanding(): number {
    return this.count
  }

  /** Hands one record to the tracker (synchronous, like every tracking call). */
  send(position: number, direction: Direction, message: UniversalMessage): void {
    let handles = 0
    const onRecord = (record: RecordHandle): void => {
      handles++
      this.count++
      void record.outcome.then((outcome) => this.settle(position, outcome))
    }
    try {
      // A fresh turn: no per-turn state of the caller (NotHandled, metadata) leaks into imported records.
      this.tracker.withTurn(() =>
        this.tracker[this.platform][direction === 'incoming' ? 'logIncoming' : 'logOutgoing'](message, {
          v: this.v,
          onRecord,
        }),
      )
    } catch (error) {
      // A tracker in strict mode throws an invalid record (its handle already settled it as dropped).
      if (handles === 0)
        this.hooks.failed(position, (error as { code?: string }).code ?? 'error', (error as Error).message)
    }
  }

  private settle(position: number, outcome: RecordOutcome): void {
    this.count--
    if (outcome.status === 'sent') this.hooks.acknowledged(position)
    else if (outcome.status === 'failed') this.hooks.failed(position, outcome.error.code, outcome.error.message)
    else if (outcome.reason === 'ignored' || outcome.reason === 'redacted') this.hooks.skipped(position)
    else
      this.hooks.failed(
        position,
        outcome.error?.code ?? `dropped_${outcome.reason}`,
        outcome.error?.message ??
          (outcome.reason === 'queue_full' ? 'queue full: record dropped' : `record dropped (${outcome.reason})`),
      )
    for (const wake of this.wakers) wake()
  }

  /** Resolves when fewer than `limit` records are outstanding (or `signal` aborts). */
  async below(limit: number, signal?: AbortSignal): Promise<void> {
    while (this.count >= limit && !signal?.aborted) await this.tick(signal)
  }

  /** Waits for every outstanding record, at most `timeoutMs` or until `signal` aborts; true when none is left. */
  async drain(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const until = Date.now() + timeoutMs
    while (this.count > 0 && Date.now() < until && !signal?.aborted) await this.tick(signal, until - Date.now())
    return this.count === 0
  }

  /** Stops waiting (outcomes still settle). */
  detach(): void {
    for (const wake of this.wakers) wake()
  }

  /**
   * One wait: until something settles, or 100 ms. The timer is deliberately ref'd: it keeps
   * the process alive while the transport's own (unref'd) retry timers run.
   */
  private tick(signal?: AbortSignal, maxMs = 100): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.wakers.delete(done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, Math.max(1, Math.min(100, maxMs)))
      this.wakers.add(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }
}
