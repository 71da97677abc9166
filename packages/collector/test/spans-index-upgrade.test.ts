// A database whose funnel spans have the index before it held the last time (PostgreSQL
// migration 19, SQLite step 17) opens with the covering index in its place, and its funnels equal
// a recount before and after more ingest.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, type RecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateSqlite, SQLITE_MIGRATIONS } from '../src/store/sqlite/sqlite-migrations'
import { expectFunnelRecount } from './funnel-recount'
import { allMessages, load, traffic } from './rollup-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { type PostgresServer, startPostgres } from './support/postgres'

const BEFORE = 'rollup_spans_kind_name_first_ts_bot_user_id'
const AFTER = 'rollup_spans_kind_name_first_ts_bot_user_id_last_ts'
const DAY = 86_400_000
const BASE = Date.UTC(2026, 2, 1)
const RANGES = [{ from: BASE + DAY, to: BASE + 2 * DAY }]

async function expectFunnels(store: RecordStore) {
  try {
    await expectFunnelRecount(store, await allMessages(store), RANGES)
    await load(store, traffic(100, 22, 'later'))
    await expectFunnelRecount(store, await allMessages(store), RANGES)
  } finally {
    await store.close()
  }
}

describe('the funnel spans index holds the last time', () => {
  it('SQLite: step 17 replaces the index', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-spans-')), 'old.db')
    const store = new SqliteRecordStore(file)
    await load(store, traffic(300, 21))
    await store.close()
    // As the file was at step 16: the index without the last time.
    const db = openKeptSqlite(file)
    db.exec(`DROP INDEX ${AFTER}; CREATE INDEX ${BEFORE} ON rollup_spans (kind, name, first_ts, bot, user_id)`)
    const latest = Number(db.pragma('user_version', { simple: true }))
    db.exec('PRAGMA user_version = 16')
    const step = SQLITE_MIGRATIONS.filter((m) => m.version === 17)
    expect(
      migrateSqlite(
        db,
        (v) => v,
        () => [],
        step,
      ),
    ).toEqual([17])
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rollup_spans'")
      .pluck()
      .all()
    expect(indexes).toContain(AFTER)
    expect(indexes).not.toContain(BEFORE)
    db.exec(`PRAGMA user_version = ${latest}`)
    db.close()
    await expectFunnels(new SqliteRecordStore(file))
  })

  describe('PostgreSQL', () => {
    let server: PostgresServer
    beforeAll(async () => {
      server = await startPostgres()
    }, 60_000)
    afterAll(async () => {
      await server?.destroy()
    })

    it('migration 19 replaces the index', async () => {
      const url = await server.createDatabase()
      const store = await PgRecordStore.open(url, { listen: false })
      await load(store, traffic(300, 21))
      await store.close()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      const indexes = async () =>
        (
          await client.query<{ indexname: string }>(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'convotrack_rollup_spans'",
          )
        ).rows.map((r) => r.indexname)
      try {
        await client.query(
          `DROP INDEX convotrack_${AFTER}; CREATE INDEX convotrack_${BEFORE} ON convotrack_rollup_spans (kind, name, first_ts, bot, user_id)`,
        )
        await client.query('DELETE FROM convotrack_migrations WHERE version = 19')
        const upgraded = await PgRecordStore.open(url, { listen: false })
        expect(await indexes()).toContain(`convotrack_${AFTER}`)
        expect(await indexes()).not.toContain(`convotrack_${BEFORE}`)
        await expectFunnels(upgraded)
      } finally {
        await client.end()
      }
    })
  })
})
