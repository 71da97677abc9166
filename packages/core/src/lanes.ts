import { Fifo } from './fifo'
import type { Pending } from './transport-types'

/** One conversation's (else user's) records, sent in order, one at a time. */
interface Lane {
  readonly key: string
  readonly records: Fifo<Pending>
  /** A record of this lane is in flight or waiting out a retry. */
  busy: boolean
}

/**
 * Records waiting, one FIFO lane per conversation (else per user): its records go out in order,
 * one at a time (the service orders a transcript by arrival), while different conversations go
 * in parallel. Lanes ready to send wait in a FIFO ready queue (O(1) per record); lanes whose
 * record came back from a failed attempt are served first.
 */
export class Lanes {
  private readonly byKey = new Map<string, Lane>()
  /** Lanes with a record to send and none in flight or waiting out a retry, in turn order. */
  private readonly ready = new Fifo<Lane>()
  /** Lanes whose record came back from a failed attempt: served before the others. */
  private readonly returning = new Fifo<Lane>()
  /** Records in lanes (not in flight, not waiting out a retry). */
  waiting = 0

  /** Conversations (lanes) with a record waiting, in flight or waiting out a retry. */
  get size(): number {
    return this.byKey.size
  }

  /** Queues a new record at the end of its lane; a lane that was empty and idle becomes ready. */
  push(rec: Pending): void {
    let lane = this.byKey.get(rec.lane)
    if (!lane) {
      lane = { key: rec.lane, records: new Fifo(), busy: false }
      this.byKey.set(rec.lane, lane)
    }
    if (lane.records.length === 0 && !lane.busy) this.ready.push(lane)
    lane.records.push(rec)
    this.waiting++
  }

  /** The next record to send (its lane becomes busy), or undefined when no lane is ready. */
  next(): Pending | undefined {
    const lane = this.returning.shift() ?? this.ready.shift()
    if (!lane) return undefined
    const rec = lane.records.shift() as Pending
    lane.busy = true
    this.waiting--
    return rec
  }

  /**
   * A lane's record is done: sent or failed for good (the lane's next record may go), or back
   * for another attempt (first in its lane, and its lane served first). A busy lane is in
   * neither queue, so it is queued exactly once here.
   */
  release(rec: Pending, back: boolean): void {
    const lane = this.byKey.get(rec.lane)
    if (!lane) return // cleared by a teardown while the record was in flight
    lane.busy = false
    if (back) {
      lane.records.unshift(rec)
      this.waiting++
      this.returning.push(lane)
    } else if (lane.records.length > 0) {
      this.ready.push(lane)
    } else {
      this.byKey.delete(rec.lane)
    }
  }

  /** Every waiting record; the lanes are emptied (teardown). */
  clear(): Pending[] {
    const left: Pending[] = []
    for (const lane of this.byKey.values()) left.push(...lane.records.takeAll())
    this.byKey.clear()
    this.ready.takeAll()
    this.returning.takeAll()
    this.waiting = 0
    return left
  }
}
