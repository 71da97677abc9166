/**
 * The funnel over step packs (funnel-packs.ts) against the hourly rows' meaning written out
 * plainly (the reference below, the statement of funnel-report.ts row by row): random worlds of
 * users, steps and hours, split at random between packs and rows not packed, every range.
 */
import { describe, expect, it } from 'vitest'
import { decodePack, encodePack, funnelFromPacks, type PackRow, type StepRows } from '../src/reports/funnel-packs'
import { DAY_MS, HOUR_MS } from '../src/reports/range'
import { prng as random } from './rollup-contract'

const START = Date.UTC(2026, 8, 1)

/** Hourly rows of `steps` steps for `users` users over `days` days: each row's times in its hour. */
function world(seed: number, users: number, steps: number, days: number): PackRow[][] {
  const r = random(seed)
  return Array.from({ length: steps }, () => {
    const rows: PackRow[] = []
    for (let user = 0; user < users; user++) {
      const hours = new Set<number>()
      const n = Math.floor(r() * r() * 6)
      for (let i = 0; i < n; i++) hours.add(START + Math.floor(r() * days * 24) * HOUR_MS)
      for (const hour of hours) {
        const a = hour + Math.floor(r() * HOUR_MS)
        // Often one message in the hour (first = last), sometimes several.
        const b = r() < 0.5 ? a : hour + Math.floor(r() * HOUR_MS)
        rows.push({ user, first: Math.min(a, b), last: Math.max(a, b) })
      }
    }
    return rows
  })
}

/** The funnel-report.ts statement, row by row: each step's time per user, then the counts. */
function reference(steps: PackRow[][], from: number, to: number | null): number[] {
  const inside = (row: PackRow) => {
    const hour = row.first - (row.first % HOUR_MS)
    return hour >= from && (to === null || hour < to)
  }
  const counts: number[] = []
  let times = new Map<number, number>()
  for (const [k, rows] of steps.entries()) {
    const next = new Map<number, number>()
    for (const row of rows.filter(inside)) {
      let t: number
      if (k === 0) t = row.first
      else {
        const p = times.get(row.user)
        if (p === undefined) continue
        // The statement's condition: the row's hour from p's hour on, and its last time after p.
        if (row.first - (row.first % HOUR_MS) < p - (p % HOUR_MS) || !(row.last > p)) continue
        t = row.first > p ? row.first : row.last
      }
      const had = next.get(row.user)
      if (had === undefined || t < had) next.set(row.user, t)
    }
    counts.push(next.size)
    times = next
  }
  return counts
}

/** The rows of each step split between packs (UTC days, some left out) and rows not packed. */
function split(steps: PackRow[][], seed: number): StepRows[] {
  const r = random(seed)
  return steps.map((rows) => {
    const byDay = new Map<number, PackRow[]>()
    for (const row of rows) {
      const day = row.first - (row.first % DAY_MS)
      byDay.set(day, [...(byDay.get(day) ?? []), row])
    }
    const packs: StepRows['packs'][number][] = []
    const loose: PackRow[] = []
    for (const [day, dayRows] of byDay) {
      if (r() < 0.7) packs.push({ day, data: encodePack(day, dayRows) })
      else loose.push(...dayRows)
    }
    return { packs, rows: loose }
  })
}

/** Each step's rows as loose rows, and as packs of their UTC days: the two must count alike. */
function bothWays(steps: PackRow[][]): StepRows[][] {
  const packed = steps.map((rows) => {
    const byDay = new Map<number, PackRow[]>()
    for (const row of rows) {
      const day = row.first - (row.first % DAY_MS)
      byDay.set(day, [...(byDay.get(day) ?? []), row])
    }
    return { packs: [...byDay].map(([day, dayRows]) => ({ day, data: encodePack(day, dayRows) })), rows: [] }
  })
  return [steps.map((rows) => ({ packs: [], rows })), packed]
}

describe('funnel step packs', () => {
  it('a pack gives back its rows, in user order, 5 bytes a row of one message', () => {
    const day = Date.UTC(2026, 10, 3)
    const rows: PackRow[] = [
      { user: 900_000, first: day + 5, last: day + 5 },
      { user: 3, first: day + DAY_MS - 1, last: day + DAY_MS + 10 },
      { user: 3, first: day, last: day + 3_599_999 },
      { user: 2 ** 40, first: day + 1234, last: day + 1234 + 2 ** 33 },
    ]
    const data = encodePack(day, rows)
    expect(decodePack(day, data)).toEqual([rows[2], rows[1], rows[0], rows[3]])
    const many = Array.from({ length: 1000 }, (_, i) => ({
      user: i * 7,
      first: day + i * 60_000,
      last: day + i * 60_000,
    }))
    expect(encodePack(day, many).length).toBeLessThanOrEqual(1000 * 5)
  })

  it('refuses a row outside its day, a last time before the first, a user number that is not natural', () => {
    const day = Date.UTC(2026, 10, 3)
    expect(() => encodePack(day, [{ user: 1, first: day - 1, last: day }])).toThrow(/first time .* not inside the day/)
    expect(() => encodePack(day, [{ user: 1, first: day + DAY_MS, last: day + DAY_MS }])).toThrow(/not inside the day/)
    expect(() => encodePack(day, [{ user: 1, first: day + 10, last: day + 9 }])).toThrow(
      /last time .* before the first/,
    )
    expect(() => encodePack(day, [{ user: -1, first: day, last: day }])).toThrow(/user number -1/)
    expect(() => decodePack(day, encodePack(day, [{ user: 1, first: day, last: day }]).subarray(0, 3))).toThrow(
      /truncated/,
    )
  })

  it("a row at the range's first millisecond counts, one a millisecond before it does not, and nobody goes on from a step not reached", () => {
    const day = Date.UTC(2026, 10, 3)
    const from = day + 5 * HOUR_MS
    const first: StepRows = {
      packs: [
        {
          day,
          data: encodePack(day, [
            { user: 0, first: from, last: from },
            { user: 1, first: from - 1, last: from - 1 },
          ]),
        },
      ],
      rows: [],
    }
    // User 0 again in the same millisecond (its last time after it: taken), user 1 only here.
    const second: StepRows = {
      packs: [],
      rows: [
        { user: 0, first: from, last: from + 5 },
        { user: 1, first: from + 10, last: from + 10 },
      ],
    }
    expect(funnelFromPacks([first, second], 2, from, null)).toEqual([1, 1])
    expect(funnelFromPacks([first, second], 2, from - HOUR_MS, null)).toEqual([2, 2])
    expect(funnelFromPacks([first, second], 2, from - HOUR_MS, from)).toEqual([1, 0])
    expect(() => funnelFromPacks([first], 2, Number.NEGATIVE_INFINITY, null)).toThrow(/not a finite time/)
  })

  it('counts what the statement counts: random worlds, every kind of range, packs and loose rows mixed', () => {
    let nonEmpty = 0
    for (let seed = 1; seed <= 40; seed++) {
      const users = 30 + seed * 5
      const steps = world(seed, users, 2 + (seed % 3), 6)
      const r = random(seed * 101)
      const ranges: Array<[number, number | null]> = [[0, null]]
      for (let i = 0; i < 4; i++) {
        const from = START + Math.floor(r() * 5 * 24) * HOUR_MS
        ranges.push([from, r() < 0.3 ? null : from + Math.ceil(r() * 3 * 24) * HOUR_MS])
      }
      ranges.push([0, START + 3 * DAY_MS])
      const stepRows = split(steps, seed * 7)
      for (const [from, to] of ranges) {
        const want = reference(steps, from, to)
        expect(funnelFromPacks(stepRows, users, from, to), `seed ${seed} from ${from} to ${to}`).toEqual(want)
        if ((want.at(-1) as number) > 0) nonEmpty++
      }
    }
    // The worlds reach the last step often: the comparison is not of empty funnels.
    expect(nonEmpty).toBeGreaterThan(50)
  })

  it('takes a step done both before and after the step before at its first time after it, within an hour at its last', () => {
    const h = Date.UTC(2026, 10, 3, 10)
    const greet = [{ user: 0, first: h + 10_000, last: h + 10_000 }]
    // In the same hour as the greeting: before and after it (the hour's last time is taken), and in
    // a later hour (its first time) — the earliest after the greeting is the same hour's last time.
    const order = [
      { user: 0, first: h + 5_000, last: h + 20_000 },
      { user: 0, first: h + HOUR_MS + 1, last: h + HOUR_MS + 9 },
    ]
    // The purchase between the two: after the hour's last time (20 000) only the later one counts.
    const buy = [
      { user: 0, first: h + 15_000, last: h + 15_000 },
      { user: 0, first: h + 30_000, last: h + 30_000 },
    ]
    // Without the later purchase the user stops at step 2.
    const early = [greet, order, [buy[0] as PackRow]]
    // A step whose row starts after the step before is taken at its first time: a purchase between
    // that row's first and last time comes after it.
    const later = [
      greet,
      [{ user: 0, first: h + 12_000, last: h + 40_000 }],
      [{ user: 0, first: h + 25_000, last: h + 25_000 }],
    ]
    // A step at the very time of the step before is not after it.
    const same = [greet, [{ user: 0, first: h + 10_000, last: h + 10_000 }]]
    const cases: Array<[PackRow[][], number[]]> = [
      [
        [greet, order, buy],
        [1, 1, 1],
      ],
      [early, [1, 1, 0]],
      [later, [1, 1, 1]],
      [same, [1, 0]],
    ]
    for (const [steps, want] of cases) {
      expect(reference(steps, 0, null)).toEqual(want)
      for (const [i, way] of bothWays(steps).entries())
        expect(funnelFromPacks(way, 1, 0, null), `way ${i}`).toEqual(want)
    }
  })

  it('a range holds a row from its first hour and none from the hour it ends at', () => {
    const from = Date.UTC(2026, 10, 3, 10)
    const to = from + 2 * HOUR_MS
    const rows = [
      { user: 0, first: from, last: from },
      { user: 1, first: from - 1, last: from - 1 },
      { user: 2, first: to - 1, last: to - 1 },
      { user: 3, first: to, last: to },
    ]
    const packed = [
      { packs: [{ day: from - (from % DAY_MS), data: encodePack(from - (from % DAY_MS), rows) }], rows: [] },
    ]
    expect(funnelFromPacks(packed, 4, from, to)).toEqual([2])
    expect(funnelFromPacks([{ packs: [], rows }], 4, from, to)).toEqual([2])
    expect(funnelFromPacks([{ packs: [], rows }], 4, from, null)).toEqual([3])
    expect(reference([rows], from, to)).toEqual([2])
  })

  it('reads user numbers of every size from a pack (one to four bytes apart)', () => {
    const h = Date.UTC(2026, 10, 3, 10)
    const users = [0, 1, 127, 128, 300, 16_383, 16_384, 70_000, 2_097_152, 2_097_160, 2_500_000]
    const greet = users.map((user, i) => ({ user, first: h + i, last: h + i }))
    // Half of them go on: the count is of the right users, not of any users.
    const order = users.filter((_, i) => i % 2 === 0).map((user) => ({ user, first: h + 1000, last: h + 1000 }))
    const want = reference([greet, order], 0, null)
    expect(want).toEqual([users.length, Math.ceil(users.length / 2)])
    for (const way of bothWays([greet, order])) expect(funnelFromPacks(way, 2_500_001, 0, null)).toEqual(want)
    // Numbered the other way round: the users who go on are the others.
    const others = users.filter((_, i) => i % 2 === 1).map((user) => ({ user, first: h + 1000, last: h + 1000 }))
    for (const way of bothWays([greet, others]))
      expect(funnelFromPacks(way, 2_500_001, 0, null)).toEqual([users.length, Math.floor(users.length / 2)])
  })

  it('refuses a user number the arrays do not hold', () => {
    expect(() => funnelFromPacks([{ packs: [], rows: [{ user: 5, first: 1, last: 1 }] }], 5, 0, null)).toThrow(
      /user number 5 is not below 5/,
    )
  })
})
