/**
 * Migration 17: users first and last seen per hour (`rollup_user_seen`, reports/read-summaries.ts),
 * derived from the profiles: the overview's users and new users sum hours instead of counting
 * profiles.
 */
import type { ClientBase } from 'pg'
import { postgresDialect as d } from '../../reports/dialect'
import { rebuildUserSeen } from '../../reports/read-summaries'
import { readSummariesDdl } from '../../reports/read-summary-tables'
import { runStepsAsync } from '../../reports/rollup-writes'

export const USER_SEEN_HOURS: {
  version: number
  name: string
  sql: string
  after: (client: ClientBase) => Promise<void>
} = {
  version: 17,
  name: 'users first and last seen per hour (derived from the user profiles)',
  sql: readSummariesDdl(d),
  async after(client) {
    await runStepsAsync(rebuildUserSeen(d), async (q) => (await client.query(d.sql(q.sql), q.params as unknown[])).rows)
  },
}
