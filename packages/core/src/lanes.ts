import { Fifo } from './fifo'
import type { Pending } from './transport-types'

/** One conversation's (else user's) records, sent in order. */
interface Lane {
  readonly key: string
  readonly records: Fifo<Pending>
  /** Records of this lane are in flight or waiting out a retry: the next ones wait. */
  busy: boolean
}

/**
 * Records waiting, one FIFO lane per conversation (else per user): its records go out in order,
 * one request at a time (the service orders a transcript by arrival), while different
 * conversations go in parallel. Lanes ready to send wait in a FIFO ready queue (O(1) per
 * record); lanes whose records came back from a failed attempt are served first.
 */
export class Lanes {
  private readonly byKey = new Map<string, Lane>()
  /** Lanes with a record to send and none in flight or waiting out a retry, in turn order. */
  private readonly ready = new Fifo<Lane>()
  /** Lanes whose records came back (a batch split into single records): served before the others. */
  private readonly returning = new Fifo<Lane>()
  /** Records in lanes (not in flight, not waiting out a retry). */
  waiting = 0

  /** Conversations (lanes) with a record waiting, in flight or waiting out a retry. */
  get size(): number {
    return this.byKey.size
  }

  get hasReady(): boolean {
    return this.ready.length > 0 || this.returning.length > 0
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

  /** The next record to send alone (its lane becomes busy), or undefined when no lane is ready. */
  next(): Pending | undefined {
    const lane = this.returning.shift() ?? this.ready.shift()
    if (!lane) return undefined
    lane.busy = true
    this.waiting--
    return lane.records.shift() as Pending
  }

  /**
   * Records for one batch: whole runs of ready lanes (a lane's records stay in order inside the
   * batch), until `maxRecords` or `maxBytes` (by `size`). Every lane taken from becomes busy.
   * The first record is taken even when it alone exceeds `maxBytes` (the caller sends it alone).
   */
  take(maxRecords: number, maxBytes: number, size: (rec: Pending) => number): Pending[] {
    const out: Pending[] = []
    let bytes = 0
    while (out.length < maxRecords) {
      const lane = this.returning.peek() ?? this.ready.peek()
      if (!lane) break
      const first = lane.records.peek() as Pending
      if (out.length > 0 && bytes + size(first) > maxBytes) break
      ;(this.returning.length > 0 ? this.returning : this.ready).shift()
      lane.busy = true
      while (out.length < maxRecords) {
        const rec = lane.records.peek()
        if (!rec) break
        const n = size(rec)
        if (out.length > 0 && bytes + n > maxBytes) break
        lane.records.shift()
        this.waiting--
        out.push(rec)
        bytes += n
        if (bytes > maxBytes) break
      }
      if (bytes >= maxBytes) break
    }
    return out
  }

  /** A request's records are done (sent or failed for good): their lanes' next records may go. */
  free(records: readonly Pending[]): void {
    let last: string | undefined
    for (const rec of records) {
      if (rec.lane === last) continue
      last = rec.lane
      const lane = this.byKey.get(rec.lane)
      if (!lane?.busy) continue
      lane.busy = false
      if (lane.records.length > 0) this.ready.push(lane)
      else this.byKey.delete(rec.lane)
    }
  }

  /** Records back to the front of their lanes, in order, to be sent again (their lanes first). */
  giveBack(records: readonly Pending[]): void {
    for (let i = records.length - 1; i >= 0; i--) {
      const rec = records[i] as Pending
      const lane = this.byKey.get(rec.lane) as Lane
      lane.records.unshift(rec)
      this.waiting++
    }
    let last: string | undefined
    for (const rec of records) {
      if (rec.lane === last) continue
      last = rec.lane
      const lane = this.byKey.get(rec.lane) as Lane
      if (!lane.busy) continue
      lane.busy = false
      this.returning.push(lane)
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
