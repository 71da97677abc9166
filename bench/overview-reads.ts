/**
 * The overview and the NotHandled clusters before and after their summaries (issue 28), on a copy
 * of a loaded SQLite file (its migrations apply when the store opens it first), alternating
 * before / after in one process, median / max of N:
 *   node --import tsx bench/overview-reads.ts /var/tmp/o.db [rounds]
 * "Before" runs the same report code with the statements it replaced (the conversations of the
 * range from their rows; the clusters' phrases from the phrase × hour rows), so the two differ
 * only in those statements (and a bounded range's users are read from its user-days before).
 */
import { SqliteRecordStore } from '@convotrack/collector'
import Database from 'better-sqlite3'
import { CLUSTER_PHRASES } from '../packages/collector/src/http/analytics-api'
import { overviewReport } from '../packages/collector/src/reports/analytics-queries'
import { sqliteDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { clusterPhrases } from '../packages/collector/src/reports/phrase-clusters'
import { DAY_MS, floorHour } from '../packages/collector/src/reports/range'
import type { Exec, Row } from '../packages/collector/src/reports/report-queries'
import { notHandledReport } from '../packages/collector/src/reports/report-queries'

const file = process.argv[2] ?? '/var/tmp/o.db'
const rounds = Number(process.argv[3] ?? 7)
await new SqliteRecordStore(file).close()
const db = new Database(file, { readonly: true })
const exec: Exec = async (q: Query) => db.prepare(q.sql).all(...(q.params as unknown[])) as Row[]

/** The statement the conversation count was before its summary: one row per conversation of the range. */
function oldConversations(q: Query, filter: { from?: number; to?: number | null }): Query | null {
  if (!q.sql.includes('rollup_conversation_starts')) return null
  const params: unknown[] = []
  let and = ''
  if (filter.from !== undefined && filter.from > 0) {
    and += ' AND last_ts >= ?'
    params.push(filter.from)
  }
  if (filter.to !== undefined && filter.to !== null) {
    and += ' AND first_ts < ?'
    params.push(filter.to)
  }
  return { sql: `SELECT NULL AS hour, count(*) AS n FROM conversation_summaries WHERE messages > 0${and}`, params }
}

/** The statement the clusters' phrases were read with before the day rows: one row per phrase × hour of the range. */
function oldPhrases(q: Query, filter: { from?: number }): Query | null {
  if (!q.sql.includes('rollup_nh_phrase_days')) return null
  const from = floorHour(filter.from ?? 0)
  return {
    sql: `SELECT phrase, min(text) AS text, sum(n) AS n, sum(users) AS users, max(last_ts) AS last_ts,
        group_concat(DISTINCT bot) AS bots
      FROM rollup_nh_phrases WHERE 1 = 1${from > 0 ? ' AND hour >= ?' : ''}
      GROUP BY phrase HAVING sum(n) > 0 ORDER BY n DESC, last_ts DESC, phrase LIMIT ${/LIMIT (\d+)/.exec(q.sql)?.[1]}`,
    params: from > 0 ? [from] : [],
  }
}

const now = Date.now()
const last = (db.prepare('SELECT max(hour) AS h FROM rollup_hourly').get() as { h: number }).h
const ranges: Array<[string, { from: number; to: number | null; tz: string }]> = [
  ['last 30 days', { from: floorHour(now - 30 * DAY_MS), to: null, tz: 'UTC' }],
  ['all time', { from: 0, to: null, tz: 'UTC' }],
  // The dashboard's presets end tonight: nothing is stored after the range.
  ['30 days to tonight', { from: floorHour(now - 30 * DAY_MS), to: Math.ceil(now / DAY_MS) * DAY_MS, tz: 'UTC' }],
  ['30 days bounded', { from: last - 30 * DAY_MS + 5 * 3_600_000, to: last - 7 * 3_600_000, tz: 'UTC' }],
  ['30 days bounded, Kolkata', { from: last - 30 * DAY_MS + 1_800_000, to: last - 1_800_000, tz: 'Asia/Kolkata' }],
]
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const show = (xs: number[]) => `${median(xs).toFixed(1)} / ${Math.max(...xs).toFixed(1)} ms`

/** Runs `read` through the old and the new statements alternately; logs both timings and what each answered. */
async function alternate<T>(label: string, old: Exec, read: (run: Exec) => Promise<T>, say: (x: T) => string) {
  const t: Record<'before' | 'after', number[]> = { before: [], after: [] }
  const answers: string[] = []
  for (let i = 0; i < rounds; i++)
    for (const [k, run] of [
      ['before', old],
      ['after', exec],
    ] as const) {
      const a = performance.now()
      const x = await read(run)
      t[k].push(performance.now() - a)
      if (i === 0) answers.push(`${k}: ${say(x)}`)
    }
  console.log(`${label} | before ${show(t.before)} | after ${show(t.after)} | ${answers.join('; ')}`)
}

/** A bounded range's users as they were read before: a DISTINCT per part, then the UNION. */
const oldUsers = (q: Query): Query => ({
  ...q,
  sql: q.sql.replace(/SELECT bot, user_id FROM (rollup_user_(days|hours))/g, 'SELECT DISTINCT bot, user_id FROM $1'),
})

// Before, a bounded range always read its user-days: as if something were stored after it.
const storedAfter = (q: Query) => q.sql.startsWith('SELECT 1 AS found FROM rollup_hourly')
for (const [name, f] of ranges)
  await alternate(
    `overview | ${name}`,
    async (q) => (storedAfter(q) ? [{ found: 1 }] : exec(oldConversations(q, f) ?? oldUsers(q))),
    (run) => overviewReport(d, run, f),
    (o) => `users ${o.users}, conversations ${o.conversations}`,
  )
for (const [name, f] of ranges.slice(0, 2))
  await alternate(
    `clusters | ${name}`,
    async (q) => exec(oldPhrases(q, f) ?? q),
    async (run) => clusterPhrases(await notHandledReport(d, run, f, CLUSTER_PHRASES)),
    (c) => `${c.length} clusters, ${c.reduce((s, x) => s + x.count, 0)} inputs`,
  )
db.close()
