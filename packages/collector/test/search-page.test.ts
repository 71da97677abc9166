/**
 * A search page gives the same pages as sorting every match, on both databases: PostgreSQL's steps
 * (the newest messages first, then every match sorted) — small steps make a small history take
 * every path: a page filled in the first step, one that crosses into the next and into the sort of
 * the rest — and SQLite's one walk of its index keyed by time; imported old records (ids above
 * newer messages') among them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, type RecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Dialect, postgresDialect, type Query, sqliteDialect } from '../src/reports/dialect'
import type { Exec } from '../src/reports/report-queries'
import { type SearchPlan, searchPage } from '../src/reports/search-page'
import { PG_SEARCH_CHARS, parseSearch, pgSearchPrefilter, toTsQuery } from '../src/reports/search-query'
import { item } from './store-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { type PostgresServer, startPostgres } from './support/postgres'
import { newestFirst, type SentText, storeSearchHistory } from './support/search-history'

const T = Date.UTC(2026, 2, 2)
const DAY = 86_400_000
const PLANS: Array<[string, SearchPlan]> = [
  ['steps of 5 then 60', { steps: [5, 60], fewMatches: 1 }],
  ['steps of 5 growing ×4 to 320', { steps: geometricSteps(5, 4, 320), fewMatches: 1 }],
  ['steps of 400', { steps: [400], fewMatches: 1 }],
  ['sort of every match', { steps: [], fewMatches: Number.MAX_SAFE_INTEGER }],
  // Few matches: the first step, then the rest of them sorted.
  ['a step of 5, then the rest sorted', { steps: [5, 60], fewMatches: Number.MAX_SAFE_INTEGER }],
]

async function pages(d: Dialect, exec: Exec, q: string, plan: SearchPlan, limit: number) {
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

/** A PostgreSQL walk over the newest messages (searchScanQuery): their subquery's end. */
const WALK = 'ORDER BY ts DESC, id DESC LIMIT ?) m'
/** A PostgreSQL walk's step: the parameter of its newest messages' `LIMIT`. */
const stepOf = (q: Query) => q.params[q.sql.slice(0, q.sql.indexOf(WALK)).split('?').length - 1]

/** `first`, then each step `factor` times the one before, up to `last`. */
function geometricSteps(first: number, factor: number, last: number): number[] {
  const steps: number[] = []
  for (let x = first; x <= last; x *= factor) steps.push(x)
  return steps
}

/**
 * How many of the newest messages (after `cursor`, newest first) a page of `limit` hits of `q`
 * must walk: up to its last hit.
 */
function needed(sent: readonly SentText[], q: string, limit: number, cursor?: SentText): number {
  const order = [...sent].sort((a, b) => b.ts - a.ts || b.n - a.n)
  const after = cursor ? order.slice(order.indexOf(cursor) + 1) : order
  let hits = 0
  for (const [i, s] of after.entries()) if (s.text.split(' ').includes(q) && ++hits === limit) return i + 1
  return after.length
}

/**
 * Both stores (a SQLite file, a PostgreSQL database of `server`) filled by `fill`, closed, then
 * `body` with each database's dialect and a statement runner on a read-only connection.
 */
async function onBothStores(
  server: PostgresServer,
  fill: (store: RecordStore) => Promise<SentText[]>,
  body: (dbs: ReadonlyArray<readonly [Dialect, Exec]>, sent: SentText[]) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'search-page-'))
  const file = join(dir, 's.db')
  const lite = new SqliteRecordStore(file)
  const url = await server.createDatabase()
  const pgStore = await PgRecordStore.open(url)
  const sent = await fill(lite)
  await fill(pgStore)
  await lite.close()
  await pgStore.close()
  const db = openKeptSqlite(file, { readonly: true })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const execLite: Exec = async (q: Query) => db.prepare(q.sql).all(...q.params) as Record<string, unknown>[]
    const execPg: Exec = async (q: Query) =>
      (await client.query(postgresDialect.sql(q.sql), q.params as unknown[])).rows
    await body(
      [
        [sqliteDialect, execLite],
        [postgresDialect, execPg],
      ],
      sent,
    )
  } finally {
    db.close()
    await client.end()
    rmSync(dir, { recursive: true, force: true })
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
    await onBothStores(
      server,
      (store) => storeSearchHistory(store, T),
      async (dbs, sent) => {
        for (const [d, exec] of dbs) {
          // PostgreSQL: the steps a page walks, the newest messages after its cursor, each step's size
          // (the walk's parameter; the span is read only after a step that left the page short).
          // SQLite: a page is one statement.
          const walked: number[] = []
          let statements = 0
          const counting: Exec = async (q) => {
            statements++
            if (d.name === 'postgres' && q.sql.includes(WALK)) walked.push(Number(stepOf(q)))
            return exec(q)
          }
          const plan = { steps: geometricSteps(5, 4, 1280), fewMatches: 1 }
          const newest = [...sent].sort((a, b) => b.ts - a.ts || b.n - a.n)
          // From the top, and from a cursor 700 messages down (a page past the first).
          for (const cursor of [undefined, newest[700]]) {
            for (const [q, limit] of [
              ['order', 37],
              ['order', 150],
              ['rare', 3],
            ] as const) {
              walked.length = 0
              statements = 0
              const page = await searchPage(
                d,
                counting,
                {
                  from: T - 500 * DAY,
                  to: T + DAY,
                  bot: 'shop',
                  q,
                  limit,
                  cursor: cursor ? `${cursor.ts}:${cursor.n + 1}` : undefined,
                },
                plan,
              )
              const from = cursor ? newestFirst(newest.slice(701), q) : newestFirst(sent, q)
              expect(page.map((h) => h.text)).toEqual(from.slice(0, limit))
              if (d.name === 'sqlite') {
                expect(statements).toBe(1)
                continue
              }
              // The steps it took are the plan's first ones, and the last of them is the first that
              // reached the page's last hit: at most 4 times what it had to walk, plus the first step.
              const need = needed(sent, q, limit, cursor)
              const total = walked.reduce((a, b) => a + b, 0)
              expect(walked, `${d.name} ${q} ${limit}`).toEqual(plan.steps.slice(0, walked.length))
              if (walked.length < plan.steps.length) {
                expect(total).toBeGreaterThanOrEqual(need)
                expect(total - (walked.at(-1) as number)).toBeLessThan(need)
                expect(total).toBeLessThanOrEqual(4 * need + 5)
              }
            }
          }
          // PostgreSQL reads the rest of a query it counted few through the full-text index alone (a
          // subquery the page's conditions stay out of); one with many matches as the planner likes.
          if (d.name === 'postgres') {
            const statements: string[] = []
            const seen: Exec = async (q) => {
              statements.push(q.sql)
              return exec(q)
            }
            const few = /OFFSET 0\) m/
            for (const [q, fewMatches, form] of [
              ['rare', Number.MAX_SAFE_INTEGER, true],
              ['absentword', 1, true],
              ['order', 1, false],
            ] as const) {
              statements.length = 0
              const filter = { from: T - 500 * DAY, to: T + DAY, bot: 'shop', q, limit: 1000 }
              const page = await searchPage(d, seen, filter, { steps: [5, 60], fewMatches })
              expect(page.map((h) => h.text)).toEqual(newestFirst(sent, q).slice(0, 1000))
              expect(few.test(statements.at(-1) ?? ''), `${q} fewMatches ${fewMatches}`).toBe(form)
            }
          }
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
      },
    )
    // A hang detector, not a speed bound: the two stores' writes took 85 s beside a loaded machine's CPU burners.
  }, 300_000)

  // PostgreSQL's walk makes the search vector only of a message whose lowered text holds each ASCII
  // word of the query (pgSearchPrefilter): the same hits as the vector alone, whatever the case,
  // punctuation, hyphens, URLs, the letters that lowercase to ASCII ones (the Kelvin sign, the
  // dotted İ) and words past the indexed head of a long text.
  it('PostgreSQL: the test before the search vector in the walk loses no hit', async () => {
    const texts = [
      'Can I SPEAK TO a Human?',
      'speak,to human',
      'SPEAK-TO HUMANS please',
      'speaking to humans',
      'Kelvin: 5 \u212A',
      '\u0130STANBUL trip',
      'istanbul trip',
      'ΟΔΟΣ closed',
      'ÄRGER mit der Post',
      'STRASSE und Straße',
      'https://Example.com/Path and foo@Bar.com',
      'ＳＰＥＡＫ fullwidth',
      `${'x '.repeat(5_000)}tail`,
      'tail at the start',
    ]
    const sent: SentText[] = texts.map((text, n) => ({ text, ts: T - n * 60_000, n }))
    const fill = async (store: RecordStore) => {
      await store.addMany(
        sent.map((m) => item('shop', 'universal', 'incoming', { userId: 'u1', text: m.text }, { at: m.ts })),
      )
      return sent
    }
    await onBothStores(server, fill, async (dbs) => {
      const [, exec] = dbs.find(([d]) => d.name === 'postgres') as readonly [Dialect, Exec]
      const queries = [
        'speak',
        '"speak to" human*',
        'humans',
        'speak*',
        'k',
        'istanbul',
        'οδος',
        'ärger',
        'strasse',
        'straße',
        'example',
        'example.com',
        'bar',
        'path',
        'ＳＰＥＡＫ',
        'tail',
        'x tail',
      ]
      for (const q of queries) {
        const walks: string[] = []
        const seen: Exec = async (query) => {
          if (query.sql.includes(WALK)) walks.push(query.sql)
          return exec(query)
        }
        // One step over every message: the page is the walk's.
        const page = await searchPage(
          postgresDialect,
          seen,
          { from: T - DAY, to: T + DAY, bot: 'shop', q, limit: 100 },
          { steps: [1_000], fewMatches: 1 },
        )
        const terms = parseSearch(q)
        const byVector = await exec({
          sql: `SELECT text FROM convotrack_messages
            WHERE to_tsvector('simple', left(coalesce(text, ''), ${PG_SEARCH_CHARS})) @@ to_tsquery('simple', ?)
            ORDER BY ts DESC, id DESC`,
          params: [toTsQuery(terms)],
        })
        expect(
          page.map((h) => h.text),
          q,
        ).toEqual(byVector.map((r) => r.text))
        expect(walks.length, q).toBe(1)
        expect(walks[0]?.includes('LIKE ALL'), q).toBe(pgSearchPrefilter('x.text', terms) !== undefined)
      }
      // The words it tests: ASCII ones only, each once.
      expect(pgSearchPrefilter('t', parseSearch('"speak to" human* speak ärger'))?.like).toEqual([
        '%speak%',
        '%to%',
        '%human%',
      ])
      expect(pgSearchPrefilter('t', parseSearch('οδος ärger'))).toBeUndefined()
      // Hits at all: the test is not vacuous.
      expect(
        (
          await searchPage(
            postgresDialect,
            exec,
            { from: T - DAY, to: T + DAY, bot: 'shop', q: 'k', limit: 10 },
            {
              steps: [1_000],
              fewMatches: 1,
            },
          )
        ).map((h) => h.text),
      ).toEqual(['Kelvin: 5 \u212A'])
    })
  }, 120_000)

  // More messages at one instant than a step holds (PostgreSQL) and than a page holds (both): the
  // next step or page starts below the last one taken — none twice, none skipped. SQLite keys the
  // messages of one millisecond in the order they were stored, the imported ones after the rest.
  it('more messages at one instant than a step: every plan gives every hit once, newest first', async () => {
    const sent: SentText[] = []
    const batch: Array<ReturnType<typeof item>> = []
    // 7 before, 40 at one instant (a Messenger answer burst dated when received), 7 after, then 12
    // imported at that instant again (ids above the rest).
    const at = (i: number) => (i < 7 ? T - (7 - i) * 60_000 : i < 47 ? T : i < 54 ? T + (i - 46) * 60_000 : T)
    for (let i = 0; i < 66; i++) {
      const text = `${i % 3 === 0 ? 'order' : 'hello'} tie ${i}`
      sent.push({ text, ts: at(i), n: i })
      batch.push(item('shop', 'universal', 'incoming', { userId: `u${i % 5}`, text }, { at: at(i) }))
    }
    const fill = async (store: RecordStore) => {
      await store.addMany(batch)
      return sent
    }
    await onBothStores(server, fill, async (dbs) => {
      for (const [d, exec] of dbs)
        for (const plan of [
          { steps: [5, 20], fewMatches: 1 },
          { steps: [3, 9, 27], fewMatches: 1 },
          { steps: [5], fewMatches: Number.MAX_SAFE_INTEGER },
        ])
          for (const q of ['order', 'hello', 'tie'])
            for (const limit of [1, 4, 50])
              expect(
                await pages(d, exec, q, plan, limit),
                `${d.name} ${q} ${JSON.stringify(plan)} limit ${limit}`,
              ).toEqual(newestFirst(sent, q))
    })
  }, 120_000)
})
