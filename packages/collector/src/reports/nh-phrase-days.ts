/**
 * NotHandled phrases per bot × UTC day: `rollup_nh_phrases` (read-summaries.ts) summed over each
 * day's hours, so an open range (the default, all time: what the NotHandled report and its
 * clusters read) reads one row per phrase × day for its whole days and hour rows only for the
 * part of its first day — 24 times fewer rows than the hours. Every change to the hour rows is
 * mirrored here in the same transaction (count and users add up; latest time and spelling keep
 * the greatest and least), and when records go the touched days' latest time and spelling are
 * derived again from the NotHandled rows that remain, as the hour rows' are.
 *
 * And NotHandled inputs per bot × hour, every phrase together ({@link NH_HOURS}): the overview's
 * count and its days read one row per hour whatever the inputs said (the phrase or user rows of
 * every hour grow with what users type: 372 000 user rows at 10 M records, 45–74 ms to sum all
 * time on PostgreSQL, against 2 200 hour rows). Mirrored from the same changes.
 */
import type { ReadFilter } from '../store/store'
import type { Dialect } from './dialect'
import { scopeSql } from './message-queries'
import { DAY_MS, floorHour, floorSql } from './range'
import { NH_PHRASES } from './read-summary-tables'
import { addRow, type Deltas, phraseOf, type RollupMessage } from './rollup-delta'
import { dayCopy, NOT_HANDLED, type RollupSpec, rollupDdl } from './rollup-tables'
import type { Steps } from './rollup-writes'

/** {@link NH_PHRASES} by UTC day: inputs per bot × day × phrase; `users`: users whose latest input of the phrase is in that day. */
export const NH_PHRASE_DAYS: RollupSpec = dayCopy(NH_PHRASES, 'rollup_nh_phrase_days')

/** NotHandled inputs per bot × hour, every phrase and user together: the overview's count. Rows that reach 0 go. */
export const NH_HOURS: RollupSpec = {
  name: 'rollup_nh_hours',
  columns: { bot: 'text', hour: 'int', n: 'int' },
  keys: ['bot', 'hour'],
  withoutRowid: true,
  sums: ['n'],
  live: ['n'],
  indexes: [['hour']],
}

/** CREATE TABLE / INDEX of the summaries (phrase days and NotHandled hours). */
export const phraseDaysDdl = (d: Dialect): string => rollupDdl(d, [NH_PHRASE_DAYS, NH_HOURS])

/** CREATE TABLE / INDEX of the NotHandled hours alone (the migration that adds them). */
export const nhHoursDdl = (d: Dialect): string => rollupDdl(d, [NH_HOURS])

const utcDay = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS

/**
 * Adds to `deltas` the day rows and the hour totals of the phrase hours' changes already in it (a
 * writer's late changes, before they are written).
 */
export function mirrorPhraseDays(deltas: Deltas): void {
  for (const r of deltas.get(NH_PHRASES)?.values() ?? []) {
    addRow(deltas, NH_HOURS, { bot: r.bot ?? null, hour: r.hour ?? null, n: r.n ?? 0 })
    addRow(deltas, NH_PHRASE_DAYS, {
      bot: r.bot ?? null,
      day: utcDay(r.hour as number),
      phrase: r.phrase ?? null,
      n: r.n ?? 0,
      users: r.users ?? 0,
      last_ts: r.last_ts ?? null,
      text: r.text ?? null,
    })
  }
}

/**
 * When records went (after the NotHandled rows were derived again): the latest time and spelling
 * of each day the deleted inputs were in, from the NotHandled rows of that day that remain.
 */
export function* takeBackPhraseDays(d: Dialect, doomed: readonly RollupMessage[]): Steps {
  const days = new Map<string, [string, number, string]>()
  for (const m of doomed)
    if (m.nh) {
      const key: [string, number, string] = [m.bot, utcDay(m.ts), phraseOf(m.text)]
      days.set(JSON.stringify(key), key)
    }
  const t = d.table(NH_PHRASE_DAYS.name)
  const nh = d.table(NOT_HANDLED.name)
  const of = `FROM ${nh} s WHERE s.bot = ${t}.bot AND s.hour >= ${t}.day AND s.hour < ${t}.day + ${DAY_MS} AND s.phrase = ${t}.phrase`
  // Sorted: concurrent writers lock the rows in the same order.
  for (const [, [bot, day, phrase]] of [...days].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    yield {
      sql: `UPDATE ${t} SET last_ts = (SELECT max(last_ts) ${of}), text = (SELECT min(text) ${of})
        WHERE bot = ? AND day = ? AND phrase = ?`,
      params: [bot, day, phrase],
    }
}

/** Derives the summaries (phrase days, NotHandled hours) from the phrase hours (the migration that adds them; after a rebuild of those). */
export function* rebuildPhraseDays(d: Dialect): Steps {
  const day = floorSql('hour', DAY_MS)
  yield { sql: `DELETE FROM ${d.table(NH_PHRASE_DAYS.name)}`, params: [] }
  yield {
    sql: `INSERT INTO ${d.table(NH_PHRASE_DAYS.name)} (bot, day, phrase, n, users, last_ts, text)
      SELECT bot, ${day}, phrase, sum(n), sum(users), max(last_ts), min(text) FROM ${d.table(NH_PHRASES.name)}
      GROUP BY bot, ${day}, phrase`,
    params: [],
  }
  yield* rebuildNhHours(d)
}

/** Derives the NotHandled hours from the phrase hours. */
export function* rebuildNhHours(d: Dialect): Steps {
  yield { sql: `DELETE FROM ${d.table(NH_HOURS.name)}`, params: [] }
  yield {
    sql: `INSERT INTO ${d.table(NH_HOURS.name)} (bot, hour, n)
      SELECT bot, hour, sum(n) FROM ${d.table(NH_PHRASES.name)} GROUP BY bot, hour HAVING sum(n) <> 0`,
    params: [],
  }
}

/**
 * The phrase rows of a range open at its end, as a subquery (bot, phrase, n, users, last_ts,
 * text): day rows from its first whole UTC day on, hour rows before that.
 */
export function openPhraseRows(d: Dialect, filter: ReadFilter, params: unknown[]): string {
  const from = floorHour(filter.from ?? 0)
  const firstDay = Math.ceil(from / DAY_MS) * DAY_MS
  const cols = 'bot, phrase, n, users, last_ts, text'
  // All time reads the whole (small) table.
  if (firstDay > 0) params.push(firstDay)
  let sql = `SELECT ${cols} FROM ${d.table(NH_PHRASE_DAYS.name)} WHERE ${firstDay > 0 ? 'day >= ?' : '1 = 1'}${scopeSql(d, filter, params)}`
  if (from < firstDay) {
    params.push(from, firstDay)
    sql += ` UNION ALL SELECT ${cols} FROM ${d.table(NH_PHRASES.name)} WHERE hour >= ? AND hour < ?${scopeSql(d, filter, params)}`
  }
  return `(${sql}) p`
}
