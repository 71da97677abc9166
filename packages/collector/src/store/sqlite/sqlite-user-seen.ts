/**
 * Step 15: users first and last seen per hour (`rollup_user_seen`, reports/read-summaries.ts),
 * derived from the profiles: the overview's users and new users sum hours instead of counting
 * profiles.
 */
import type Database from 'better-sqlite3'
import { sqliteDialect as d, type Query } from '../../reports/dialect'
import { rebuildUserSeen } from '../../reports/read-summaries'
import { readSummariesDdl } from '../../reports/read-summary-tables'
import type { Row } from '../../reports/report-queries'
import { runSteps } from '../../reports/rollup-writes'

export const USER_SEEN_HOURS: {
  version: number
  name: string
  apply(db: Database.Database, keep: unknown, run: (q: Query) => Row[]): void
} = {
  version: 15,
  name: 'users first and last seen per hour (derived from the user profiles)',
  apply(db, _keep, run) {
    db.exec(readSummariesDdl(d))
    runSteps(rebuildUserSeen(d), run)
  },
}
