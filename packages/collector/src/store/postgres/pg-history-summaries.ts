/**
 * Summaries whose reads must not grow with history (issue 28): path prefixes per start hour and
 * retention cohorts per zone. Migration 11 creates them and derives the path prefixes from the
 * stored sessions; the cohorts are derived at start for the collector's `retentionZones`
 * ({@link syncRetentionZones}), as the zones are an option of the running collector.
 */
import type { ClientBase } from 'pg'
import { postgresDialect as d } from '../../reports/dialect'
import { PATH_PREFIXES, rebuildPaths } from '../../reports/path-prefixes'
import {
  COHORTS,
  DAY_LINKS,
  PREV_DAYS,
  RETENTION_ZONES_TABLE,
  retentionDdl,
  USER_PERIODS,
} from '../../reports/retention-cohorts'
import { optionZonesMatch, syncOptionZones, ZONE_DEMAND_COLUMNS } from '../../reports/retention-zone-demand'
import { rollupDdl } from '../../reports/rollup-tables'
import { runStepsAsync, type Steps } from '../../reports/rollup-writes'

const run = <T>(client: ClientBase, steps: Steps<T>): Promise<T> =>
  runStepsAsync(steps, async (q) => (await client.query(d.sql(q.sql), q.params as unknown[])).rows)

export const HISTORY_SUMMARIES: {
  version: number
  name: string
  sql: string
  after: (client: ClientBase) => Promise<void>
} = {
  version: 11,
  name: 'path prefixes and retention cohorts (derived from the stored sessions and messages)',
  sql: `${rollupDdl(d, [PATH_PREFIXES])}\n${retentionDdl(d)}`,
  async after(client) {
    await run(client, rebuildPaths(d))
  },
}

/** Advisory lock key of the cohorts' derivation: two collectors starting at once derive once. */
const ZONES_LOCK = 0x636f6872 // "cohr"

/** Migration 15: the zones table records which zones are kept on demand and how far their preparation is. */
export const ZONES_ON_DEMAND = {
  version: 15,
  name: 'retention zones kept on demand: source, readiness and progress of each zone',
  sql: `ALTER TABLE ${d.table(RETENTION_ZONES_TABLE)} ${ZONE_DEMAND_COLUMNS.map(
    ([c, kind, extra]) => `ADD COLUMN IF NOT EXISTS ${c} ${d.columnType(kind)} ${extra}`,
  ).join(', ')};`,
}

/**
 * Makes the zones held for the option `zones` (the first start after the migration, or a changed
 * `retentionZones`): a new zone is derived from the stored messages (set-based), a zone kept on
 * demand becomes the option's, a zone no longer named goes. The tables are locked against ingest
 * meanwhile: a batch waiting on them applies its share after the derivation, which did not see
 * its uncommitted messages.
 */
export async function syncRetentionZones(client: ClientBase, zones: readonly string[]): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [ZONES_LOCK])
  try {
    if (await run(client, optionZonesMatch(d, zones))) return
    await client.query('BEGIN')
    try {
      await client.query(
        `LOCK TABLE ${[USER_PERIODS, COHORTS, PREV_DAYS, DAY_LINKS].map((t) => d.table(t.name)).join(', ')} IN SHARE ROW EXCLUSIVE MODE`,
      )
      await run(client, syncOptionZones(d, zones))
      await client.query('COMMIT')
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {})
      throw e
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [ZONES_LOCK])
  }
}
