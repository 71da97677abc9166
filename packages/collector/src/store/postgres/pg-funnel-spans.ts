/**
 * Migration 16: the funnel's per-user step spans (reports/funnel-spans.ts), derived from the
 * hourly step rows, and the step rows' index on (step, user, hour) in place of (step, hour).
 */
import type { ClientBase } from 'pg'
import { postgresDialect as d } from '../../reports/dialect'
import { rebuildSpans, spansDdl } from '../../reports/funnel-spans'
import { runStepsAsync } from '../../reports/rollup-writes'

export const FUNNEL_SPANS: {
  version: number
  name: string
  sql: string
  after: (client: ClientBase) => Promise<void>
} = {
  version: 16,
  name: 'funnel step spans per user (derived from the hourly step rows)',
  sql: spansDdl(d),
  async after(client) {
    await runStepsAsync(rebuildSpans(d), async (q) => (await client.query(d.sql(q.sql), q.params as unknown[])).rows)
  },
}
