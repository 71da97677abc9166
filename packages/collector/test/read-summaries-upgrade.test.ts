// A database that holds history before a derived summary existed opens with it derived from the
// summaries it already has, and the reports equal a full recount from the first read on: the
// NotHandled phrase and segment summaries (PostgreSQL migration 10, SQLite 8); the conversation
// starts and NotHandled phrase days (PostgreSQL 14, SQLite 12); users first and last seen per hour
// (PostgreSQL 17, SQLite 15); users per local day and their previous active day (PostgreSQL 18,
// SQLite 16). And the funnel spans' index holding the last time (PostgreSQL 19, SQLite 17) takes the
// old one's place, the funnels equal to a recount. Each user's UTC days with their neighbours
// (PostgreSQL 20, SQLite 18): one row per user-day of the stored messages, before and after an erasure.
// NotHandled inputs per hour, every phrase together (PostgreSQL 26, SQLite 22): the overview's count.
// Intents and events per UTC day (PostgreSQL 30, SQLite 25): the intents and events reports.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, type RecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { CONVERSATION_STARTS } from '../src/reports/conversation-starts'
import { NH_HOURS, NH_PHRASE_DAYS } from '../src/reports/nh-phrase-days'
import { READ_SUMMARIES, USER_SEEN } from '../src/reports/read-summary-tables'
import type { Row } from '../src/reports/report-queries'
import { DAY_LINKS, PREV_DAYS } from '../src/reports/retention-cohorts'
import { EVENT_DAYS, INTENT_DAYS, type RollupSpec } from '../src/reports/rollup-tables'
import { migrateSqlite, SQLITE_MIGRATIONS } from '../src/store/sqlite/sqlite-migrations'
import { RECOUNT_HERE } from './analytics-recount'
import { expectFunnelRecount } from './funnel-recount'
import { allMessages, expectMatchesRecount, load, traffic } from './rollup-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { POSTGRES_LOGIC_HERE, type PostgresServer, startPostgres } from './support/postgres'

const HOUR = 3_600_000

// One PostgreSQL server for every step's test (each gets its own database), started by the first.
let server: Promise<PostgresServer> | undefined
const postgresServer = () => {
  server ??= startPostgres()
  return server
}
afterAll(async () => {
  await (await server)?.destroy()
})
const BASE = Date.UTC(2026, 2, 1)

/**
 * The upgraded store's reports equal a recount, and ingest and erasure go on from the derived rows;
 * `funnels`: its funnels too (on the other Node lines: the reports of all time).
 */
async function expectDerived(upgraded: RecordStore, funnels = false) {
  try {
    expect((await upgraded.notHandled({})).length).toBeGreaterThan(0)
    expect((await upgraded.segments({})).length).toBeGreaterThan(0)
    expect((await upgraded.overview({})).conversations).toBeGreaterThan(0)
    await expectMatchesRecount(upgraded)
    // The other Node lines: the step ran on their better-sqlite3 build and its reports equal a
    // recount; the ranges, funnels and the writes after it prove SQL, the system Node's (RECOUNT_HERE).
    if (!RECOUNT_HERE) return
    await expectMatchesRecount(upgraded, { bot: 'shop', from: BASE + 20 * HOUR })
    await expectMatchesRecount(upgraded, { from: BASE + 5 * HOUR, to: BASE + 30 * HOUR })
    // A whole UTC day with messages after it: the previous-day rows.
    await expectMatchesRecount(upgraded, { from: BASE + 24 * HOUR, to: BASE + 48 * HOUR, tz: 'UTC' })
    // Edges inside days around a whole one: the day links.
    await expectMatchesRecount(upgraded, { from: BASE + 5 * HOUR, to: BASE + 54 * HOUR, tz: 'UTC' })
    const day = [{ from: BASE + 24 * HOUR, to: BASE + 48 * HOUR }]
    if (funnels) await expectFunnelRecount(upgraded, await allMessages(upgraded), day)
    await load(upgraded, traffic(100, 12, 'later'))
    await upgraded.eraseUser('help', 'u2')
    await expectMatchesRecount(upgraded)
    await expectMatchesRecount(upgraded, { from: BASE, to: BASE + 48 * HOUR, tz: 'UTC' })
    await expectMatchesRecount(upgraded, { from: BASE + 5 * HOUR, to: BASE + 54 * HOUR, tz: 'UTC' })
    if (funnels) await expectFunnelRecount(upgraded, await allMessages(upgraded), day)
  } finally {
    await upgraded.close()
  }
}

/**
 * The day links hold one row per user and UTC day of the stored messages (`t`: a table's name on
 * the database; `day`: SQL of a message's UTC day): none of an erased user's days is left.
 */
const LINKS_CHECK = (t: (name: string) => string, day: string) =>
  `SELECT (SELECT count(*) FROM ${t(DAY_LINKS.name)}) AS links,
    (SELECT count(*) FROM (SELECT DISTINCT bot, user_id, ${day} FROM ${t('messages')} WHERE user_id <> '') m) AS days`

/** `user_segments` as it was before users first and last seen per hour: users with metadata only. */
const WITHOUT_METADATA = "DELETE FROM user_segments WHERE pairs = '[]'"

/** The spans' index now: on (step, bot, user) with both times (step 21 / migration 22). */
const SPANS_INDEX = 'rollup_spans_kind_name_bot_user_id'

/**
 * The spans' index as it was before a step (`t`: a table's name on the database): on these columns
 * in place of today's — (step, first time) before step 17 / migration 19, with the last time
 * before step 21 / migration 22.
 */
const spansIndexBefore = (cols: string[]) => (t: (name: string) => string) =>
  `DROP INDEX ${t(SPANS_INDEX)};
  CREATE INDEX ${t('rollup_spans')}_${cols.join('_')} ON ${t('rollup_spans')} (${cols.join(', ')})`

/** The day links before step 19 / migration 21: without the indexes by neighbour day. */
const LINKS_INDEXES_BEFORE = (t: (name: string) => string) =>
  `DROP INDEX ${t(DAY_LINKS.name)}_day_next_day; DROP INDEX ${t(DAY_LINKS.name)}_day_prev_day`

/**
 * The summaries a step derives, its number on each database, and what else the database before it
 * lacked: `before`, rows (a DELETE that must change some); `schema`, SQL putting the schema back,
 * and the indexes the step makes (`funnels`: the upgraded store's funnels equal a recount too).
 */
const STEPS: Array<{
  name: string
  tables: readonly RollupSpec[]
  sqlite: number
  postgres: number
  before?: string
  schema?: { sql: (t: (name: string) => string) => string; indexes: readonly string[]; funnels?: true }
}> = [
  { name: 'NotHandled phrases and segments', tables: READ_SUMMARIES, sqlite: 8, postgres: 10 },
  {
    name: 'conversation starts and NotHandled phrase days',
    tables: [CONVERSATION_STARTS, NH_PHRASE_DAYS],
    sqlite: 12,
    postgres: 14,
  },
  // Before it, only users with metadata had a `user_segments` row.
  { name: 'users first and last seen', tables: [USER_SEEN], sqlite: 15, postgres: 17, before: WITHOUT_METADATA },
  { name: 'users per local day and their previous active day', tables: [PREV_DAYS], sqlite: 16, postgres: 18 },
  { name: "each user's UTC days with their neighbours", tables: [DAY_LINKS], sqlite: 18, postgres: 20 },
  { name: 'NotHandled inputs per hour', tables: [NH_HOURS], sqlite: 22, postgres: 26 },
  { name: 'intents and events per UTC day', tables: [INTENT_DAYS, EVENT_DAYS], sqlite: 25, postgres: 30 },
  {
    name: "funnel spans' index with the last time",
    tables: [],
    sqlite: 17,
    postgres: 19,
    schema: {
      sql: spansIndexBefore(['kind', 'name', 'first_ts', 'bot', 'user_id']),
      indexes: [SPANS_INDEX],
      funnels: true,
    },
  },
  {
    name: "funnel spans' index in user order",
    tables: [],
    sqlite: 21,
    postgres: 22,
    schema: {
      sql: spansIndexBefore(['kind', 'name', 'first_ts', 'bot', 'user_id', 'last_ts']),
      indexes: [SPANS_INDEX],
      funnels: true,
    },
  },
  {
    name: "day links' indexes by neighbour day",
    tables: [],
    sqlite: 19,
    postgres: 21,
    schema: {
      sql: LINKS_INDEXES_BEFORE,
      indexes: [`${DAY_LINKS.name}_day_next_day`, `${DAY_LINKS.name}_day_prev_day`],
    },
  },
]

describe.each(STEPS)('upgrading to the $name', ({ tables, sqlite, postgres, before, schema }) => {
  it(`SQLite: migration ${sqlite} derives them from the stored summaries`, async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-read-summaries-')), 'old.db')
    const store = new SqliteRecordStore(file)
    await load(store, traffic(400, 11))
    await store.eraseUser('shop', 'u4')
    await store.close()
    // As a file of the version before: without the tables (a later open makes them again).
    const db = openKeptSqlite(file)
    for (const spec of tables) db.exec(`DROP TABLE ${spec.name}`)
    if (before) expect(db.prepare(before).run().changes).toBeGreaterThan(0)
    if (schema) db.exec(schema.sql((name) => name))
    const indexes = () => db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").pluck().all()
    // The step alone, as the file before it would run it (later steps are there already).
    const latest = Number(db.pragma('user_version', { simple: true }))
    db.exec(`PRAGMA user_version = ${sqlite - 1}`)
    const step = SQLITE_MIGRATIONS.filter((m) => m.version === sqlite)
    expect(
      migrateSqlite(
        db,
        (v) => v,
        (q) => {
          const st = db.prepare(q.sql)
          if (st.reader) return st.all(...q.params) as Row[]
          st.run(...q.params)
          return []
        },
        step,
      ),
    ).toEqual([sqlite])
    if (schema) expect(indexes()).toEqual(expect.arrayContaining([...schema.indexes]))
    // No index the step replaced is left: the ones there are those of a file made now.
    expect(indexes().filter((n) => /^rollup_spans_/.test(String(n)))).toEqual([SPANS_INDEX])
    db.exec(`PRAGMA user_version = ${latest}`)
    db.close()
    await expectDerived(new SqliteRecordStore(file), schema?.funnels)
    const after = openKeptSqlite(file)
    const count = after.prepare(LINKS_CHECK((name) => name, 'ts / 86400000')).get() as { links: number; days: number }
    after.close()
    expect(count.links).toBeGreaterThan(0)
    expect(count.links).toBe(count.days)
  })

  describe.skipIf(!POSTGRES_LOGIC_HERE)('PostgreSQL', () => {
    it(`migration ${postgres} derives them from the stored summaries`, async () => {
      const url = await (await postgresServer()).createDatabase()
      const store = await PgRecordStore.open(url, { listen: false })
      await load(store, traffic(400, 11))
      await store.eraseUser('shop', 'u4')
      await store.close()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        for (const spec of tables) await client.query(`DROP TABLE convotrack_${spec.name}`)
        if (before)
          expect((await client.query(before.replace('FROM ', 'FROM convotrack_'))).rowCount).toBeGreaterThan(0)
        if (schema) await client.query(schema.sql((name) => `convotrack_${name}`))
        await client.query('DELETE FROM convotrack_migrations WHERE version = $1', [postgres])
        const upgraded = await PgRecordStore.open(url, { listen: false })
        const spans = await client.query<{ indexname: string }>(
          "SELECT indexname FROM pg_indexes WHERE tablename = 'convotrack_rollup_spans' AND indexname NOT LIKE '%pkey'",
        )
        expect(spans.rows.map((r) => r.indexname)).toEqual([`convotrack_${SPANS_INDEX}`])
        const all = await client.query<{ indexname: string }>('SELECT indexname FROM pg_indexes')
        if (schema)
          expect(all.rows.map((r) => r.indexname)).toEqual(
            expect.arrayContaining(schema.indexes.map((i) => `convotrack_${i}`)),
          )
        await expectDerived(upgraded, schema?.funnels)
        const count = await client.query(LINKS_CHECK((name) => `convotrack_${name}`, 'ts / 86400000'))
        expect(Number(count.rows[0].links)).toBeGreaterThan(0)
        expect(Number(count.rows[0].links)).toBe(Number(count.rows[0].days))
      } finally {
        await client.end()
      }
    })
  })
})
