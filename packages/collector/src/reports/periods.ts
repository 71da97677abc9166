/**
 * Calendar periods in a time zone (day, week from Monday, month) for the retention report: where
 * a period starts and how many periods lie between two instants. Pure.
 */
import { DAY_MS, dayStart, HOUR_MS, tzOffset } from './range'

export type Period = 'day' | 'week' | 'month'
export const PERIODS: readonly Period[] = ['day', 'week', 'month']

/** Days since 1970-01-01 of the local date of `t` in `tz`. */
const localDay = (tz: string, t: number): number => Math.floor((t + tzOffset(tz, t)) / DAY_MS)

/** The local midnight (epoch ms) `days` local days after the local day of `start` (a local midnight). */
const addDays = (tz: string, start: number, days: number): number => dayStart(tz, start + days * DAY_MS + 12 * HOUR_MS)

/** Start (epoch ms) of the period of `period` kind in `tz` that contains `t`. */
export function periodStart(tz: string, t: number, period: Period): number {
  const day = dayStart(tz, t)
  if (period === 'day') return day
  const n = localDay(tz, t)
  // 1970-01-01 was a Thursday: (n + 3) mod 7 is days since Monday.
  if (period === 'week') return addDays(tz, day, -((((n + 3) % 7) + 7) % 7))
  const date = new Date(n * DAY_MS).getUTCDate()
  return addDays(tz, day, -(date - 1))
}

/** Index of the period containing `t`, counted from the period containing `origin` (0: the same one). */
export function periodIndex(tz: string, origin: number, t: number, period: Period): number {
  const a = localDay(tz, origin)
  const b = localDay(tz, t)
  if (period === 'day') return b - a
  if (period === 'week') return Math.floor((b + 3) / 7) - Math.floor((a + 3) / 7)
  const month = (n: number) => {
    const d = new Date(n * DAY_MS)
    return d.getUTCFullYear() * 12 + d.getUTCMonth()
  }
  return month(b) - month(a)
}

/** A little more than the longest period of each kind (a DST day is 25 hours, a month 31 days). */
const PAST_END: Record<Period, number> = { day: 36 * HOUR_MS, week: 8 * DAY_MS, month: 32 * DAY_MS }

/** Start of the period after the one starting at `start` (a period start in `tz`). */
export function nextPeriod(tz: string, start: number, period: Period): number {
  return periodStart(tz, start + PAST_END[period], period)
}
