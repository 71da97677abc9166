import { isPostgresUrl, PgRecordStore, type PgStoreOptions } from './postgres/pg-store'
import { SqliteRecordStore } from './sqlite/sqlite-store'
import type { RecordStore } from './store'

/**
 * Opens the record store a database address names: a PostgreSQL URL (`postgres://…` or
 * `postgresql://…`) opens a {@link PgRecordStore} (migrations applied, `options` for its pool and
 * bounds); anything else is a SQLite file path (`:memory:` when absent). Either way the schema and
 * the report summaries are brought up to date before it resolves.
 *
 * @example const store = await openStore(process.env.CONVOTRACK_DB ?? './convotrack.db')
 */
export async function openStore(url?: string, options: PgStoreOptions = {}): Promise<RecordStore> {
  if (isPostgresUrl(url)) return PgRecordStore.open(url, options)
  const { sessionGapMinutes, retentionZones, retentionZonesOnDemand } = options
  return new SqliteRecordStore(url ?? ':memory:', {
    ...(sessionGapMinutes === undefined ? {} : { sessionGapMinutes }),
    ...(retentionZones === undefined ? {} : { retentionZones }),
    ...(retentionZonesOnDemand === undefined ? {} : { retentionZonesOnDemand }),
  })
}
