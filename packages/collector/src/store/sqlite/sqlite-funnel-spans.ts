/**
 * Step 14: the funnel's per-user step spans (reports/funnel-spans.ts), derived from the hourly
 * step rows, and the step rows' index on (step, user, hour) in place of (step, hour).
 */
import type Database from 'better-sqlite3'
import { sqliteDialect as d, type Query } from '../../reports/dialect'
import { rebuildSpans, spansDdl } from '../../reports/funnel-spans'
import type { Row } from '../../reports/report-queries'
import { runSteps } from '../../reports/rollup-writes'

export const FUNNEL_SPANS: {
  version: number
  name: string
  apply(db: Database.Database, keep: unknown, run: (q: Query) => Row[]): void
} = {
  version: 14,
  name: 'funnel step spans per user (derived from the hourly step rows)',
  apply(db, _keep, run) {
    db.exec(spansDdl(d))
    runSteps(rebuildSpans(d), run)
  },
}
