/**
 * Prepares retention zones kept on demand in the background: chunk after chunk of users, each its
 * own short transaction (retention-zone-demand.ts `prepareChunk`), yielding to the event loop in
 * between so ingest and reads go on. The chunk size adapts to take about {@link CHUNK_TARGET_MS}.
 * A zone left half prepared (a stop, a failed chunk) is resumed at the next start or request;
 * several collectors on one PostgreSQL database take turns on the same zone's chunks.
 */

import type { RetentionZoneState } from '../reports/analytics-types'
import type { Dialect } from '../reports/dialect'
import {
  DEFAULT_ZONES_ON_DEMAND,
  pendingZones,
  prepareChunk,
  requestZone,
  zoneState,
} from '../reports/retention-zone-demand'
import type { Steps } from '../reports/rollup-writes'
import type { StoreOptions } from './store'

/** About how long one chunk's transaction should hold its users' locks. */
export const CHUNK_TARGET_MS = 100
const FIRST_CHUNK = 500
const MIN_CHUNK = 50
/** PostgreSQL's shared lock table is bounded (a chunk takes a lock per user): fewer users a chunk there. */
const MAX_CHUNK = { sqlite: 5_000, postgres: 1_000 }

/** What the preparer needs of a store. */
export interface PreparerDeps {
  d: Dialect
  /** Runs the steps in one write transaction. */
  tx<T>(steps: () => Steps<T>): Promise<T>
  /** Runs read-only steps (no transaction). */
  read<T>(steps: Steps<T>): Promise<T>
  /** The option's zones (always kept and ready). */
  option: readonly string[]
  /** `retentionZonesOnDemand`. */
  limit: number
  /** Users per chunk (fixed); default adaptive. */
  chunkUsers?: number
  /** Awaited after each chunk commits (a test steps through the preparation). */
  afterChunk?: (state: RetentionZoneState) => void | Promise<void>
  /** A chunk failed: the zone's preparation stops until the next request or start. */
  onError(zone: string, error: unknown): void
}

export class RetentionZonePreparer {
  private readonly running = new Map<string, Promise<void>>()
  private readonly waiting = new Map<string, Array<{ resolve: () => void; reject: (e: unknown) => void }>>()
  private closed = false

  constructor(private readonly deps: PreparerDeps) {}

  /** The zone's state; one that is not kept becomes kept on demand (under the limit) and is prepared. */
  async request(zone: string): Promise<RetentionZoneState> {
    if (this.deps.option.includes(zone)) return { zone, kept: 'option', ready: true, progress: 1 }
    // Every retention request asks: a plain read, a write transaction only to add the zone.
    const state =
      (await this.deps.read(zoneState(this.deps.d, zone))) ??
      (await this.deps.tx(() => requestZone(this.deps.d, zone, this.deps.limit, Date.now())))
    if (state.kept !== null && !state.ready) this.start(zone)
    return state
  }

  /** Resumes the zones a stop left half prepared. */
  async resume(): Promise<void> {
    for (const zone of await this.deps.read(pendingZones(this.deps.d))) this.start(zone)
  }

  /** Resolves when `zone` is prepared (at once when it is); rejects when its preparation fails. */
  async ready(zone: string): Promise<void> {
    const state = await this.request(zone)
    if (state.ready) return
    if (state.kept === null) throw new Error(`retention zone ${zone} is not kept (retentionZonesOnDemand reached)`)
    await new Promise<void>((resolve, reject) => {
      const list = this.waiting.get(zone) ?? []
      list.push({ resolve, reject })
      this.waiting.set(zone, list)
      // It may have finished between the request and now.
      if (!this.running.has(zone)) this.start(zone)
    })
  }

  private start(zone: string): void {
    if (this.closed || this.running.has(zone)) return
    const run = this.prepare(zone).then(
      () => this.settle(zone),
      (e: unknown) => {
        if (!this.closed) this.deps.onError(zone, e)
        this.settle(zone, e)
      },
    )
    this.running.set(zone, run)
  }

  private settle(zone: string, error?: unknown): void {
    this.running.delete(zone)
    const list = this.waiting.get(zone) ?? []
    this.waiting.delete(zone)
    for (const w of list)
      if (error === undefined) w.resolve()
      else w.reject(error)
  }

  private async prepare(zone: string): Promise<void> {
    let size = this.deps.chunkUsers ?? FIRST_CHUNK
    for (;;) {
      // Between chunks: ingest's group commits and reads run.
      await new Promise((r) => setImmediate(r))
      if (this.closed) throw new Error('the store is closed')
      const began = performance.now()
      const state = await this.deps.tx(() => prepareChunk(this.deps.d, zone, size))
      const took = performance.now() - began
      if (state === null || state.ready) {
        if (state) await this.deps.afterChunk?.(state)
        return
      }
      await this.deps.afterChunk?.(state)
      if (this.deps.chunkUsers === undefined)
        size = Math.round(
          Math.min(MAX_CHUNK[this.deps.d.name], Math.max(MIN_CHUNK, (size * CHUNK_TARGET_MS) / Math.max(1, took))),
        )
    }
  }

  /** Stops after the chunk in flight. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.all([...this.running.values()])
  }
}

/** The store's preparer of the options' zones kept on demand (`tx`: one write transaction). */
export function zonePreparer(
  d: Dialect,
  options: StoreOptions,
  option: readonly string[],
  tx: PreparerDeps['tx'],
  read: PreparerDeps['read'],
): RetentionZonePreparer {
  const limit = options.retentionZonesOnDemand ?? DEFAULT_ZONES_ON_DEMAND
  if (!Number.isInteger(limit) || limit < 0)
    throw new TypeError(`retentionZonesOnDemand must be a whole number ≥ 0 (got ${String(limit)})`)
  const chunk = options.retentionChunkUsers
  if (chunk !== undefined && (!Number.isInteger(chunk) || chunk < 1))
    throw new TypeError(`retentionChunkUsers must be a whole number ≥ 1 (got ${String(chunk)})`)
  return new RetentionZonePreparer({
    d,
    tx,
    read,
    option,
    limit,
    ...(chunk === undefined ? {} : { chunkUsers: chunk }),
    ...(options.onRetentionChunk ? { afterChunk: options.onRetentionChunk } : {}),
    onError: (zone, e) => console.error(`[convotrack-collector] preparing retention zone ${zone} failed`, e),
  })
}
