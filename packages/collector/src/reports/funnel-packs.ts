/**
 * Funnel step packs: one UTC day of one step's hourly rows for one bot, as a compact byte string,
 * and the funnel counted over them in memory. Pure (no database).
 *
 * A pack holds the day's rows of the step in user order (then hour): per row the user's number
 * (its difference from the row before, times 2, plus 1 when the row's last time is not its first:
 * a varint), the row's first time (ms after the day's start, 4 bytes little-endian) and, when
 * flagged, its last time (ms after the first, a varint) — about 6 bytes a row
 * where a database row of the same costs about 60 and ~200 ns to read. The funnel reads a day of
 * a step in one value and counts in typed arrays indexed by user number.
 *
 * The count has the hourly rows' meaning of funnel-report.ts exactly: each user's earliest way
 * through (step 1 at its first time in the range; each next step at the earliest time of it after
 * the step before), with a row's first time when it comes after the step before, else its last
 * time (within one hour a step after the previous one is taken at its latest time in that hour).
 */
import { DAY_MS, HOUR_MS } from './range'

/** One hourly row of a step: the user's number, the row's first and last time (epoch ms). */
export interface PackRow {
  user: number
  first: number
  last: number
}

/** A step's rows from its packs (`day`: the UTC day's start) and rows not packed (yet). */
export interface StepRows {
  packs: ReadonlyArray<{ day: number; data: Uint8Array }>
  rows: readonly PackRow[]
}

/**
 * Encodes a day's rows of a step (each row's first time inside the day starting at `day`), sorted
 * here by user, then first time. Throws on a row outside the day or a negative user number.
 */
export function encodePack(day: number, rows: readonly PackRow[]): Buffer {
  const sorted = [...rows].sort((a, b) => a.user - b.user || a.first - b.first)
  // At most 5 bytes per varint below 2^32 and 8 for the ones above it; 4 for the first time.
  const out = Buffer.allocUnsafe(sorted.length * 22)
  let o = 0
  let prev = 0
  const varint = (value: number): void => {
    let v = value
    while (v >= 0x80) {
      out[o++] = (v % 0x80) | 0x80
      v = Math.floor(v / 0x80)
    }
    out[o++] = v
  }
  for (const r of sorted) {
    const at = r.first - day
    if (!Number.isSafeInteger(r.user) || r.user < 0)
      throw new RangeError(`pack row: user number ${r.user} is not a natural number`)
    if (!Number.isSafeInteger(at) || at < 0 || at >= DAY_MS)
      throw new RangeError(`pack row: first time ${r.first} is not inside the day starting at ${day}`)
    if (!Number.isSafeInteger(r.last) || r.last < r.first)
      throw new RangeError(`pack row: last time ${r.last} is before the first time ${r.first}`)
    // Most rows are one message in their hour (last = first): no last time then.
    varint((r.user - prev) * 2 + (r.last > r.first ? 1 : 0))
    prev = r.user
    out.writeUInt32LE(at, o)
    o += 4
    if (r.last > r.first) varint(r.last - r.first)
  }
  return Buffer.from(out.subarray(0, o))
}

/** A day's rows of a step, each with its bot, as one pack per bot ({@link encodePack}). */
export function encodeByBot(day: number, rows: Iterable<PackRow & { bot: string }>): Map<string, Buffer> {
  const byBot = new Map<string, PackRow[]>()
  for (const r of rows) {
    const list = byBot.get(r.bot)
    const row = { user: r.user, first: r.first, last: r.last }
    if (list) list.push(row)
    else byBot.set(r.bot, [row])
  }
  const packs = new Map<string, Buffer>()
  for (const [bot, list] of byBot) packs.set(bot, encodePack(day, list))
  return packs
}

/**
 * The rows of a pack, read one field at a time (a test's and a check's view, and a second reader
 * the count's own loop below is tested against).
 */
export function decodePack(day: number, data: Uint8Array): PackRow[] {
  const rows: PackRow[] = []
  let at = 0
  const varint = (): number => {
    let value = 0
    for (let scale = 1; ; scale *= 0x80) {
      if (at >= data.length) throw new RangeError('pack: truncated')
      const byte = data[at++] as number
      value += (byte & 0x7f) * scale
      if (byte < 0x80) return value
    }
  }
  let user = 0
  while (at < data.length) {
    const step = varint()
    const flagged = step % 2 === 1
    user += (step - (flagged ? 1 : 0)) / 2
    if (at + 4 > data.length) throw new RangeError('pack: truncated')
    const first = day + Buffer.from(data.buffer, data.byteOffset + at, 4).readUInt32LE(0)
    at += 4
    rows.push({ user, first, last: flagged ? first + varint() : first })
  }
  return rows
}

/**
 * The users of each step of a funnel, counted from the steps' rows: `users` bounds the user
 * numbers (every number is below it); a row counts when its first time is in `[from, to)` (hour
 * bounds: a row's times share its hour; `from` finite). `to` null: no end.
 */
export function funnelFromPacks(steps: readonly StepRows[], users: number, from: number, to: number | null): number[] {
  if (!Number.isFinite(from)) throw new RangeError(`funnel: from ${from} is not a finite time`)
  // Times are kept after `base` (every time counted is from `from` on: 1 or more), so that 0 means
  // "not reached" and an array of them needs no filling: memory the system gives zeroed, touched
  // only where a user has a row (a fill of every user's place costs ~7 ms per step at 1.8 M numbers).
  const base = from - 1
  const end = to === null ? Number.POSITIVE_INFINITY : to - base
  const counts: number[] = []
  let before: Float64Array | null = null
  for (const step of steps) {
    // Each user's time of this step (0: not reached), from the time of the step before.
    const at = new Float64Array(users)
    let n = 0
    for (const p of step.packs) n += takePack(p.day, p.data, at, before, base, end)
    for (const r of step.rows) n += take(r.user, r.first - base, r.last - base, at, before, end)
    counts.push(n)
    if (n === 0) {
      // Nobody goes on: the next steps count none (their rows need not be read).
      while (counts.length < steps.length) counts.push(0)
      break
    }
    before = at
  }
  return counts
}

/**
 * One row (its times after the count's base) into the step's times `at`, from the times of the
 * step before (`prev`; null: step 1). Returns 1 when the row is the user's first of the step, else 0.
 */
function take(
  user: number,
  first: number,
  last: number,
  at: Float64Array,
  prev: Float64Array | null,
  end: number,
): number {
  if (first < 1 || first >= end) return 0
  if (user >= at.length) throw new RangeError(`funnel: user number ${user} is not below ${at.length}`)
  let t = first
  if (prev !== null) {
    const p = prev[user] as number
    // The row is after the step before when it ends after it (the earlier rows end before).
    if (p === 0 || !(last > p)) return 0
    if (!(first > p)) t = last
  }
  const was = at[user] as number
  if (was === 0 || t < was) at[user] = t
  return was === 0 ? 1 : 0
}

/**
 * A pack's rows into the step's times (the decoding of decodePack in one loop, no call per row;
 * times after `base`); returns the users it is the first row of the step of.
 */
function takePack(
  day: number,
  b: Uint8Array,
  at: Float64Array,
  prev: Float64Array | null,
  base: number,
  end: number,
): number {
  const size = b.length
  const users = at.length
  const start = day - base
  // The whole day inside the range: no row's time needs a test.
  const inside = start >= 1 && start + DAY_MS <= end
  let reached = 0
  let o = 0
  let user = 0
  while (o < size) {
    // The user's number after the one before (a varint: 7 bits a byte, most often one or two bytes).
    let x = b[o++] as number
    let v = x & 0x7f
    if (x & 0x80) {
      x = b[o++] as number
      v |= (x & 0x7f) << 7
      for (let s = 0x4000; x & 0x80; s *= 0x80) {
        x = b[o++] as number
        v += (x & 0x7f) * s
      }
    }
    // Its low bit: a last time follows the first.
    const flagged = v % 2
    user += (v - flagged) / 2
    const first =
      start +
      ((b[o] as number) | ((b[o + 1] as number) << 8) | ((b[o + 2] as number) << 16)) +
      (b[o + 3] as number) * 0x1000000
    o += 4
    v = 0
    if (flagged === 1) {
      x = b[o++] as number
      v = x & 0x7f
      for (let s = 0x80; x & 0x80; s *= 0x80) {
        x = b[o++] as number
        v += (x & 0x7f) * s
      }
    }
    if (!inside && (first < 1 || first >= end)) continue
    if (user >= users) throw new RangeError(`funnel: user number ${user} is not below ${users}`)
    let t = first
    if (prev !== null) {
      const p = prev[user] as number
      const last = first + v
      if (p === 0 || !(last > p)) continue
      if (!(first > p)) t = last
    }
    const was = at[user] as number
    if (was === 0) {
      reached++
      at[user] = t
    } else if (t < was) at[user] = t
  }
  if (o > size) throw new RangeError('pack: truncated')
  return reached
}

let warmed = false

/**
 * Runs the count a few times over a made-up world, once per process, when the event loop is
 * next idle (~40 ms, off any request): its loops are compiled by V8 before a real funnel's first
 * count, which otherwise spends ~30 ms more on code not yet compiled (58 against 29 ms for three
 * steps of 10 M records' packs).
 */
export function warmFunnelPacks(): void {
  if (warmed) return
  warmed = true
  setTimeout(() => {
    // Times like real ones (epoch ms above 2^31: doubles, not small integers — code compiled for
    // small integers would be thrown away at the first real count), two days, both kinds of range.
    const day = Date.UTC(2026, 0, 1)
    const rows = (salt: number, on: number): PackRow[] =>
      Array.from({ length: 2000 }, (_, i) => {
        const first = on + ((i * 7919 + salt) % 86_000) * 1000
        return { user: (i * 7 + salt) % 1500, first, last: first + (i % 3) * 500 }
      })
    const steps: StepRows[] = [1, 2, 3].map((salt) => ({
      packs: [day, day + DAY_MS].map((on) => ({ day: on, data: encodePack(on, rows(salt, on)) })),
      rows: rows(salt + 5, day + 2 * DAY_MS),
    }))
    for (let i = 0; i < 10; i++) {
      funnelFromPacks(steps, 1500, 0, null)
      funnelFromPacks(steps, 1500, day + 6 * HOUR_MS, day + DAY_MS + 18 * HOUR_MS)
    }
  }, 0).unref()
}
