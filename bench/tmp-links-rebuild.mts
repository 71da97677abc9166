import pg from 'pg'
import { postgresDialect as d } from '../packages/collector/src/reports/dialect'
import { rebuildDayLinks } from '../packages/collector/src/reports/retention-cohorts'
const c = new pg.Client({ connectionString: process.argv[2] })
await c.connect()
await c.query('BEGIN')
const t = performance.now()
for (const q of rebuildDayLinks(d) as Iterable<{ sql: string; params: unknown[] }>) {
  const r = await c.query(d.sql(q.sql), q.params as unknown[])
  console.log(r.rowCount, ((performance.now() - t) / 1000).toFixed(1), 's')
}
await c.query('ROLLBACK')
await c.end()
