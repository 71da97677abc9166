/**
 * SQLite step 11 (issue 27, ingest keeps up): fewer b-trees written per stored message.
 *
 * - `messages_thread` (bot, thread, id) goes: every message wrote a random page of it (~1.4 of
 *   the ~8 pages a record dirtied). Its only readers were ingest's look-backs, which the batch
 *   now answers itself (reports/batch-lookback.ts); the rest take the thread's rows from
 *   `messages_thread_ts`.
 * - The narrow summary tables become WITHOUT ROWID tables. A rowid table with a composite
 *   primary key is two b-trees (the rows by rowid, and the key's index pointing at them): every
 *   upsert descends both, and a new row is written into both. A WITHOUT ROWID table is the key's
 *   b-tree alone, holding the row. The tables are rebuilt (rows copied in key order) with the
 *   columns, keys and indexes their specs give today, so a spec's key order decides the b-tree's
 *   order: the users per day and hour are keyed by time first, and their secondary index — a copy
 *   of the key in that order — goes. Wide rows (free text, metadata) stay rowid tables.
 *
 * Every writer already keeps key columns non-NULL (they are PostgreSQL primary keys too), which
 * a WITHOUT ROWID table requires.
 */
import type Database from 'better-sqlite3'
import { ANALYTICS_ROLLUPS, USER_STEPS } from '../../reports/analytics-tables'
import { sqliteDialect } from '../../reports/dialect'
import { PATH_PREFIXES } from '../../reports/path-prefixes'
import { READ_SUMMARIES } from '../../reports/read-summary-tables'
import { COHORTS, USER_PERIODS } from '../../reports/retention-cohorts'
import { ROLLUPS, type RollupSpec, rollupDdl } from '../../reports/rollup-tables'
import { USAGE_FIRST, USAGE_HOURS } from '../../reports/usage-hours'
import { USAGE } from '../../reports/usage-rollup'

/** The summary tables step 11 rebuilds (every one made from a spec). */
export const LEAN_TABLES: readonly RollupSpec[] = [
  ...ROLLUPS,
  ...ANALYTICS_ROLLUPS,
  USER_STEPS,
  ...READ_SUMMARIES,
  PATH_PREFIXES,
  USER_PERIODS,
  COHORTS,
  USAGE,
  USAGE_HOURS,
  USAGE_FIRST,
].filter((spec) => spec.withoutRowid)

/**
 * Keeps a statement reachable until the process ends (the store's `kept`): better-sqlite3 12 on
 * Node ≥ 24.19 aborts when V8 collects one in a garbage collection it starts itself.
 */
type Keep = <T extends object>(value: T) => T

/**
 * Rebuilds one summary table as its spec makes it now (WITHOUT ROWID), with the rows it holds and
 * its indexes (those of other steps too), but for an index that is now a copy of the key. A table
 * already WITHOUT ROWID, or a rowid one by its spec, is left alone.
 */
export function rebuildWithoutRowid(db: Database.Database, spec: RollupSpec, keep: Keep): void {
  const t = spec.name
  const ddl = keep(db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")).pluck().get(t) as
    | string
    | undefined
  if (!spec.withoutRowid || ddl === undefined || /WITHOUT\s+ROWID\s*$/i.test(ddl)) return
  const indexes = keep(
    db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"),
  ).all(t) as Array<{ name: string; sql: string }>
  for (const ix of indexes) db.exec(`DROP INDEX "${ix.name}"`)
  const old = `${t}__rowid`
  db.exec(`ALTER TABLE "${t}" RENAME TO "${old}"`)
  // The table (the first statement; its indexes are the saved ones), its rows in key order
  // (appends to the new b-tree), then the indexes.
  db.exec(`${rollupDdl(sqliteDialect, [spec]).split(';\n')[0]};`)
  const cols = Object.keys(spec.columns).join(', ')
  db.exec(`INSERT INTO "${t}" (${cols}) SELECT ${cols} FROM "${old}" ORDER BY ${spec.keys.join(', ')}`)
  db.exec(`DROP TABLE "${old}"`)
  const key = spec.keys.join(',')
  for (const ix of indexes) if (indexColumns(ix.sql) !== key) db.exec(ix.sql)
}

/** The column list of a CREATE INDEX statement without spaces ("a,b,c"); '' for a partial index. */
function indexColumns(sql: string): string {
  return (/\bON\s+"?\w+"?\s*\(([^)]*)\)\s*$/i.exec(sql)?.[1] ?? '').replace(/\s+/g, '')
}

export const LEAN_INGEST: {
  version: number
  name: string
  apply(db: Database.Database, keep: Keep): void
} = {
  version: 11,
  name: 'ingest: no arrival-order index per thread; narrow summary tables WITHOUT ROWID',
  apply(db, keep) {
    db.exec('DROP INDEX IF EXISTS messages_thread')
    for (const spec of LEAN_TABLES) rebuildWithoutRowid(db, spec, keep)
  },
}
