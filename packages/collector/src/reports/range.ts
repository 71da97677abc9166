/**
 * Report ranges: the `from` / `to` / `tz` / `all` query parameters of every report and list
 * route, and the time arithmetic of day buckets in a time zone. Pure.
 */

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000
/** What a report covers when the request names no range. */
export const DEFAULT_RANGE_MS = 30 * DAY_MS

/** A resolved range: `[from, to)` in epoch ms (`to` null = open end), day buckets in `tz`. */
export interface ReportRange {
  from: number
  to: number | null
  /** IANA time zone name of day buckets. */
  tz: string
}

/** Why a range parameter was refused: the parameter's name and the rule. */
export class RangeParamError extends Error {
  constructor(
    readonly param: 'from' | 'to' | 'tz' | 'all',
    message: string,
  ) {
    super(message)
    this.name = 'RangeParamError'
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i
const EPOCH = /^-?\d{1,16}$/

/** Epoch ms or ISO 8601 (a date alone is midnight UTC) → epoch ms; undefined when not one. */
export function parseInstant(value: string): number | undefined {
  const v = value.trim()
  if (EPOCH.test(v)) {
    const n = Number(v)
    return Number.isSafeInteger(n) ? n : undefined
  }
  if (!ISO.test(v)) return undefined
  const t = Date.parse(v.replace(' ', 'T'))
  return Number.isFinite(t) ? t : undefined
}

const formats = new Map<string, Intl.DateTimeFormat>()

/** Is `tz` an IANA time zone name this runtime knows? */
export function isTimeZone(tz: string): boolean {
  try {
    formatter(tz)
    return true
  } catch {
    return false
  }
}

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formats.set(tz, f)
  }
  return f
}

/** The zone's offset from UTC at instant `t`, in ms (local = utc + offset). */
export function tzOffset(tz: string, t: number): number {
  if (tz === 'UTC') return 0
  const parts: Record<string, number> = {}
  for (const p of formatter(tz).formatToParts(new Date(t))) if (p.type !== 'literal') parts[p.type] = Number(p.value)
  const local = Date.UTC(
    parts.year as number,
    (parts.month as number) - 1,
    parts.day as number,
    parts.hour as number,
    parts.minute as number,
    parts.second as number,
  )
  return local - (t - (((t % 1000) + 1000) % 1000))
}

/** Start (epoch ms) of the local day in `tz` that contains instant `t`; DST days are 23 or 25 hours long. */
export function dayStart(tz: string, t: number): number {
  const off = tzOffset(tz, t)
  const localMidnight = Math.floor((t + off) / DAY_MS) * DAY_MS
  // The offset at midnight may differ from the offset at t (a DST change during the day).
  const guess = localMidnight - off
  const off2 = tzOffset(tz, guess)
  return localMidnight - off2
}

export const floorHour = (t: number): number => Math.floor(t / HOUR_MS) * HOUR_MS
/** The start of the UTC day of `t`. */
export const floorDay = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS
export const ceilHour = (t: number): number => Math.ceil(t / HOUR_MS) * HOUR_MS
/**
 * SQL of {@link floorHour} / {@link floorDay} on an integer column or expression (`unit`: HOUR_MS
 * or DAY_MS): the same value on both databases, times before 1970 included (`%` keeps the sign).
 */
export const floorSql = (col: string, unit: number): string => `(${col} - ((${col} % ${unit}) + ${unit}) % ${unit})`

/** ` AND col >= ? AND col < ?` of `[from, to)` (a null bound: none), its parameters pushed. */
export function rangeSql(col: string, from: number | null, to: number | null, params: unknown[]): string {
  let and = ''
  if (from !== null) {
    and += ` AND ${col} >= ?`
    params.push(from)
  }
  if (to !== null) {
    and += ` AND ${col} < ?`
    params.push(to)
  }
  return and
}

/**
 * The parts of a read of whole hours `[from, to)` from a per-hour summary and its per-UTC-day
 * copy: the range's whole UTC days from the day rows, only the hours of its partial first and last
 * days from the hour rows — 24 times fewer rows than the hours alone, whatever the range's edges.
 * `from` null: no lower bound (every day before the last); `to` null: no upper bound. `part`
 * writes one SELECT of the hour or day rows in `[from, to)` (a null bound: none), pushing its
 * parameters: the parts are in the order of their text.
 *
 * @example daysAndEdgeHours({ from: Date.UTC(2026, 0, 1, 5), to: null }, part) // hours 05:00–24:00 of Jan 1, then days from Jan 2
 */
export function daysAndEdgeHours(
  range: { from: number | null; to: number | null },
  part: (grain: 'hour' | 'day', from: number | null, to: number | null) => string,
): string[] {
  const { from, to } = range
  const firstDay = from === null ? null : Math.ceil(from / DAY_MS) * DAY_MS
  const lastDay = to === null ? null : floorDay(to)
  if (firstDay !== null && lastDay !== null && firstDay >= lastDay) return [part('hour', from, to)]
  const parts: string[] = []
  if (from !== null && firstDay !== null && from < firstDay) parts.push(part('hour', from, firstDay))
  parts.push(part('day', firstDay, lastDay))
  if (to !== null && lastDay !== null && lastDay < to) parts.push(part('hour', lastDay, to))
  return parts
}

/**
 * The range of a request from its query parameters: `from` and `to` (epoch ms or ISO 8601, `to`
 * exclusive), `tz` (default UTC), `all=1` (or `from=0`) for all time. Without `from`: the
 * `defaultMs` before `to` (or now). Throws {@link RangeParamError} naming the bad parameter.
 *
 * @example rangeOf({ from: '2026-01-01', to: '2026-02-01', tz: 'Europe/Berlin' }, Date.now())
 */
export function rangeOf(
  query: Record<string, unknown>,
  now: number,
  defaultMs: number = DEFAULT_RANGE_MS,
): ReportRange {
  const text = (name: 'from' | 'to' | 'tz' | 'all'): string | undefined => {
    const v = query[name]
    if (v === undefined || v === '') return undefined
    if (typeof v !== 'string') throw new RangeParamError(name, `query \`${name}\` must be given once`)
    return v
  }
  const tz = text('tz') ?? 'UTC'
  if (!isTimeZone(tz)) throw new RangeParamError('tz', 'query `tz` must be an IANA time zone name (e.g. Europe/Berlin)')
  const all = text('all')
  if (all !== undefined && all !== '1' && all !== 'true' && all !== '0' && all !== 'false')
    throw new RangeParamError('all', 'query `all` must be 1 or 0')
  const instant = (name: 'from' | 'to'): number | undefined => {
    const v = text(name)
    if (v === undefined) return undefined
    const t = parseInstant(v)
    if (t === undefined)
      throw new RangeParamError(name, `query \`${name}\` must be epoch milliseconds or an ISO 8601 date-time`)
    return t
  }
  const fromQ = instant('from')
  const toQ = instant('to')
  if (all === '1' || all === 'true') return { from: 0, to: toQ ?? null, tz }
  if (fromQ !== undefined && toQ !== undefined && toQ <= fromQ)
    throw new RangeParamError('to', 'query `to` must be after `from` (`to` is exclusive)')
  if (fromQ !== undefined) return { from: fromQ, to: toQ ?? null, tz }
  // Without `to`: from a whole hour, so the default range reads whole summary rows.
  const from = toQ === undefined ? floorHour(now - defaultMs) : toQ - defaultMs
  return { from: Math.max(0, from), to: toQ ?? null, tz }
}

/** `[from, to)` widened to whole hours (the rollups' grain): from rounds down, to up. */
export function hourRange(r: { from?: number | undefined; to?: number | null | undefined }): {
  from: number
  to: number | null
} {
  return {
    from: floorHour(r.from ?? 0),
    to: r.to === undefined || r.to === null ? null : ceilHour(r.to),
  }
}
