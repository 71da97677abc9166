// The date range every report and list shows, kept in the URL's hash query so a view can be
// shared and survives a reload: #/intents?range=7d, #/live?range=all, or a custom range of
// local calendar days #/intents?from=2026-09-01&to=2026-09-30 (both days included).
// Days start at midnight in the browser's time zone, which every request names as `tz`.
import { state } from './state.js'

/** The presets, in the picker's order. `days` counts today. */
export const PRESETS = [
  { key: 'today', label: 'Today', days: 1 },
  { key: '7d', label: 'Last 7 days', days: 7 },
  { key: '30d', label: 'Last 30 days', days: 30 },
  { key: '90d', label: 'Last 90 days', days: 90 },
  { key: 'all', label: 'All time' },
]

/** The collector's own default when a request names no range. */
export const DEFAULT_RANGE = '30d'

const DAY = /^\d{4}-\d{2}-\d{2}$/

/** The browser's IANA time zone (what "today" means here). */
export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

/** Local midnight of the day `days` days after the day of `t` (DST-safe: calendar arithmetic). */
export function startOfDay(t, days = 0) {
  const d = new Date(t)
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + days).getTime()
}

/** `YYYY-MM-DD` of a local day → its midnight, epoch ms (null when malformed). */
export function parseDay(text) {
  if (!DAY.test(text ?? '')) return null
  const [y, m, d] = text.split('-').map(Number)
  const t = new Date(y, m - 1, d)
  return t.getMonth() === m - 1 && t.getDate() === d ? t.getTime() : null
}

/** Epoch ms → `YYYY-MM-DD` of its local day. */
export function formatDay(t) {
  const d = new Date(t)
  const pad = (n) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

/**
 * The range a hash query names: `{ key, from?, to? }` with `key` a preset or 'custom' (then `from`
 * and `to` are `YYYY-MM-DD`, `to` included). Anything unreadable is the default.
 */
export function readRange(query) {
  const p = new URLSearchParams(query)
  const from = p.get('from')
  const to = p.get('to')
  if (from !== null && to !== null && parseDay(from) !== null && parseDay(to) !== null && from <= to)
    return { key: 'custom', from, to }
  const key = p.get('range')
  return { key: PRESETS.some((r) => r.key === key) ? key : DEFAULT_RANGE }
}

/** The hash query of a range ('' for the default, so plain links stay plain). */
export function rangeQuery(range) {
  if (range.key === 'custom') return `from=${range.from}&to=${range.to}`
  return range.key === DEFAULT_RANGE ? '' : `range=${range.key}`
}

/** The same range? */
export const sameRange = (a, b) => rangeQuery(a) === rangeQuery(b)

/**
 * The range as epoch-ms bounds, `to` exclusive: `{ from, to }`, or `{ all: true }` for all time.
 * Presets end at the end of today, so a view that stays open keeps counting today's messages.
 */
export function bounds(range, now = Date.now()) {
  if (range.key === 'all') return { all: true }
  if (range.key === 'custom') return { from: parseDay(range.from), to: startOfDay(parseDay(range.to), 1) }
  const days = PRESETS.find((r) => r.key === range.key)?.days ?? 30
  return { from: startOfDay(now, 1 - days), to: startOfDay(now, 1) }
}

/** The query parameters every report and list request carries for a range. */
export function rangeParams(range, now = Date.now()) {
  const b = bounds(range, now)
  return b.all ? { all: 1, tz: timeZone() } : { from: b.from, to: b.to, tz: timeZone() }
}

/** Does the range reach the present (so live messages belong in it)? */
export function includesNow(range, now = Date.now()) {
  const b = bounds(range, now)
  return b.all === true || (b.from <= now && now < b.to)
}

/** A short description of a range, e.g. "Last 7 days" or "Sep 1 – Sep 30, 2026". */
export function describeRange(range) {
  if (range.key !== 'custom') return PRESETS.find((r) => r.key === range.key)?.label ?? ''
  const f = (day) => new Date(parseDay(day)).toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' })
  return range.from === range.to ? f(range.from) : `${f(range.from)} – ${f(range.to)}`
}

/** `params` plus the current range's `from`/`to`/`tz` (or `all`): what a report or list request sends. */
export const withRange = (params) => ({ ...params, ...rangeParams(state.range) })
