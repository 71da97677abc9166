import pg from 'pg'
import { overviewReport } from '../packages/collector/src/reports/analytics-queries'
import { postgresDialect as d } from '../packages/collector/src/reports/dialect'
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:28878/scale' })
await c.connect()
const DAY = 86_400_000
const mid = Math.floor(Date.now() / DAY) * DAY
const off = Number(process.argv[2] ?? 5 * 3_600_000)
await overviewReport(d, async (q) => {
  if (q.sql.includes('day_links')) {
    const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${d.sql(q.sql)}`, q.params as unknown[])
    console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'))
    return [{}]
  }
  return (await c.query(d.sql(q.sql), q.params as unknown[])).rows
}, { from: mid - 37 * DAY + off, to: mid - 7 * DAY + off, tz: 'UTC' }, 30 * 60_000)
await c.end()
