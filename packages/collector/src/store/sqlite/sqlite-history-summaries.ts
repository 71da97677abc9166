/**
 * Summaries whose reads must not grow with history (issue 28): path prefixes per start hour and
 * retention cohorts per zone. Step 9 creates them and derives the path prefixes from the stored
 * sessions; the cohorts are derived at open for the store's `retentionZones`
 * ({@link syncRetentionZones}), as the zones are an option of the running collector.
 */
import type Database from 'better-sqlite3'
import { sqliteDialect as d, type Query } from '../../reports/dialect'
import { PATH_PREFIXES, rebuildPaths } from '../../reports/path-prefixes'
import type { Row } from '../../reports/report-queries'
import { RETENTION_ZONES_TABLE, retentionDdl } from '../../reports/retention-cohorts'
import { optionZonesMatch, syncOptionZones, ZONE_DEMAND_COLUMNS } from '../../reports/retention-zone-demand'
import { rollupDdl } from '../../reports/rollup-tables'
import { runSteps } from '../../reports/rollup-writes'

type Run = (q: Query) => Row[]

export const HISTORY_SUMMARIES: {
  version: number
  name: string
  apply(db: Database.Database, keep: unknown, run: Run): void
} = {
  version: 9,
  name: 'path prefixes and retention cohorts (derived from the stored sessions and messages)',
  apply(db, _keep, run) {
    db.exec(`${rollupDdl(d, [PATH_PREFIXES])}\n${retentionDdl(d)}`)
    runSteps(rebuildPaths(d), run)
  },
}

/** Step 13: the zones table records which zones are kept on demand and how far their preparation is. */
export const ZONES_ON_DEMAND: {
  version: number
  name: string
  apply(db: Database.Database, keep: <T extends object>(v: T) => T): void
} = {
  version: 13,
  name: 'retention zones kept on demand: source, readiness and progress of each zone',
  apply(db, keep) {
    const table = RETENTION_ZONES_TABLE
    const have = keep(db.prepare(`PRAGMA table_info(${table})`)).all() as Array<{ name: string }>
    for (const [c, kind, extra] of ZONE_DEMAND_COLUMNS)
      if (!have.some((h) => h.name === c))
        db.exec(`ALTER TABLE ${table} ADD COLUMN ${c} ${d.columnType(kind)} ${extra}`)
  },
}

/**
 * Makes the zones held for the option `zones` (in one transaction): a new zone is derived from
 * the stored messages (set-based), a zone kept on demand becomes the option's, a zone no longer
 * named goes.
 */
export function syncRetentionZones(db: Database.Database, zones: readonly string[], run: Run): void {
  if (runSteps(optionZonesMatch(d, zones), run)) return
  db.transaction(() => runSteps(syncOptionZones(d, zones), run)).immediate()
}
