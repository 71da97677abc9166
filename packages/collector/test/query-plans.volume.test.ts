// Every dashboard read at its default range, EXPLAINed on a store holding 200 000 records: none
// may read the big tables (records, messages) whole. PostgreSQL: no `Seq Scan` of them (EXPLAIN
// FORMAT JSON, after ANALYZE as autovacuum would); SQLite: no `SCAN` of them (EXPLAIN QUERY PLAN,
// without ANALYZE: a fresh file). The NotHandled report and the segments at their default range
// read neither a per-user summary nor the profiles (their size grows with the users, not the
// answer). No timing is asserted.
import { PgRecordStore, type ReadFilter, SqliteRecordStore } from '@convotrack/collector'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { funnelReport, overviewReport, pathsReport, retentionReport } from '../src/reports/analytics-queries'
import { rebuildAnalytics, rebuildSteps } from '../src/reports/analytics-writes'
import { type Dialect, postgresDialect, type Query, sqliteDialect } from '../src/reports/dialect'
import { recentQuery, transcriptQuery } from '../src/reports/message-queries'
import { rebuildPaths } from '../src/reports/path-prefixes'
import { floorHour } from '../src/reports/range'
import { rebuildReadSummaries } from '../src/reports/read-summaries'
import {
  conversationsReport,
  countsReport,
  type Exec,
  eventsReportOf,
  intentsReport,
  notHandledReport,
  type Row,
  segmentsReport,
  timelineReport,
} from '../src/reports/report-queries'
import { rebuildRetention } from '../src/reports/retention-cohorts'
import { rebuildRollups, runSteps, runStepsAsync } from '../src/reports/rollup-writes'
import { SEARCH_SCAN_STEPS, searchQuery, searchScanQuery, searchScanSpanQuery } from '../src/reports/search-query'
import { rebuildUsage, usageReport } from '../src/reports/usage-rollup'
import { type PostgresServer, startPostgres } from './support/postgres'

const RECORDS = 200_000
const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = Date.now()

/**
 * 200 000 records over 90 days of event time (4 000 users, ~8 % NotHandled inputs, NotHandled
 * replies, events), written by SQL on the database's side (fast whatever the machine), then the
 * summaries derived by the upgrade's rebuild (the same code as a migration of an existing database).
 */
function seedSql(d: Dialect): string[] {
  const series =
    d.name === 'postgres'
      ? `generate_series(1, ${RECORDS}) AS s (g)`
      : `(WITH RECURSIVE s (g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ${RECORDS}) SELECT g FROM s) s`
  const ts = `(${NOW - 90 * DAY} + CAST(g AS BIGINT) * ${Math.floor((90 * DAY) / RECORDS)})`
  const dir = `CASE WHEN g % 10 < 5 THEN 'incoming' WHEN g % 10 < 9 THEN 'outgoing' ELSE 'event' END`
  const bot = `CASE WHEN g % 5 = 0 THEN 'help' ELSE 'shop' END`
  const nhIn = '(g % 20 = 0)'
  const intent = `CASE WHEN ${nhIn} OR g % 40 = 5 THEN 'NotHandled' WHEN g % 10 < 5 THEN 'i' || (g % 40) END`
  const text = `CASE WHEN ${nhIn} THEN 'unknown ' || (g % 300) WHEN g % 10 < 5 THEN 'hello ' || (g % 50)
    WHEN g % 10 < 9 THEN 'reply ' || (g % 30) ELSE 'e' || (g % 12) END`
  const user = `'user-' || (g % 4000)`
  // Half the answers are an LLM's, with tokens (the usage report).
  const raw = `CASE WHEN g % 10 IN (5, 7) THEN '{"text":"r","userId":"u","platformJson":{"model":"m' || (g % 3) || '","usage":{"inputTokens":10,"outputTokens":5}}}' ELSE '{}' END`
  const event = `CASE WHEN g % 10 = 9 THEN (CASE WHEN g % 3 = 0 THEN 'revenueEvent' ELSE 'customEvent' END) END`
  return [
    `INSERT INTO ${d.table('records')} (id, bot, platform, type, v, received_at, event_ts, raw)
     SELECT g, ${bot}, 'universal', ${dir}, '11.1.0-rest', ${ts}, ${ts}, ${raw} FROM ${series}`,
    `INSERT INTO ${d.table('messages')} (id, record_id, bot, platform, direction, user_id, thread, text, intent, confidence,
       user_json, event_type, event_name, event_key, amount, ts, received_at)
     SELECT g, g, ${bot}, 'universal', ${dir}, ${user}, ${user}, ${text}, ${intent},
       CASE WHEN g % 10 < 5 THEN 0.5 END, CASE WHEN g % 97 = 0 THEN '{"locale":"en"}' END,
       ${event}, CASE WHEN g % 10 = 9 THEN 'e' || (g % 12) END, CASE WHEN g % 10 = 9 THEN 'e' || (g % 12) END,
       CASE WHEN g % 10 = 9 AND g % 3 = 0 THEN 3 END, ${ts}, ${ts}
     FROM ${series}`,
  ]
}

/** Every read the dashboard makes, at its default range (the last 30 days from a whole hour; minute buckets: the last day), as statements. */
async function dashboardReads(d: Dialect): Promise<Array<{ name: string; q: Query }>> {
  const out: Array<{ name: string; q: Query }> = []
  let name = ''
  // What the captured statements answer: the NotHandled report asks whether inputs exist after a range's end.
  let answer: Row[] = []
  const capture: Exec = async (q) => {
    out.push({ name, q })
    return answer
  }
  const ranges: Array<[string, ReadFilter]> = [
    ['', { from: floorHour(NOW - 30 * DAY), to: null, tz: 'UTC' }],
    [' bot', { bot: 'shop', from: floorHour(NOW - 30 * DAY), to: null, tz: 'Europe/Berlin' }],
    [' scoped', { bots: ['shop', 'help'], from: floorHour(NOW - 30 * DAY), to: null }],
    [' all time', { from: 0, to: null, tz: 'UTC' }],
  ]
  for (const [suffix, f] of ranges) {
    const reads: Array<[string, () => Promise<unknown>]> = [
      ['stats', () => countsReport(d, capture, f)],
      ['conversations', () => conversationsReport(d, capture, { ...f, limit: 200 })],
      [
        'conversations page 2',
        () => conversationsReport(d, capture, { ...f, limit: 200, cursor: `${NOW - DAY}:150000` }),
      ],
      ['not-handled', () => notHandledReport(d, capture, f)],
      ['intents', () => intentsReport(d, capture, f)],
      ['events', () => eventsReportOf(d, capture, f)],
      ['segments', () => segmentsReport(d, capture, f)],
      ['timeline hour', () => timelineReport(d, capture, { ...f, bucketMs: HOUR })],
      ['timeline day', () => timelineReport(d, capture, { ...f, bucketMs: DAY })],
      ['timeline minute', () => timelineReport(d, capture, { ...f, from: floorHour(NOW - DAY), bucketMs: 60_000 })],
      // The live chart's `since`, inside an hour: the partial hour reads the messages by event time.
      ['timeline since', () => timelineReport(d, capture, { ...f, bucketMs: HOUR, since: NOW - 5 * 60_000 })],
      // The analytics (issue 28): overview, retention, search, the clusters' 1 000 phrases.
      ['overview', () => overviewReport(d, capture, f, 30 * 60_000)],
      ['retention', () => retentionReport(d, capture, { ...f, period: 'week', now: NOW })],
      ['clusters', () => notHandledReport(d, capture, f, 1000)],
      ['paths', () => pathsReport(d, capture, { ...f, depth: 4, limit: 20 })],
      [
        'funnel',
        () =>
          funnelReport(d, capture, {
            ...f,
            steps: [
              { kind: 'intent', name: 'i5' },
              { kind: 'event', name: 'e3' },
            ],
          }),
      ],
      ['search', () => capture(searchQuery(d, { ...f, q: 'hello', limit: 50 }))],
      // A page's first step: the newest messages by (ts, id), each looked up in the index.
      [
        'search newest',
        () =>
          capture(searchScanQuery(d, { ...f, q: 'hello', limit: 50 }, SEARCH_SCAN_STEPS[0] as number, [1, 200_000])),
      ],
      ['search newest span', () => capture(searchScanSpanQuery(d, f, SEARCH_SCAN_STEPS[0] as number))],
      ['usage', () => usageReport(d, capture, f)],
      ['search phrase prefix', () => capture(searchQuery(d, { ...f, q: '"unknown 12" rep*', limit: 50 }))],
    ]
    for (const [n, read] of reads) {
      // All time: the analytics reads (the firehose and lists walk their time index newest first).
      if (suffix === ' all time' && !['overview', 'retention', 'paths', 'funnel', 'clusters'].includes(n)) continue
      name = n + suffix
      await read()
    }
    // The usage report by UTC day (since a midnight, or all time): hours and models, no conversation rows.
    for (const [n, from] of [
      ['usage days', Math.floor(NOW / DAY) * DAY - 30 * DAY],
      ['usage days all time', 0],
    ] as const)
      if (suffix === '') {
        name = n
        // All time asks the summary's first and last hours first.
        const kept = answer
        answer = [{ lo: NOW - 90 * DAY + 5 * HOUR, hi: NOW }]
        await usageReport(d, capture, { from, to: null, tz: 'UTC' })
        answer = kept
      }
    // A range that ends in the past (inputs stored after it): the phrase × user × hour rows of the range.
    name = `not-handled ending in the past${suffix}`
    answer = [{ found: 1 }]
    await notHandledReport(d, capture, { ...f, to: floorHour(NOW - 10 * DAY) })
    answer = []
    if (suffix === ' all time') continue
    out.push({ name: `messages${suffix}`, q: recentQuery(d, f, 50) })
    out.push({ name: `messages afterId${suffix}`, q: recentQuery(d, { ...f, afterId: 150_000 }, 50) })
  }
  out.push({ name: 'transcript', q: transcriptQuery(d, 'shop', 'user-7', 500) })
  out.push({ name: 'transcript page back', q: transcriptQuery(d, 'shop', 'user-7', 500, 150_000) })
  return out
}

describe('query plans at 200 000 records', () => {
  it('retention (a kept zone) and paths read only their summaries: nothing per user or per session', async () => {
    const perUser =
      /\b(FROM|JOIN)\s+(convotrack_)?(sessions|user_profiles|rollup_user_days|rollup_user_hours|retention_user_periods|messages)\b/
    for (const d of [sqliteDialect, postgresDialect]) {
      const reads = (await dashboardReads(d)).filter(
        (r) => /^(retention|paths)/.test(r.name) && !r.name.endsWith(' bot'),
      )
      expect(reads.map((r) => r.name)).toEqual(
        expect.arrayContaining(['retention', 'retention all time', 'paths', 'paths all time']),
      )
      for (const { name, q } of reads) expect(perUser.test(q.sql), `${d.name} ${name}: ${q.sql}`).toBe(false)
    }
  })

  describe('PostgreSQL', () => {
    let server: PostgresServer
    let url: string
    beforeAll(async () => {
      server = await startPostgres()
      url = await server.createDatabase()
      await (await PgRecordStore.open(url, { listen: false })).close()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        for (const sql of seedSql(postgresDialect)) await client.query(sql)
        for (const steps of [
          rebuildRollups(postgresDialect),
          rebuildReadSummaries(postgresDialect),
          rebuildAnalytics(postgresDialect),
          rebuildSteps(postgresDialect),
          rebuildUsage(postgresDialect),
          rebuildPaths(postgresDialect),
          rebuildRetention(postgresDialect, ['UTC']),
        ])
          await runStepsAsync(steps, async (q) => (await client.query(postgresDialect.sql(q.sql), q.params)).rows)
      } finally {
        await client.end()
      }
      // A hang detector, not a time limit: the derivations of 200 000 records took 300 s once
      // with four Node lines' suites running beside them on two CPUs.
    }, 900_000)
    afterAll(async () => {
      await server?.destroy()
    })

    it('no report reads the records or messages table sequentially', async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query('ANALYZE')
        const bad: string[] = []
        for (const { name, q } of await dashboardReads(postgresDialect)) {
          const res = await client.query(`EXPLAIN (FORMAT JSON) ${postgresDialect.sql(q.sql)}`, q.params)
          const plan = (res.rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]?.Plan
          for (const node of walk(plan))
            if (node['Node Type'] === 'Seq Scan' && /^convotrack_(records|messages)$/.test(node['Relation Name'] ?? ''))
              bad.push(`${name}: Seq Scan on ${node['Relation Name']}`)
          for (const node of walk(plan))
            if (perUser(name, (node['Relation Name'] ?? '').replace(/^convotrack_/, '')))
              bad.push(`${name}: reads ${node['Relation Name']}`)
        }
        expect(bad).toEqual([])
      } finally {
        await client.end()
      }
    })
  })

  describe('SQLite', () => {
    let file: string
    beforeAll(async () => {
      const { mkdtempSync } = await import('node:fs')
      const { tmpdir } = await import('node:os')
      const { join } = await import('node:path')
      file = join(mkdtempSync(join(tmpdir(), 'ct-plans-')), 'records.db')
      await new SqliteRecordStore(file).close()
      const db = new Database(file)
      try {
        const statements = new Map<string, Database.Statement>()
        db.transaction(() => {
          for (const sql of seedSql(sqliteDialect)) db.exec(sql)
          for (const steps of [
            rebuildRollups(sqliteDialect),
            rebuildReadSummaries(sqliteDialect),
            rebuildAnalytics(sqliteDialect),
            rebuildSteps(sqliteDialect),
            rebuildUsage(sqliteDialect),
            rebuildPaths(sqliteDialect),
            rebuildRetention(sqliteDialect, ['UTC']),
          ])
            runSteps(steps, (q) => {
              const st = statements.get(q.sql) ?? db.prepare(q.sql)
              statements.set(q.sql, st)
              if (st.reader) return st.all(...q.params) as Row[]
              st.run(...q.params)
              return []
            })
        })()
      } finally {
        db.close()
      }
    }, 300_000)

    it('no report SCANs the records or messages table', async () => {
      const reads = await dashboardReads(sqliteDialect)
      const db = new Database(file, { readonly: true })
      try {
        const bad: string[] = []
        for (const { name, q } of reads) {
          const rows = db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{ detail: string }>
          // Aliases of the big tables in the shared SQL: m, i, o (messages), r (records).
          for (const { detail } of rows)
            if (/^SCAN (messages|records|m|r|i|o)\b/.test(detail)) bad.push(`${name}: ${detail}`)
            // The funnel: never every row of a step (the next steps seek each user's rows of it).
            else if (
              name.startsWith('funnel') &&
              /^SCAN s\b|^SEARCH s USING (COVERING )?INDEX rollup_user_steps_\w+ \(kind=\? AND name=\?\)$/.test(detail)
            )
              bad.push(`${name}: ${detail}`)
            else if (perUser(name, /^(?:SCAN|SEARCH) (\w+)/.exec(detail)?.[1] ?? '')) bad.push(`${name}: ${detail}`)
        }
        expect(bad).toEqual([])
        // The summaries were derived: the reads have something to read.
        expect((db.prepare('SELECT sum(messages) AS n FROM rollup_hourly').get() as { n: number }).n).toBe(RECORDS)
        expect((db.prepare('SELECT sum(messages) AS n FROM rollup_usage').get() as { n: number }).n).toBe(RECORDS / 5)
        const hours = db
          .prepare('SELECT sum(messages) AS n, sum(conversations) AS c FROM rollup_usage_hours')
          .get() as {
          n: number
          c: number
        }
        expect(hours.n).toBe(RECORDS / 5)
        expect(hours.c).toBeGreaterThan(0)
        expect((db.prepare('SELECT sum(users) AS n FROM rollup_nh_phrases').get() as { n: number }).n).toBeGreaterThan(
          0,
        )
        expect((db.prepare('SELECT sum(lasts) AS n FROM rollup_segments').get() as { n: number }).n).toBeGreaterThan(0)
        const spans = db.prepare('SELECT sum(n) AS n FROM rollup_spans').get() as { n: number }
        expect(spans.n).toBe((db.prepare('SELECT sum(n) AS n FROM rollup_user_steps').get() as { n: number }).n)
      } finally {
        db.close()
      }
    })
  })
})

/**
 * Does the read `name` (at its default range) read `table`, one row per user (or, for the usage
 * report by UTC day, per conversation)? Only NotHandled, segments and usage are held to it.
 */
function perUser(name: string, table: string): boolean {
  if (name.startsWith('usage days')) return /^(rollup_usage|u)$/.test(table)
  if (!/^(not-handled|segments)/.test(name) || name.startsWith('not-handled ending in the past')) return false
  return /^(rollup_not_handled|nh_phrase_users|user_segments|user_profiles)$/.test(table)
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  Plans?: PlanNode[]
}

function* walk(node: PlanNode | undefined): Generator<PlanNode> {
  if (!node) return
  yield node
  for (const child of node.Plans ?? []) yield* walk(child)
}
