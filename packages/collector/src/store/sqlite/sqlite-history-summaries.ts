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
import { rebuildRetention, retentionDdl, retentionZonesMatch } from '../../reports/retention-cohorts'
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

/** Derives the retention cohorts again when the file holds other zones than `zones` (in one transaction). */
export function syncRetentionZones(db: Database.Database, zones: readonly string[], run: Run): void {
  if (runSteps(retentionZonesMatch(d, zones), run)) return
  db.transaction(() => runSteps(rebuildRetention(d, zones), run)).immediate()
}
