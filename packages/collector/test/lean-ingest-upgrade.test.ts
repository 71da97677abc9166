// A store made before the lean ingest schema (SQLite step 11, PostgreSQL migration 13) upgrades
// on open with every summary row kept: the reports equal a full recount before and after more
// records go in, the tables have their new shape, and opening again changes nothing.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, SqliteRecordStore } from '@convotrack/collector'
import type Database from 'better-sqlite3'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { USER_HOURS } from '../src/reports/analytics-tables'
import { sqliteDialect } from '../src/reports/dialect'
import { type RollupSpec, rollupDdl, USER_DAYS } from '../src/reports/rollup-tables'
import { LEAN_TABLES } from '../src/store/sqlite/sqlite-lean-ingest'
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/sqlite-migrations'
import { expectAnalyticsRecount, RECOUNT_HERE } from './analytics-recount'
import { expectMatchesRecount, load, traffic } from './rollup-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { POSTGRES_LOGIC_HERE, startPostgres } from './support/postgres'

/** The users per day and hour as step 10 / migration 12 made them: keyed by bot first, with a time-first copy. */
const OLD_KEYS = new Map<RollupSpec, { keys: string[]; index: string[] }>([
  [USER_DAYS, { keys: ['bot', 'day', 'user_id'], index: ['day', 'bot', 'user_id'] }],
  [USER_HOURS, { keys: ['bot', 'hour', 'user_id'], index: ['hour', 'bot', 'user_id'] }],
])

/**
 * Each lean table's rows, in a fixed order; sums of fractions to 12 significant digits (a later
 * step that derives a table again from another, such as the intents' days from their hours, adds
 * the same confidences in another order).
 */
function snapshot(db: Database.Database): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {}
  const round = (v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v)
  for (const spec of LEAN_TABLES) {
    const cols = Object.keys(spec.columns)
    out[spec.name] = (
      db.prepare(`SELECT ${cols.join(', ')} FROM ${spec.name} ORDER BY ${cols.join(', ')}`).all() as Array<
        Record<string, unknown>
      >
    ).map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, round(v)])))
  }
  return out
}

/** Turns a step-11 file back into what step 10 left: rowid tables, the old keys and indexes. */
function backToStep10(db: Database.Database): void {
  db.transaction(() => {
    for (const spec of LEAN_TABLES) {
      const old = OLD_KEYS.get(spec)
      const was: RollupSpec = {
        ...spec,
        withoutRowid: undefined,
        ...(old ? { keys: old.keys, indexes: [old.index] } : {}),
      }
      const indexes = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
        .pluck()
        .all(spec.name) as string[]
      for (const ix of indexes) db.exec(`DROP INDEX ${ix}`)
      db.exec(`ALTER TABLE ${spec.name} RENAME TO ${spec.name}__lean`)
      db.exec(rollupDdl(sqliteDialect, [was]))
      db.exec(`INSERT INTO ${spec.name} SELECT * FROM ${spec.name}__lean`)
      db.exec(`DROP TABLE ${spec.name}__lean`)
    }
    db.pragma('user_version = 10')
  })()
}

const tableSql = (db: Database.Database, name: string) =>
  String(db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(name))
const indexNames = (db: Database.Database, table: string) =>
  db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name")
    .pluck()
    .all(table)

describe('upgrading to the lean ingest schema', () => {
  it('SQLite: step 11 drops messages_thread and rebuilds the narrow summaries WITHOUT ROWID, every row and other index kept', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-lean-')), 'old.db')
    let store = new SqliteRecordStore(file)
    await load(store, traffic(300, 11))
    await store.close()
    let db = openKeptSqlite(file)
    const rows = snapshot(db)
    for (const t of ['rollup_sessions', 'retention_user_periods', 'rollup_user_days', 'rollup_user_hours'])
      expect(rows[t]?.length, t).toBeGreaterThan(0)
    const sessionsIndexes = indexNames(db, 'sessions')
    backToStep10(db)
    expect(tableSql(db, 'sessions')).not.toMatch(/WITHOUT ROWID/)
    expect(indexNames(db, 'rollup_user_days')).toEqual(['rollup_user_days_day_bot_user_id'])
    db.exec('CREATE INDEX messages_thread ON messages (bot, thread, id)')
    db.close()

    store = new SqliteRecordStore(file)
    try {
      await expectMatchesRecount(store)
      // The analytics recount proves SQL: the system Node's (RECOUNT_HERE).
      if (RECOUNT_HERE) await expectAnalyticsRecount(store)
      await load(store, traffic(150, 12, 'later'))
      await expectMatchesRecount(store)
      if (RECOUNT_HERE) await expectAnalyticsRecount(store)
    } finally {
      await store.close()
    }
    db = openKeptSqlite(file)
    try {
      // Step 11 and every later one.
      expect(db.pragma('user_version', { simple: true })).toBe(Math.max(...SQLITE_MIGRATIONS.map((m) => m.version)))
      for (const spec of LEAN_TABLES) expect(tableSql(db, spec.name), spec.name).toMatch(/\) WITHOUT ROWID$/)
      expect(tableSql(db, 'rollup_user_days')).toMatch(/PRIMARY KEY \(day, bot, user_id\)/)
      expect(tableSql(db, 'rollup_user_hours')).toMatch(/PRIMARY KEY \(hour, bot, user_id\)/)
      // The copies of the key went; every other index (those of the specs and of other steps) stayed.
      expect(indexNames(db, 'rollup_user_days')).toEqual([])
      expect(indexNames(db, 'rollup_user_hours')).toEqual([])
      expect(indexNames(db, 'sessions')).toEqual(sessionsIndexes)
      expect(indexNames(db, 'rollup_hourly')).toEqual(['rollup_hourly_hour'])
      // The look-backs' arrival-order index went; the transcripts' event-time one stayed.
      expect(indexNames(db, 'messages')).not.toContain('messages_thread')
      expect(indexNames(db, 'messages')).toContain('messages_thread_ts')
      // Wide rows stay rowid tables.
      expect(tableSql(db, 'conversation_summaries')).not.toMatch(/WITHOUT ROWID/)
    } finally {
      db.close()
    }
    // The rows step 11 copied are the rows step 10 held (read before the later load went in).
    const copy = join(mkdtempSync(join(tmpdir(), 'ct-lean-')), 'again.db')
    store = new SqliteRecordStore(copy)
    await load(store, traffic(300, 11))
    await store.close()
    db = openKeptSqlite(copy)
    try {
      expect(snapshot(db)).toEqual(rows)
      backToStep10(db)
      db.close()
      await new SqliteRecordStore(copy).close()
      db = openKeptSqlite(copy)
      expect(snapshot(db)).toEqual(rows)
      // Opening again applies nothing.
      db.close()
      await new SqliteRecordStore(copy).close()
      db = openKeptSqlite(copy)
      expect(snapshot(db)).toEqual(rows)
    } finally {
      db.close()
    }
  }, 120_000)

  it.skipIf(!POSTGRES_LOGIC_HERE)(
    'PostgreSQL: migration 13 drops the foreign-key check and re-keys the users per day and hour',
    async () => {
      const server = await startPostgres()
      try {
        const url = await server.createDatabase()
        let store = await PgRecordStore.open(url, { listen: false })
        await load(store, traffic(300, 13))
        await store.close()
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        const shape = async () => ({
          fk: (
            await client.query(
              "SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'convotrack_messages'::regclass AND contype = 'f'",
            )
          ).rows[0].n,
          indexes: (
            await client.query(
              `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS def FROM pg_index
             WHERE indrelid IN ('convotrack_rollup_user_days'::regclass, 'convotrack_rollup_user_hours'::regclass) ORDER BY 1`,
            )
          ).rows.map((r) => `${r.name}: ${String(r.def).replace(/^.* USING btree /, '')}`),
        })
        try {
          const fresh = await shape()
          // Migration 12's shape, and the step not done.
          await client.query(`
          ALTER TABLE convotrack_messages ADD CONSTRAINT convotrack_messages_record_id_fkey
            FOREIGN KEY (record_id) REFERENCES convotrack_records (id);
          ALTER TABLE convotrack_rollup_user_days DROP CONSTRAINT convotrack_rollup_user_days_pkey;
          ALTER TABLE convotrack_rollup_user_days ADD PRIMARY KEY (bot, day, user_id);
          CREATE INDEX convotrack_rollup_user_days_day_bot_user_id ON convotrack_rollup_user_days (day, bot, user_id);
          ALTER TABLE convotrack_rollup_user_hours DROP CONSTRAINT convotrack_rollup_user_hours_pkey;
          ALTER TABLE convotrack_rollup_user_hours ADD PRIMARY KEY (bot, hour, user_id);
          CREATE INDEX convotrack_rollup_user_hours_hour_bot_user_id ON convotrack_rollup_user_hours (hour, bot, user_id);
          DELETE FROM convotrack_migrations WHERE version = 13;`)
          expect((await shape()).fk).toBe(1)
          store = await PgRecordStore.open(url, { listen: false })
          try {
            await expectMatchesRecount(store)
            await expectAnalyticsRecount(store)
            await load(store, traffic(150, 14, 'later'))
            await expectMatchesRecount(store)
            await expectAnalyticsRecount(store)
            // Erasure and retention delete messages before their records: no foreign key needed for them.
            const erased = await store.eraseUser('shop', 'u3')
            expect(erased.removed).toBeGreaterThan(0)
            while ((await store.deleteOlderThan({ before: Date.UTC(2027, 0, 1), limit: 40 })) > 0) {}
            expect(await client.query('SELECT count(*)::int AS n FROM convotrack_messages')).toMatchObject({
              rows: [{ n: 0 }],
            })
            await expectMatchesRecount(store)
          } finally {
            await store.close()
          }
          const upgraded = await shape()
          expect(upgraded).toEqual(fresh)
          expect(upgraded).toEqual({
            fk: 0,
            indexes: [
              'convotrack_rollup_user_days_pkey: (day, bot, user_id)',
              'convotrack_rollup_user_hours_pkey: (hour, bot, user_id)',
            ],
          })
          const done = await client.query('SELECT version FROM convotrack_migrations WHERE version = 13')
          expect(done.rowCount).toBe(1)
        } finally {
          await client.end()
        }
      } finally {
        await server.destroy()
      }
    },
    180_000,
  )
})
