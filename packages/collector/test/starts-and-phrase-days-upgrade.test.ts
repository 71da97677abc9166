// A database that holds history before the conversation-starts and NotHandled phrase-days
// summaries existed (SQLite user_version 12, PostgreSQL migration 14) opens with them derived from
// the conversations' rows and the phrase hours: the overview's conversations and the NotHandled
// report equal a recount from the first read on, and ingest and erasure go on from the derived rows.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, type RecordStore, SqliteRecordStore } from '@convotrack/collector'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONVERSATION_STARTS } from '../src/reports/conversation-starts'
import type { Query } from '../src/reports/dialect'
import { NH_PHRASE_DAYS } from '../src/reports/nh-phrase-days'
import type { Row } from '../src/reports/report-queries'
import { migrateSqlite, SQLITE_MIGRATIONS } from '../src/store/sqlite/sqlite-migrations'
import { allMessages, expectMatchesRecount, load, overviewRecount, traffic } from './rollup-contract'
import { type PostgresServer, startPostgres } from './support/postgres'

const HOUR = 3_600_000
const BASE = Date.UTC(2026, 2, 1)

async function expectDerived(upgraded: RecordStore) {
  try {
    expect(await upgraded.overview({})).toMatchObject(overviewRecount(await allMessages(upgraded), {}))
    expect((await upgraded.overview({})).conversations).toBeGreaterThan(0)
    expect((await upgraded.notHandled({})).length).toBeGreaterThan(0)
    await expectMatchesRecount(upgraded)
    await expectMatchesRecount(upgraded, { bot: 'shop', from: BASE + 20 * HOUR })
    await expectMatchesRecount(upgraded, { from: BASE + 5 * HOUR, to: BASE + 30 * HOUR })
    // Older records into the derived threads move their starts; erasure takes them back.
    await load(
      upgraded,
      traffic(150, 12, 'later').map((i) => ({
        ...i,
        record: { ...i.record, eventTs: (i.record.eventTs ?? 0) - HOUR },
      })),
    )
    await upgraded.eraseUser('help', 'u2')
    await expectMatchesRecount(upgraded)
  } finally {
    await upgraded.close()
  }
}

describe('upgrading to the conversation-starts and phrase-days summaries', () => {
  it('SQLite: user_version 12 derives them', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-conversation-starts-')), 'old.db')
    const store = new SqliteRecordStore(file)
    await load(store, traffic(400, 11))
    await store.eraseUser('shop', 'u4')
    await store.close()
    // As a file of the version before: without the tables.
    const db = new Database(file)
    for (const spec of [CONVERSATION_STARTS, NH_PHRASE_DAYS]) db.exec(`DROP TABLE ${spec.name}`)
    // Step 12 alone, as the file before it would run it (other steps are there already).
    const latest = Number(db.pragma('user_version', { simple: true }))
    db.exec('PRAGMA user_version = 11')
    const run = (q: Query): Row[] => {
      const st = db.prepare(q.sql)
      if (st.reader) return st.all(...q.params) as Row[]
      st.run(...q.params)
      return []
    }
    const step = SQLITE_MIGRATIONS.filter((m) => m.version === 12)
    expect(migrateSqlite(db, (v) => v, run, step)).toEqual([12])
    db.exec(`PRAGMA user_version = ${latest}`)
    db.close()
    await expectDerived(new SqliteRecordStore(file))
  })

  describe('PostgreSQL', () => {
    let server: PostgresServer
    beforeAll(async () => {
      server = await startPostgres()
    }, 60_000)
    afterAll(async () => {
      await server?.destroy()
    })

    it('migration 14 derives them', async () => {
      const url = await server.createDatabase()
      const store = await PgRecordStore.open(url, { listen: false })
      await load(store, traffic(400, 11))
      await store.eraseUser('shop', 'u4')
      await store.close()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        for (const spec of [CONVERSATION_STARTS, NH_PHRASE_DAYS])
          await client.query(`DROP TABLE convotrack_${spec.name}`)
        await client.query('DELETE FROM convotrack_migrations WHERE version = 14')
      } finally {
        await client.end()
      }
      await expectDerived(await PgRecordStore.open(url, { listen: false }))
    })
  })
})
