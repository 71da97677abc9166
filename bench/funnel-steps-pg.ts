/**
 * The funnel statements (funnel-ways.ts: before the spans, the per-user walk, the collector's
 * own) on PostgreSQL, at the step rows of a 10 M-record
 * store: 500 000 users over 90 days, each greeting in 1–10 session-hours, checking an order in
 * half of them and buying in a fifth (≈ 4.7 M hourly step rows), written by SQL on the server's
 * side; the spans derived by the migration's own code; JIT off, as in the collector's sessions:
 *   node --import tsx bench/funnel-steps-pg.ts [users]
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { PgRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { USER_STEPS } from '../packages/collector/src/reports/analytics-tables'
import { postgresDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { rebuildSpans } from '../packages/collector/src/reports/funnel-spans'
import { runStepsAsync } from '../packages/collector/src/reports/rollup-writes'
import { startPostgres } from '../packages/collector/test/support/postgres'
import { compareFunnels } from './funnel-ways'

const USERS = Number(process.argv[2] ?? 500_000)
const H = 3_600_000
const NOW = Math.floor(Date.now() / H) * H
const server = await startPostgres({ dir: mkdtempSync(join('/var/tmp', 'funnel-pg-')) })
try {
  const url = await server.createDatabase()
  await (await PgRecordStore.open(url, { listen: false })).close()
  const client = new pg.Client({ connectionString: url })
  client.on('error', (e) => console.error(`connection: ${e.message}`))
  await client.connect()
  // As the collector's own connections (pg-store.ts): no JIT compilation (it cost ~2 s a funnel).
  await client.query('SET jit = off')
  const exec = async (q: Query) => (await client.query(d.sql(q.sql), q.params as unknown[])).rows
  const steps = d.table(USER_STEPS.name)
  const t = performance.now()
  // Session k of user u: an hour of the last 90 days; greeting at :01, order.status at :10 in half, purchase at :20 in a fifth.
  const hour = `(${NOW - 90 * 24 * H}::bigint + ((u::bigint * 7919 + k * 104729) % ${90 * 24})::bigint * ${H})`
  for (const [kind, name, minute, every] of [
    ['intent', 'greeting', 1, 1],
    ['intent', 'order.status', 10, 2],
    ['event', 'purchase', 20, 5],
  ] as const)
    await client.query(
      `INSERT INTO ${steps} (bot, hour, kind, name, user_id, n, first_ts, last_ts)
       SELECT 'shop', ${hour}, '${kind}', '${name}', 'user-' || u, 1, ${hour} + ${minute * 60_000}, ${hour} + ${minute * 60_000}
       FROM generate_series(0, ${USERS - 1}) u, LATERAL generate_series(0, u % 10) k
       WHERE (u + k) % ${every} = 0
       ON CONFLICT DO NOTHING`,
    )
  await runStepsAsync(rebuildSpans(d), exec)
  await client.query('VACUUM ANALYZE')
  const count = async (sql: string) => Number((await client.query(sql)).rows[0]?.n)
  console.log(
    `loaded in ${((performance.now() - t) / 1000).toFixed(0)} s: ${await count(`SELECT count(*) AS n FROM ${steps}`)} step-hours, ${await count(`SELECT count(*) AS n FROM ${d.table('rollup_spans')}`)} step spans, ${USERS} users`,
  )
  await compareFunnels(d, exec, NOW)
  await client.end()
} finally {
  await server.destroy()
}
