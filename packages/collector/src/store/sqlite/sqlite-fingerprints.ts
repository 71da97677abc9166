import type Database from 'better-sqlite3'

/**
 * SQLite schema step 3 "idempotency fingerprints" (PostgreSQL: migration 4 in pg-migrations.ts):
 * each keyed record keeps the fingerprint of what was sent under its key (a SHA-256 of platform,
 * type, `v` and body), and an erasure leaves a tombstone per key — the key, the fingerprint and
 * the erased record's id, no personal data — so a late retry is answered as the repeat it is
 * instead of storing the erased record again. Idempotent.
 */
export function migrateFingerprints(db: Database.Database, prepare: (sql: string) => Database.Statement): void {
  const columns = prepare('PRAGMA table_info(records)').all() as Array<{ name: string }>
  if (!columns.some((c) => c.name === 'fingerprint')) db.exec('ALTER TABLE records ADD COLUMN fingerprint TEXT')
  db.exec(`CREATE TABLE IF NOT EXISTS idempotency_tombstones (
  bot TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT,
  record_id INTEGER NOT NULL,
  PRIMARY KEY (bot, idempotency_key)
)`)
}

/** Keeps the keys of the records about to be deleted (ids in the `doomed` table), for {@link migrateFingerprints}. */
export const TOMBSTONE_DOOMED = `INSERT OR REPLACE INTO idempotency_tombstones (bot, idempotency_key, fingerprint, record_id)
  SELECT bot, idempotency_key, fingerprint, id FROM records
  WHERE id IN (SELECT id FROM doomed) AND idempotency_key IS NOT NULL`
