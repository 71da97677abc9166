import type { TurnState } from './turn-scope'
import { waitOrTimeout } from './waiters'

/** Hands one held record to the tracker; gets the turn's state as it is when the record is released. */
export type HeldLog = (turn: TurnState | undefined) => void

/**
 * The records of one conversation turn that an adapter holds back until the turn has decided
 * about them: an incoming message waits for the bot's `setNotHandled()` / intent, replies wait
 * for the message they answer. The tracker sees every held record, so `flush()` and `close()`
 * wait for them and count what is still held at their deadline. Get one with
 * {@link Tracker.holdTurn}.
 *
 * @example const held = tracker.holdTurn(); held.hold(() => tracker.kik.logIncoming(record)); next(); held.end()
 */
export interface HeldTurn {
  /**
   * Holds a record: `log` runs when it is released, in the turn's scope (so the turn's intent
   * and NotHandled apply), after every record held before it with the same release. `key`
   * names the records {@link HeldTurn.release} lets go together (a user's incoming message).
   * After {@link HeldTurn.end}, `log` runs at once.
   */
  hold(log: HeldLog, key?: string): void
  /** Releases the records held under `key` (a reply to that user is about to go out); no key releases all. */
  release(key?: string): void
  /** The turn is over: releases everything still held; later records go straight through. Never throws. */
  end(): void
  /** Records held now. */
  readonly size: number
  /** True after {@link HeldTurn.end} (or when the tracker closed before the turn ended). */
  readonly ended: boolean
}

/** What the held records need from the tracker. */
export interface HeldRecordsHost {
  /** Runs `fn` in the turn `state` (or as is without one). */
  inTurn(state: TurnState | undefined, fn: () => void): void
  /** A log that threw (an invalid record in an adapter): reported, never thrown at the bot. */
  report(error: unknown): void
  /** Records given up at close: counted as dropped (`closed`). */
  abandon(count: number): void
  /** Something is held now (for the exit flush). */
  onHeld(): void
  /** Nothing is held any more. */
  onSettled(): void
}

interface Entry {
  log: HeldLog
  key: string | undefined
}

class Buffer implements HeldTurn {
  private entries: Entry[] = []
  private isEnded = false

  constructor(
    private readonly owner: HeldRecords,
    private readonly state: TurnState | undefined,
  ) {}

  get size(): number {
    return this.entries.length
  }

  get ended(): boolean {
    return this.isEnded
  }

  hold(log: HeldLog, key?: string): void {
    if (this.isEnded) {
      this.run([{ log, key }])
      return
    }
    this.entries.push({ log, key })
    this.owner.changed(1, this)
  }

  release(key?: string): void {
    if (key === undefined) {
      this.releaseAll()
      return
    }
    const out = this.entries.filter((e) => e.key === key)
    if (out.length === 0) return
    this.entries = this.entries.filter((e) => e.key !== key)
    this.owner.changed(-out.length, this)
    this.run(out)
  }

  end(): void {
    if (this.isEnded) return
    this.isEnded = true
    this.releaseAll()
  }

  /** The tracker closed with records still held here: they are counted, not sent. */
  abandon(): number {
    const n = this.entries.length
    this.entries = []
    this.isEnded = true
    if (n > 0) this.owner.changed(-n, this)
    return n
  }

  private releaseAll(): void {
    const out = this.entries
    if (out.length === 0) return
    this.entries = []
    this.owner.changed(-out.length, this)
    this.run(out)
  }

  private run(entries: Entry[]): void {
    for (const e of entries) this.owner.runLog(this.state, e.log)
  }
}

/**
 * Every record an adapter holds back, in one place the tracker can see: per-turn buffers
 * ({@link HeldTurn}) and work that will hand records over when it settles (a Slack team name
 * lookup, a `respond()` whose answer is not in yet). `flush()` and `close()` wait here first.
 */
export class HeldRecords {
  private heldCount = 0
  private readonly buffers = new Set<Buffer>()
  private readonly works = new Set<Promise<unknown>>()
  private readonly waiters = new Set<() => void>()

  constructor(private readonly host: HeldRecordsHost) {}

  /** Records held in turn buffers plus unsettled pieces of work. */
  get size(): number {
    return this.heldCount + this.works.size
  }

  /** Records held in turn buffers. */
  get records(): number {
    return this.heldCount
  }

  /** Unsettled pieces of work that will hand records over. */
  get pendingWork(): number {
    return this.works.size
  }

  private readonly byTurn = new WeakMap<TurnState, Buffer>()

  /** A new buffer for the turn `state` (its latest: {@link HeldRecords.of} finds it). */
  open(state: TurnState | undefined): HeldTurn {
    const buffer = new Buffer(this, state)
    if (state) this.byTurn.set(state, buffer)
    return buffer
  }

  /** The turn's latest buffer, while it has not ended. */
  of(state: TurnState | undefined): HeldTurn | undefined {
    const buffer = state && this.byTurn.get(state)
    return buffer && !buffer.ended ? buffer : undefined
  }

  /** Remembers `work` until it settles; `flush()` waits for it. Its rejection is the adapter's, not reported here. */
  add(work: PromiseLike<unknown>): void {
    const entry: Promise<void> = Promise.resolve(work).then(
      () => this.settle(entry),
      () => this.settle(entry),
    )
    this.works.add(entry)
    this.host.onHeld()
  }

  /** Resolves true once nothing is held, false at the timeout. Never rejects. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.size === 0) return Promise.resolve(true)
    // Held work keeps the process up by itself (its own sockets and timers); a deadline must not.
    return waitOrTimeout(this.waiters, timeoutMs, () => this.size === 0)
  }

  /** At close: drops what the turn buffers still hold (counted as `closed`) and returns how many. */
  abandonAll(): number {
    let n = 0
    for (const b of [...this.buffers]) n += b.abandon()
    if (n > 0) this.host.abandon(n)
    return n
  }

  /** @internal a buffer's count changed. */
  changed(delta: number, buffer: Buffer): void {
    this.heldCount += delta
    if (buffer.size > 0) {
      if (!this.buffers.has(buffer)) {
        this.buffers.add(buffer)
        this.host.onHeld()
      }
    } else this.buffers.delete(buffer)
    this.check()
  }

  /** @internal runs one held log in its turn; a throw is reported, never the bot's. */
  runLog(state: TurnState | undefined, log: HeldLog): void {
    try {
      this.host.inTurn(state, () => log(state))
    } catch (error) {
      this.host.report(error)
    }
  }

  private settle(entry: Promise<void>): void {
    this.works.delete(entry)
    this.check()
  }

  private check(): void {
    if (this.size !== 0) return
    for (const w of [...this.waiters]) w()
    this.host.onSettled()
  }
}
