// A database from before the handoff summary (PostgreSQL migration 27, SQLite step 23): the
// operators' actions already in its audit log are resolved to their users, the sessions they fall
// in marked and counted per hour when it opens — the overview's handoffs are what they were when
// it read the audit log itself — and actions and messages after it go on counting.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, type RecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { item } from './store-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { POSTGRES_LOGIC_HERE, type PostgresServer, startPostgres } from './support/postgres'

const H = 3_600_000
const MIN = 60_000
const T = Date.UTC(2026, 2, 2)
const ALL = { from: T, to: T + 7 * 24 * H, tz: 'UTC' }

const inc = (user: string, at: number) =>
  item('shop', 'universal', 'incoming', { userId: user, text: `hi from ${user}` }, { at })

/**
 * Four users' sessions; operator actions in two of them (two in one), one past a session's gap,
 * one of no handoff kind: 2 sessions handed off of 5.
 */
async function seed(store: RecordStore): Promise<void> {
  for (const i of [
    inc('ann', T + 10 * H),
    inc('ann', T + 10 * H + 10 * MIN),
    inc('ann', T + 14 * H),
    inc('ben', T + 11 * H),
    inc('cat', T + 12 * H),
    inc('dan', T + 13 * H),
  ])
    await store.add(i.record, i.messages)
  const act = (action: string, target: string, ts: number) =>
    store.addAudit({ ts, actor: 'op', action, bot: 'shop', target, detail: null })
  await act('pause', 'ann', T + 10 * H + 15 * MIN)
  await act('operator-message', 'ann', T + 10 * H + 16 * MIN)
  await act('claim', 'ben', T + 11 * H + 5 * MIN)
  // Past cat's gap: in no session.
  await act('pause', 'cat', T + 12 * H + 45 * MIN)
  await act('resume', 'dan', T + 13 * H + 5 * MIN)
}

async function expectGoesOn(store: RecordStore): Promise<void> {
  try {
    expect(await store.overview(ALL)).toMatchObject({ sessions: 5, handoffs: 2 })
    // cat's late message makes a session that covers the pause; dan's operator writes.
    const late = inc('cat', T + 12 * H + 40 * MIN)
    await store.add(late.record, late.messages)
    await store.addAudit({
      ts: T + 13 * H + 6 * MIN,
      actor: 'op',
      action: 'operator-message',
      bot: 'shop',
      target: 'dan',
      detail: null,
    })
    expect(await store.overview(ALL)).toMatchObject({ sessions: 6, handoffs: 4 })
  } finally {
    await store.close()
  }
}

let server: PostgresServer | undefined
afterAll(async () => {
  await server?.destroy()
})

describe('upgrading to the handoff summary', () => {
  it('SQLite: step 23 derives it from the audit log and the sessions', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-handoffs-')), 'old.db')
    const store = new SqliteRecordStore(file)
    await seed(store)
    expect(await store.overview(ALL)).toMatchObject({ sessions: 5, handoffs: 2 })
    await store.close()
    // As the file of the version before: no marks, no hours, no column.
    const db = openKeptSqlite(file)
    db.exec('DROP TABLE handoff_marks; DROP TABLE rollup_handoffs; ALTER TABLE sessions DROP COLUMN handoff')
    db.pragma('user_version = 22')
    db.close()
    await expectGoesOn(new SqliteRecordStore(file))
  })

  it.skipIf(!POSTGRES_LOGIC_HERE)(
    'PostgreSQL: migration 27 derives it from the audit log and the sessions',
    async () => {
      server = await startPostgres()
      const url = await server.createDatabase()
      const store = await PgRecordStore.open(url, { listen: false })
      await seed(store)
      expect(await store.overview(ALL)).toMatchObject({ sessions: 5, handoffs: 2 })
      await store.close()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`DROP TABLE convotrack_handoff_marks, convotrack_rollup_handoffs;
        ALTER TABLE convotrack_sessions DROP COLUMN handoff;
        DELETE FROM convotrack_migrations WHERE version = 27`)
      } finally {
        await client.end()
      }
      await expectGoesOn(await PgRecordStore.open(url, { listen: false }))
    },
  )
})
