/**
 * Funnel step packs kept in the process (SQLite): each UTC day of a step's hourly rows as one pack
 * per bot (funnel-packs.ts), made from the database the first time a funnel reads that day and
 * kept until a write changes the day, so a funnel's count reads a few hundred packs from memory and
 * makes again only the days written since (today's, mostly) — not a row per user and step (the
 * all-time funnel's statement over 1 M records: 50–95 ms, most of it 44 000 index probes).
 *
 * - **Exact**: every write of a SQLite store goes through its process, in a synchronous
 *   transaction: the store calls {@link FunnelPackCache.touch} with the messages it stored, and
 *   {@link FunnelPackCache.takenBack} with those it took back (an erasure, the retention sweep, a
 *   deletion: when any was a step, every pack and number goes). A day's packs are read only while
 *   no write touched the day since they were made. A write by another connection (another process
 *   on the same file) changes SQLite's `data_version`: every pack is made again.
 * - **Numbers**: users are numbered in the process (bot and user id → number) as their rows are
 *   packed; a count's arrays hold 8 bytes per number.
 * - **Ahead**: {@link FunnelPackCache.warm} packs every day of every step in small slices off the
 *   event loop's busy moments (the store starts it a second after it opens), so the first funnel
 *   after a start reads packs too.
 */
import type { ReadFilter } from '../store/store'
import { USER_STEPS } from './analytics-tables'
import type { FunnelLine, FunnelStep } from './analytics-types'
import { stepOf } from './analytics-writes'
import type { Dialect, Query, Row } from './dialect'
import { encodeByBot, funnelFromPacks, type StepRows } from './funnel-packs'
import { MAX_AHEAD_STEPS } from './funnel-packs-pg'
import { DAY_MS, floorDay, hourRange } from './range'
import type { RollupMessage } from './rollup-delta'

/** A step's day in the cache. */
const dayKey = (step: FunnelStep, day: number): string => `${step.kind}\u0000${step.name}\u0000${day}`

/**
 * Days a count makes itself at most (a write to a past day, today's rows): with more to make (a
 * store just opened, packs let go after an erasure), the statement counts while the warm-up runs.
 */
export const MAX_DAYS_TO_MAKE = 8
/** The warm-up's work per turn of the event loop. */
const WARM_SLICE_MS = 5

/** A day of a step: its packs by bot, and the writes to the day counted when they were made. */
interface DayPacks {
  gen: number
  bots: Map<string, Uint8Array>
}

/** Funnel step packs of one SQLite database, kept in its store's process. */
export class FunnelPackCache {
  /** Bot and user id → number. */
  private numbers = new Map<string, number>()
  /** UTC day → writes that touched a step row of it (since the cache was made or cleared). */
  private gens = new Map<number, number>()
  /** `kind \0 name \0 day` → the day's packs. */
  private days = new Map<string, DayPacks>()
  private dataVersion: unknown
  private warming: NodeJS.Immediate | NodeJS.Timeout | undefined
  private warmed: (() => void) | undefined
  private warmUp: Promise<void> | undefined
  /** The warm-up's start while it waits for it. */
  private pending: (() => void) | undefined

  /** @param run runs one statement synchronously (the store's connection) */
  constructor(
    private readonly d: Dialect,
    private readonly run: (q: Query) => Row[],
  ) {}

  /** In a writer's transaction that stored `messages`: the days of their step rows are made again. */
  touch(messages: readonly RollupMessage[]): void {
    for (const m of messages)
      if (m.userId !== '' && stepOf(m) !== null) {
        const day = floorDay(m.ts)
        this.gens.set(day, (this.gens.get(day) ?? 0) + 1)
      }
  }

  /**
   * In a writer's transaction that took `messages` back (an erasure, the retention sweep, a
   * deletion): when any was a step, every pack and number is let go (an erased user's id is not kept
   * in memory; their number is in packs of days the take-back did not touch). A sweep that took
   * nothing back keeps them.
   */
  takenBack(messages: readonly RollupMessage[]): void {
    if (messages.some((m) => m.userId !== '' && stepOf(m) !== null)) this.clear()
  }

  /** Forgets every pack and number. */
  clear(): void {
    this.numbers = new Map()
    this.gens = new Map()
    this.days = new Map()
  }

  /** Stops a warm-up in progress (the store closes): its promise resolves. */
  stop(): void {
    clearTimeout(this.warming as NodeJS.Timeout | undefined)
    clearImmediate(this.warming as NodeJS.Immediate | undefined)
    this.warming = undefined
    this.warmUp = undefined
    this.pending = undefined
    this.warmed?.()
    this.warmed = undefined
  }

  /**
   * Packs every day of every step with rows (up to {@link MAX_AHEAD_STEPS}, in kind and name
   * order) after `delayMs`, a few milliseconds of it per turn of the event loop (requests are
   * answered in between). Resolves when done (or stopped); a warm-up already running is joined.
   */
  warm(delayMs = 0): Promise<void> {
    if (this.warmUp !== undefined) {
      // Asked for now while it waits for its start: started now (its timer is unref'd; a caller
      // awaiting it would otherwise wait on nothing that keeps the process running).
      if (delayMs === 0 && this.pending !== undefined) {
        clearTimeout(this.warming as NodeJS.Timeout | undefined)
        this.pending()
      }
      return this.warmUp
    }
    this.warmUp = new Promise((resolve) => {
      this.warmed = resolve
      const days: Array<{ step: FunnelStep; day: number }> = []
      let i = 0
      const next = (): void => {
        try {
          this.checkVersion()
          for (const started = performance.now(); performance.now() - started < WARM_SLICE_MS; ) {
            const item = days[i++]
            if (item === undefined) {
              this.stop()
              return
            }
            this.dayPacks(item.step, item.day)
          }
        } catch (e) {
          // Off any request: a failure here must not end the process; a funnel makes its days itself.
          console.error('[convotrack-collector] packing funnel steps failed', e)
          this.stop()
          return
        }
        // Not unref'd: an unref'd immediate waits for the next other event of the loop.
        this.warming = setImmediate(next)
      }
      this.pending = () => {
        this.pending = undefined
        try {
          for (const step of this.steps()) {
            const [first, last] = this.bounds(step)
            if (first === null || last === null) continue
            for (let day = first; day <= last; day += DAY_MS) days.push({ step, day })
          }
        } catch (e) {
          console.error('[convotrack-collector] packing funnel steps failed', e)
          this.stop()
          return
        }
        next()
      }
      this.warming = setTimeout(this.pending, delayMs)
      this.warming.unref()
    })
    return this.warmUp
  }

  /**
   * The funnel (funnel-report.ts's meaning) from the steps' packs, each day made when not current;
   * null when more than {@link MAX_DAYS_TO_MAKE} days would be made first (a store just opened, or
   * one whose packs were all let go): the caller counts by the statement, and the warm-up is started.
   */
  count(filter: ReadFilter & { steps: readonly FunnelStep[] }): FunnelLine[] | null {
    this.checkVersion()
    const r = hourRange(filter)
    const steps = filter.steps
    const inScope = (bot: string): boolean =>
      (filter.bot === undefined || bot === filter.bot) && (filter.bots === undefined || filter.bots.includes(bot))
    const bounds = steps.map((s) => this.bounds(s))
    const [firstOfAll] = bounds[0] ?? [null]
    // Each step's days in the range: none before its own first row, nor before the first step's.
    const spans = steps.map((_, k): [number, number] => {
      const [first, last] = bounds[k] as [number | null, number | null]
      if (first === null || last === null || firstOfAll === null || firstOfAll === undefined) return [0, -1]
      return [Math.max(floorDay(r.from), first, firstOfAll), r.to === null ? last : Math.min(last, floorDay(r.to - 1))]
    })
    let toMake = 0
    for (const [k, [start, end]] of spans.entries())
      for (let day = start; day <= end; day += DAY_MS) if (!this.current(steps[k] as FunnelStep, day)) toMake++
    if (toMake > MAX_DAYS_TO_MAKE) {
      void this.warm()
      return null
    }
    const sources: StepRows[] = []
    for (const [k, [start, end]] of spans.entries()) {
      const packs: Array<{ day: number; data: Uint8Array }> = []
      for (let day = start; day <= end; day += DAY_MS)
        for (const [bot, data] of this.dayPacks(steps[k] as FunnelStep, day).bots)
          if (inScope(bot)) packs.push({ day, data })
      sources.push({ packs, rows: [] })
    }
    const counts = funnelFromPacks(sources, this.numbers.size, r.from, r.to)
    return steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: counts[i] ?? 0 }))
  }

  /** Another connection committed since the last look: nothing kept is known to be current. */
  private checkVersion(): void {
    const version = this.run({ sql: 'PRAGMA data_version', params: [] })[0]?.data_version
    if (this.dataVersion !== undefined && version !== this.dataVersion) this.clear()
    this.dataVersion = version
  }

  /** The step's first and last UTC day with a row (nulls: none). */
  private bounds(step: FunnelStep): [number | null, number | null] {
    const hours = this.d.table(USER_STEPS.name)
    const [row] = this.run({
      sql: `SELECT (SELECT min(hour) FROM ${hours} WHERE kind = ? AND name = ?) AS first,
        (SELECT max(hour) FROM ${hours} WHERE kind = ? AND name = ?) AS last`,
      params: [step.kind, step.name, step.kind, step.name],
    })
    const day = (v: unknown): number | null => (v === null || v === undefined ? null : floorDay(Number(v)))
    return [day(row?.first), day(row?.last)]
  }

  /** Every step with rows, up to MAX_AHEAD_STEPS, in kind and name order (an index probe each). */
  private steps(): FunnelStep[] {
    const hours = this.d.table(USER_STEPS.name)
    const steps: FunnelStep[] = []
    for (const kind of ['event', 'intent'] as const)
      for (let after = ''; steps.length < MAX_AHEAD_STEPS; ) {
        const [row] = this.run({
          sql: `SELECT name FROM ${hours} WHERE kind = ? AND name > ? ORDER BY name LIMIT 1`,
          params: [kind, after],
        })
        if (row === undefined) break
        after = String(row.name)
        steps.push({ kind, name: after })
      }
    return steps
  }

  /** Whether the step's packs of `day` are kept and current. */
  private current(step: FunnelStep, day: number): boolean {
    return this.days.get(dayKey(step, day))?.gen === (this.gens.get(day) ?? 0)
  }

  /** The step's packs of `day`, made from its rows when no pack is current. */
  private dayPacks(step: FunnelStep, day: number): DayPacks {
    const key = dayKey(step, day)
    const gen = this.gens.get(day) ?? 0
    const kept = this.days.get(key)
    if (kept !== undefined && kept.gen === gen) return kept
    const rows = this.run({
      sql: `SELECT bot, user_id, first_ts, last_ts FROM ${this.d.table(USER_STEPS.name)}
        WHERE kind = ? AND name = ? AND hour >= ? AND hour < ?`,
      params: [step.kind, step.name, day, day + DAY_MS],
    })
    const numbered = rows.map((row) => {
      const bot = String(row.bot)
      const who = `${bot}\u0000${row.user_id}`
      let user = this.numbers.get(who)
      if (user === undefined) {
        user = this.numbers.size
        this.numbers.set(who, user)
      }
      return { bot, user, first: Number(row.first_ts), last: Number(row.last_ts) }
    })
    const made: DayPacks = { gen, bots: encodeByBot(day, numbered) }
    this.days.set(key, made)
    return made
  }
}
