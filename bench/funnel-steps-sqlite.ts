/**
 * funnel-steps-pg.ts's load on SQLite: `users` users (default 50 000, a 1 M-record store's) over
 * 90 days, each greeting in 1–10 session-hours, checking an order in half of them and buying in a
 * fifth, written by SQL into a fresh file opened through the store (its migrations); the spans
 * derived by the migration's own code; the funnel statements side by side (funnel-ways.ts):
 *   node --import tsx bench/funnel-steps-sqlite.ts [users]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import Database from 'better-sqlite3'
import { USER_STEPS } from '../packages/collector/src/reports/analytics-tables'
import { sqliteDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { rebuildSpans } from '../packages/collector/src/reports/funnel-spans'
import { runStepsAsync } from '../packages/collector/src/reports/rollup-writes'
import { compareFunnels } from './funnel-ways'

const USERS = Number(process.argv[2] ?? 50_000)
const H = 3_600_000
const NOW = Math.floor(Date.now() / H) * H
const dir = mkdtempSync('/var/tmp/funnel-sqlite-')
try {
  const file = join(dir, 'funnel.db')
  await new SqliteRecordStore(file).close()
  const db = new Database(file)
  const exec = async (q: Query) => {
    const statement = db.prepare(q.sql)
    const params = q.params as unknown[]
    if (statement.reader) return statement.all(...params) as Record<string, unknown>[]
    statement.run(...params)
    return []
  }
  const steps = d.table(USER_STEPS.name)
  const t = performance.now()
  // Session k of user u: an hour of the last 90 days; greeting at :01, order.status at :10 in half, purchase at :20 in a fifth.
  const hour = `(${NOW - 90 * 24 * H} + ((u * 7919 + k * 104729) % ${90 * 24}) * ${H})`
  for (const [kind, name, minute, every] of [
    ['intent', 'greeting', 1, 1],
    ['intent', 'order.status', 10, 2],
    ['event', 'purchase', 20, 5],
  ] as const)
    db.prepare(
      `WITH RECURSIVE us(u) AS (SELECT 0 UNION ALL SELECT u + 1 FROM us WHERE u < ${USERS - 1}),
        ks(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM ks WHERE k < 9)
      INSERT OR IGNORE INTO ${steps} (bot, hour, kind, name, user_id, n, first_ts, last_ts)
      SELECT 'shop', ${hour}, '${kind}', '${name}', 'user-' || u, 1, ${hour} + ${minute * 60_000}, ${hour} + ${minute * 60_000}
      FROM us, ks WHERE k <= u % 10 AND (u + k) % ${every} = 0`,
    ).run()
  await runStepsAsync(rebuildSpans(d), exec)
  db.exec('ANALYZE')
  const count = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n)
  console.log(
    `loaded in ${((performance.now() - t) / 1000).toFixed(0)} s: ${count(`SELECT count(*) AS n FROM ${steps}`)} step-hours, ${count(`SELECT count(*) AS n FROM ${d.table('rollup_spans')}`)} step spans, ${USERS} users`,
  )
  await compareFunnels(d, exec, NOW)
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
