// An existing database upgrades: a SQLite file or a PostgreSQL database made before the report
// summaries (old schema, rows stored the old way) opens with its summaries derived from the rows
// it holds, so every report equals a full recount from the first read on. Reopening changes nothing.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, PG_MIGRATIONS } from '../src/store/postgres/pg-migrations'
import { migrateSqlite, SQLITE_MIGRATIONS } from '../src/store/sqlite/sqlite-migrations'
import { expectAnalyticsRecount } from './analytics-recount'
import { expectMatchesRecount } from './rollup-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { POSTGRES_LOGIC_HERE, type PostgresServer, startPostgres } from './support/postgres'

const T0 = Date.UTC(2026, 0, 5, 10)
/** Rows as the old stores wrote them: `ts` is the receive time; an outgoing NotHandled reply after its input. */
const OLD_ROWS: Array<[number, string, string, string, string, string | null, string | null, number]> = [
  // id, bot, direction, user, text, intent, event, ts
  [1, 'shop', 'incoming', 'ada', 'Where is my order?', 'NotHandled', null, T0],
  [2, 'shop', 'incoming', 'bob', 'blorp', null, null, T0 + 1000],
  [3, 'shop', 'outgoing', 'bob', 'Sorry?', 'NotHandled', null, T0 + 2000],
  [4, 'shop', 'incoming', 'ada', 'buy', 'buy', null, T0 + 3_600_000],
  [5, 'help', 'event', 'cy', 'signup', null, 'customEvent', T0 + 7_200_000],
]

/** Retention cohorts and path prefixes are derived too (migrations 9 / 11 and the first start). */
const ANALYTICS_RANGES = [{ from: T0 - 40 * 86_400_000, to: T0 + 40 * 86_400_000 }]
/** An answer's LLM tokens, as `POST /v1/traces` writes them (the usage summary is derived from them). */
const LLM = { model: 'gpt-x', usage: { inputTokens: 12, outputTokens: 3 } }
const rawOf = (text: string, userId: string, direction: string, extra: object = {}) =>
  JSON.stringify({ text, userId, ...extra, ...(direction === 'outgoing' ? { platformJson: LLM } : {}) })
const USAGE = [{ day: '2026-01-05', model: 'gpt-x', messages: 1, conversations: 1, inputTokens: 12, outputTokens: 3 }]

function insertOld(exec: (sql: string, params: unknown[]) => unknown, table: (n: string) => string) {
  for (const [id, bot, direction, user, text, intent, event, ts] of OLD_ROWS) {
    const type = direction
    exec(
      `INSERT INTO ${table('records')} (id, bot, platform, type, v, received_at, raw) VALUES (?, ?, 'universal', ?, '11.1.0-rest', ?, ?)`,
      [id, bot, type, ts, rawOf(text, user, direction)],
    )
    exec(
      `INSERT INTO ${table('messages')} (id, record_id, bot, platform, direction, user_id, thread, text, intent, event_type, event_name, ts)
       VALUES (?, ?, ?, 'universal', ?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, id, bot, direction, user, user, text, intent, event, event ? text : null, ts],
    )
  }
}

describe('upgrading a database made before the report summaries', () => {
  it('SQLite: migration 2 derives the summaries; messages keep their time as event and receive time', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-upgrade-')), 'old.db')
    const db = openKeptSqlite(file)
    migrateSqlite(
      db,
      (v) => v,
      () => [],
      SQLITE_MIGRATIONS.slice(0, 1),
    )
    insertOld(
      (sql, params) => db.prepare(sql).run(...params),
      (n) => n,
    )
    db.close()
    const store = new SqliteRecordStore(file)
    try {
      expect(await store.notHandled({})).toEqual([
        { text: 'blorp', count: 1, users: 1, lastTs: T0 + 1000, bots: ['shop'] },
        { text: 'Where is my order?', count: 1, users: 1, lastTs: T0, bots: ['shop'] },
      ])
      expect(await store.counts({})).toEqual({ records: 5, messages: 5 })
      expect(await store.usage({})).toEqual(USAGE)
      await expectMatchesRecount(store)
      await expectAnalyticsRecount(store, ANALYTICS_RANGES)
      const [first] = await store.transcript('shop', 'ada')
      expect(first).toMatchObject({ ts: T0, receivedAt: T0 })
    } finally {
      await store.close()
    }
    const again = new SqliteRecordStore(file)
    try {
      await expectMatchesRecount(again)
    } finally {
      await again.close()
    }
    const check = openKeptSqlite(file, { readonly: true })
    expect(check.prepare('PRAGMA user_version').pluck().get()).toBe(SQLITE_MIGRATIONS.at(-1)?.version)
    check.close()
  })

  describe.skipIf(!POSTGRES_LOGIC_HERE)('PostgreSQL', () => {
    let server: PostgresServer
    beforeAll(async () => {
      server = await startPostgres()
    }, 60_000)
    afterAll(async () => {
      await server?.destroy()
    })

    it('migration 3 derives the summaries in the same transaction', async () => {
      const url = await server.createDatabase()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        expect(await migrate(client, PG_MIGRATIONS.slice(0, 2))).toEqual([1, 2])
        for (const [i, row] of OLD_ROWS.entries()) {
          const [id, bot, direction, user, text, intent, event, ts] = row
          await client.query(
            `INSERT INTO convotrack_records (id, bot, platform, type, v, received_at, raw) VALUES ($1, $2, 'universal', $3, '11.1.0-rest', $4, $5)`,
            [id, bot, direction, ts, rawOf(text, user, direction, { i })],
          )
          await client.query(
            `INSERT INTO convotrack_messages (id, record_id, bot, platform, direction, user_id, thread, text, intent, event_type, event_name, ts)
             VALUES ($1, $1, $2, 'universal', $3, $4, $4, $5, $6, $7, $8, $9)`,
            [id, bot, direction, user, text, intent, event, event ? text : null, ts],
          )
        }
      } finally {
        await client.end()
      }
      const store = await PgRecordStore.open(url, { listen: false })
      try {
        expect(await store.notHandled({})).toHaveLength(2)
        expect(await store.usage({})).toEqual(USAGE)
        await expectMatchesRecount(store)
        await expectAnalyticsRecount(store, ANALYTICS_RANGES)
      } finally {
        await store.close()
      }
      const again = await PgRecordStore.open(url, { listen: false })
      try {
        await expectMatchesRecount(again)
      } finally {
        await again.close()
      }
    })
  })
})

/** A store of the release before the usage report read hours: its usage summary kept, no hours tables. */
const BEFORE_HOURS =
  'DROP TABLE rollup_usage_hours; DROP TABLE usage_first_answers; DROP INDEX rollup_usage_conversation'
/** Two answers of one conversation in two hours of a UTC day, one the next day: two conversation-days. */
const HOURS_USAGE = [
  { day: '2026-01-05', model: 'gpt-x', messages: 2, conversations: 1, inputTokens: 24, outputTokens: 6 },
  { day: '2026-01-06', model: 'gpt-x', messages: 1, conversations: 1, inputTokens: 12, outputTokens: 3 },
]
const ANSWERS: Array<[number, number]> = [
  [11, T0],
  [12, T0 + 3_600_000],
  [13, T0 + 86_400_000],
]

describe('upgrading a store whose usage report read one row per conversation-hour', () => {
  it('SQLite: migration 10 derives the hours and first answers from the usage summary', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-upgrade-usage-')), 'old.db')
    const db = openKeptSqlite(file)
    migrateSqlite(
      db,
      (v) => v,
      (q) => {
        const st = db.prepare(q.sql)
        if (st.reader) return st.all(...q.params) as Array<Record<string, unknown>>
        st.run(...q.params)
        return []
      },
      SQLITE_MIGRATIONS.filter((m) => m.version < 10),
    )
    for (const [id, ts] of ANSWERS) {
      db.prepare(
        `INSERT INTO records (id, bot, platform, type, v, received_at, raw) VALUES (?, 'shop', 'universal', 'outgoing', '11.1.0-rest', ?, ?)`,
      ).run(id, ts, rawOf('Here', 'ada', 'outgoing'))
      db.prepare(
        `INSERT INTO rollup_usage (bot, hour, model, thread, messages, input_tokens, output_tokens) VALUES ('shop', ?, 'gpt-x', 'ada', 1, 12, 3)`,
      ).run(ts)
    }
    db.exec(BEFORE_HOURS)
    db.close()
    const store = new SqliteRecordStore(file)
    try {
      expect(await store.usage({})).toEqual(HOURS_USAGE)
      expect(await store.usage({ from: T0 + 86_400_000 })).toEqual(HOURS_USAGE.slice(1))
    } finally {
      await store.close()
    }
  })

  it.skipIf(!POSTGRES_LOGIC_HERE)(
    'PostgreSQL: migration 12 derives them in its transaction',
    async () => {
      const server = await startPostgres()
      try {
        const url = await server.createDatabase()
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          await migrate(
            client,
            PG_MIGRATIONS.filter((m) => m.version < 12),
          )
          for (const [id, ts] of ANSWERS) {
            await client.query(
              `INSERT INTO convotrack_records (id, bot, platform, type, v, received_at, raw) VALUES ($1, 'shop', 'universal', 'outgoing', '11.1.0-rest', $2, $3)`,
              [id, ts, rawOf('Here', 'ada', 'outgoing')],
            )
            await client.query(
              `INSERT INTO convotrack_rollup_usage (bot, hour, model, thread, messages, input_tokens, output_tokens) VALUES ('shop', $1, 'gpt-x', 'ada', 1, 12, 3)`,
              [ts],
            )
          }
          await client.query(
            BEFORE_HOURS.replaceAll('DROP TABLE ', 'DROP TABLE convotrack_').replace(
              'DROP INDEX ',
              'DROP INDEX convotrack_',
            ),
          )
        } finally {
          await client.end()
        }
        const store = await PgRecordStore.open(url, { listen: false })
        try {
          expect(await store.usage({})).toEqual(HOURS_USAGE)
          expect(await store.usage({ from: T0 + 86_400_000 })).toEqual(HOURS_USAGE.slice(1))
        } finally {
          await store.close()
        }
      } finally {
        await server.destroy()
      }
    },
    120_000,
  )
})
