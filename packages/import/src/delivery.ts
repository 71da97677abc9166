/**
 * Hands records to the tracker and learns, record by record, which ones the service
 * acknowledged: the tracker's `sent` and `error` events carry the exact wire body, so each
 * body is matched back to the source position that produced it (identical bodies in
 * first-in first-out order, which is all a checkpoint needs: they are interchangeable).
 */
import { type ApiVersion, serializeUniversal, type Tracker, toWireJson, type UniversalMessage } from '@convotrack/core'
import type { Direction } from './mapping'

/** The universal-shaped platforms an import may post as (spec 4.4: `universal`, some samples `sms`). */
export type ImportPlatform = 'universal' | 'sms' | 'generic'

/** What became of a handed-over record. */
export interface DeliveryHooks {
  acknowledged(position: number): void
  failed(position: number, code: string, message: string): void
  /** Not sent on purpose: the tracker's ignore list or `redact` dropped it. */
  skipped(position: number): void
  /** Delivered or not, the tracker gave no sign we could match (a `redact` that rewrites bodies, a custom sink). */
  unconfirmed(position: number): void
}

/** @internal Matches tracker events back to source positions; see the file comment. */
export class Delivery {
  private readonly waiting = new Map<string, number[]>()
  private count = 0
  /** The record being handed over right now: an event raised inside that call (a queue_full drop) is its own. */
  private sending: { key: string; position: number } | undefined
  private readonly wakers = new Set<() => void>()
  private readonly onSent = (record: { platform: string; type: string; body: string }): void => {
    if (record.platform === this.platform) this.settle(record.type, record.body, (p) => this.hooks.acknowledged(p))
  }
  private readonly onError = (
    error: { code: string; message: string },
    record?: { platform: string; type: string; body?: string },
  ): void => {
    if (record?.body !== undefined && record.platform === this.platform)
      this.settle(record.type, record.body, (p) => this.hooks.failed(p, error.code, error.message))
  }

  /** A full queue drops a record before serializing it: the drop raised inside a hand-over is that record's. */
  private readonly onDropped = (reason: string): void => {
    const sending = this.sending
    if (reason !== 'queue_full' || !sending) return
    if (this.forget(sending.key, sending.position)) {
      this.hooks.failed(sending.position, 'dropped_queue_full', 'queue full: record dropped')
      for (const wake of this.wakers) wake()
    }
  }

  constructor(
    private readonly tracker: Tracker,
    private readonly platform: ImportPlatform,
    private readonly v: ApiVersion,
    private readonly hooks: DeliveryHooks,
  ) {
    tracker.on('sent', this.onSent)
    tracker.on('error', this.onError)
    tracker.on('dropped', this.onDropped)
  }

  /** Records handed over and not settled yet. */
  get outstanding(): number {
    return this.count
  }

  /** Hands one record to the tracker (synchronous, like every tracking call). */
  send(position: number, direction: Direction, message: UniversalMessage): void {
    // The body the tracker will post: the same pure serializer, outside any turn.
    const body = toWireJson(serializeUniversal(message).body, 'import')
    const key = `${direction}\n${body}`
    const list = this.waiting.get(key)
    if (list) list.push(position)
    else this.waiting.set(key, [position])
    this.count++
    let queued = false
    this.sending = { key, position }
    try {
      // A fresh turn: no per-turn state of the caller (NotHandled, metadata) leaks into imported records.
      queued = this.tracker.withTurn(() =>
        this.tracker[this.platform][direction === 'incoming' ? 'logIncoming' : 'logOutgoing'](message, { v: this.v }),
      )
    } catch (error) {
      if (this.forget(key, position))
        this.hooks.failed(position, (error as { code?: string }).code ?? 'error', (error as Error).message)
      return
    } finally {
      this.sending = undefined
    }
    // Not queued and no event settled it (a queue_full drop would have): ignored or redacted away.
    if (!queued && this.forget(key, position)) this.hooks.skipped(position)
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

  /** Stops listening to the tracker. */
  detach(): void {
    this.tracker.off('sent', this.onSent)
    this.tracker.off('error', this.onError)
    this.tracker.off('dropped', this.onDropped)
    for (const wake of this.wakers) wake()
  }

  /**
   * One wait: until something settles, or 100 ms. The timer is deliberately ref'd: it keeps
   * the process alive while the transport's own (unref'd) retry timers run. When the tracker
   * holds nothing any more but records are still unmatched, they never will be.
   */
  private tick(signal?: AbortSignal, maxMs = 100): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.wakers.delete(done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(
        () => {
          this.sweepUnmatched()
          done()
        },
        Math.max(1, Math.min(100, maxMs)),
      )
      this.wakers.add(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  private sweepUnmatched(): void {
    if (this.count === 0) return
    const s = this.tracker.stats()
    if (s.queued + s.inFlight > 0) return
    const lost = [...this.waiting.values()].flat()
    this.waiting.clear()
    this.count = 0
    for (const p of lost) this.hooks.unconfirmed(p)
  }

  private settle(type: string, body: string, then: (position: number) => void): void {
    const key = `${type}\n${body}`
    let position: number | undefined
    if (this.sending?.key === key && this.forget(key, this.sending.position)) position = this.sending.position
    else {
      const list = this.waiting.get(key)
      position = list?.shift()
      if (position === undefined) return // another caller's record on the same tracker
      if (list && list.length === 0) this.waiting.delete(key)
      this.count--
    }
    then(position)
    for (const wake of this.wakers) wake()
  }

  private forget(key: string, position: number): boolean {
    const list = this.waiting.get(key)
    const i = list ? list.lastIndexOf(position) : -1
    if (!list || i < 0) return false
    list.splice(i, 1)
    if (list.length === 0) this.waiting.delete(key)
    this.count--
    return true
  }
}
