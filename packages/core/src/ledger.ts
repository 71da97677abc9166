import type { DropReason } from './errors'

/** Every count of what happened to records, as `stats()` shows them. */
export interface LedgerCounts {
  sent: number
  /** Retry attempts made (one record may count several). */
  retried: number
  /** Failed for good: retries exhausted, not retryable, refused by the service, abandoned at `close()`. */
  failed: number
  /** Of `failed`: records of a batch the service refused (`RefusedRecordError`). */
  refused: number
  dropped: number
  droppedByReason: Record<DropReason, number>
  /** Not sent on purpose: the ignore list, or nothing to send (echoes, receipts, the bot's own DMs). */
  ignored: number
  /** Rejected at the call: a record that breaks a rule or cannot be read. */
  invalid: number
  /** Of `failed` and `dropped`: pending or held at `close()` and given up (counted once, in either). */
  abandoned: number
}

/**
 * The one owner of every count of what happened to records. The transport and the tracker
 * write here, and only here; `stats()`, `flush()` / `close()` results, the exit report and the
 * drop summaries all read it, so their numbers cannot disagree. It also knows the losses (failed,
 * dropped except `redacted`, undelivered at exit) that make `flush()`'s `delivered` false.
 */
export class Ledger {
  readonly counts: LedgerCounts = {
    sent: 0,
    retried: 0,
    failed: 0,
    refused: 0,
    dropped: 0,
    droppedByReason: { queue_full: 0, redacted: 0, closed: 0 },
    ignored: 0,
    invalid: 0,
    abandoned: 0,
  }
  /** Records lost since the start. */
  private lost = 0
  /** `lost` when the previous flush began. */
  private lostAtFlush = 0

  sent(n = 1): void {
    this.counts.sent += n
  }

  retried(n: number): void {
    this.counts.retried += n
  }

  /** Failed for good; `refused`: the service refused them in a batch. */
  failed(n = 1, refused = false): void {
    this.counts.failed += n
    if (refused) this.counts.refused += n
    this.lost += n
  }

  dropped(reason: DropReason, n = 1): void {
    this.counts.dropped += n
    this.counts.droppedByReason[reason] += n
    if (reason !== 'redacted') this.lost += n // a redacted record was dropped on purpose
  }

  ignored(n = 1): void {
    this.counts.ignored += n
  }

  invalid(): void {
    this.counts.invalid++
  }

  /** Given up at `close()`: transport records count as failed, records adapters held as dropped (`closed`). */
  abandoned(n: number, as: 'failed' | 'closed'): void {
    if (n === 0) return
    this.counts.abandoned += n
    if (as === 'failed') this.failed(n)
    else this.dropped('closed', n)
  }

  /** Undelivered as the process ends (not failed, not dropped: the process went away). */
  lostAtExit(n: number): void {
    this.lost += n
  }

  /** A point to compare later losses with (see {@link Ledger.lostSince}). */
  mark(): number {
    return this.lost
  }

  lostSince(mark: number): number {
    return this.lost - mark
  }

  /** A flush begins: the losses since the previous one (a new period starts). */
  beginFlush(): number {
    const n = this.lost - this.lostAtFlush
    this.lostAtFlush = this.lost
    return n
  }

  /** A copy of the counts. */
  snapshot(): LedgerCounts {
    return { ...this.counts, droppedByReason: { ...this.counts.droppedByReason } }
  }
}
