/**
 * A search page's steps (the newest messages first, then every match sorted) give the same pages
 * as sorting every match, on both databases: small steps make a small history take every path —
 * a page filled in the first step, one that crosses into the next and into the sort of the rest,
 * imported old records (ids above newer messages') among them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresDialect, type Query, sqliteDialect } from '../src/reports/dialect'
import type { Exec } from '../src/reports/report-queries'
import { type SearchPlan, searchPage } from '../src/reports/search-page'
import { openKeptSqlite } from './support/kept-sqlite'
import { type PostgresServer, startPostgres } from './support/postgres'
import { newestFirst, storeSearchHistory } from './support/search-history'

const T = Date.UTC(2026, 2, 2)
const DAY = 86_400_000
const PLANS: Array<[string, SearchPlan]> = [
  ['steps of 5 then 60', { steps: [5, 60], fewMatches: 1 }],
  ['steps of 400', { steps: [400], fewMatches: 1 }],
  ['sort of every match', { steps: [], fewMatches: Number.MAX_SAFE_INTEGER }],
]

async function pages(d: typeof sqliteDialect, exec: Exec, q: string, plan: SearchPlan, limit: number) {
  const got: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await searchPage(d, exec, { from: T - 500 * DAY, to: T + DAY, bot: 'shop', q, limit, cursor }, plan)
    got.push(...page.map((h) => h.text))
    const last = page.at(-1)
    if (page.length < limit || !last) return got
    cursor = `${last.ts}:${last.id}`
  }
}

describe('search pages by steps', () => {
  let server: PostgresServer
  beforeAll(async () => {
    server = await startPostgres()
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('SQLite and PostgreSQL: every plan gives every hit once, newest first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-page-'))
    const file = join(dir, 's.db')
    const lite = new SqliteRecordStore(file)
    const url = await server.createDatabase()
    const pgStore = await PgRecordStore.open(url)
    const sent = await storeSearchHistory(lite, T)
    await storeSearchHistory(pgStore, T)
    await lite.close()
    await pgStore.close()
    const db = openKeptSqlite(file, { readonly: true })
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const execLite: Exec = async (q: Query) => db.prepare(q.sql).all(...q.params) as Record<string, unknown>[]
      const execPg: Exec = async (q: Query) =>
        (await client.query(postgresDialect.sql(q.sql), q.params as unknown[])).rows
      for (const [d, exec] of [
        [sqliteDialect, execLite],
        [postgresDialect, execPg],
      ] as const) {
        for (const q of ['order', 'rare', 'hello']) {
          for (const [name, plan] of PLANS) {
            for (const limit of [1, 37]) {
              if (limit === 1 && q !== 'rare') continue
              expect(await pages(d, exec, q, plan, limit), `${d.name} ${q} ${name} limit ${limit}`).toEqual(
                newestFirst(sent, q),
              )
            }
          }
        }
      }
    } finally {
      db.close()
      await client.end()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
