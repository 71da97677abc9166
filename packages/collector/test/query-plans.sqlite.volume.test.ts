// The query-plan proof on SQLite (what it proves: query-plans.ts): every dashboard read
// EXPLAINed on a fresh file (no ANALYZE); a `SCAN` of records or messages fails it.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import Database from 'better-sqlite3'
import { beforeAll, describe, expect, it } from 'vitest'
import type { FunnelStep } from '../src/reports/analytics-types'
import { lockUsers } from '../src/reports/analytics-writes'
import { postgresDialect, type Query, sqliteDialect } from '../src/reports/dialect'
import { FunnelPackCache } from '../src/reports/funnel-packs-memory'
import { findHandoffs, markHandoff } from '../src/reports/handoff-summary'
import type { Row } from '../src/reports/report-queries'
import { runSteps } from '../src/reports/rollup-writes'
import { dashboardReads, derivations, perUser, seedSql } from './query-plans'

/**
 * Without statistics (no ANALYZE: a fresh file) SQLite plans from the schema and the query alone,
 * so the record count does not move its plans: every read's EXPLAIN QUERY PLAN is the same at
 * 10 000, 20 000 and 200 000 records (compared read by read, issue 30). 20 000 records still take
 * the rebuild through several of its 5 000-row pages.
 */
const RECORDS = 20_000

// Both dialects' SQL, no database: it rides along with the quicker half.
it('retention (a kept zone) and paths read only their summaries: nothing per user or per session', async () => {
  const perUserTable =
    /\b(FROM|JOIN)\s+(convotrack_)?(sessions|user_profiles|rollup_user_days|rollup_user_hours|retention_user_periods|messages)\b/
  for (const d of [sqliteDialect, postgresDialect]) {
    const reads = (await dashboardReads(d, RECORDS)).filter(
      (r) => /^(retention|paths)/.test(r.name) && !r.name.endsWith(' bot'),
    )
    expect(reads.map((r) => r.name)).toEqual(
      expect.arrayContaining(['retention', 'retention all time', 'paths', 'paths all time']),
    )
    for (const { name, q } of reads) expect(perUserTable.test(q.sql), `${d.name} ${name}: ${q.sql}`).toBe(false)
  }
})

// Both dialects' SQL, no database.
it('the overview counts conversations by their start hour: no read of the conversations rows of the range', async () => {
  // The handoffs are hour totals (handoff-summary.ts): no conversation row at all.
  const perConversation = /\bFROM\s+(convotrack_)?conversation_summaries\b/
  for (const d of [sqliteDialect, postgresDialect]) {
    const reads = (await dashboardReads(d, RECORDS)).filter((r) => r.name.startsWith('overview'))
    expect(reads.map((r) => r.name)).toEqual(
      expect.arrayContaining(['overview', 'overview all time', 'overview bounded']),
    )
    for (const { name, q } of reads) expect(perConversation.test(q.sql), `${d.name} ${name}: ${q.sql}`).toBe(false)
  }
})

describe(`query plans at ${RECORDS} records: SQLite`, () => {
  let file: string
  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'ct-plans-')), 'records.db')
    await new SqliteRecordStore(file).close()
    const db = new Database(file)
    try {
      const statements = new Map<string, Database.Statement>()
      db.transaction(() => {
        for (const sql of seedSql(sqliteDialect, RECORDS)) db.exec(sql)
        for (const steps of derivations(sqliteDialect))
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
    const reads = await dashboardReads(sqliteDialect, RECORDS)
    const db = new Database(file, { readonly: true })
    try {
      const bad: string[] = []
      const linked = new Set<string>()
      for (const { name, q } of reads) {
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{ detail: string }>
        // Aliases of the big tables in the shared SQL: m, i, o (messages), r (records).
        for (const { detail } of rows)
          if (/^SCAN (messages|records|m|r|i|o)\b/.test(detail)) bad.push(`${name}: ${detail}`)
          // The funnel: never every row of a step (the next steps seek each user's rows of it).
          else if (
            name.startsWith('funnel') &&
            /^SCAN [sx]\b|^SEARCH s USING (COVERING )?INDEX rollup_user_steps_\w+ \(kind=\? AND name=\?\)$/.test(detail)
          )
            bad.push(`${name}: ${detail}`)
          // The funnel over all time: step 1's users read in place from the spans' index in user
          // order (not copied first, not sorted).
          else if (name.startsWith('funnel') && name.endsWith('all time') && /^MATERIALIZE f0|TEMP B-TREE/.test(detail))
            bad.push(`${name}: ${detail}`)
          // Search: the full-text index, keyed by time, is the outer loop and gives the page's order
          // (no sort); each match's key and message are looked up by primary key.
          else if (
            name.startsWith('search') &&
            (/TEMP B-TREE/.test(detail) || /^SEARCH m USING (COVERING )?INDEX/.test(detail))
          )
            bad.push(`${name}: ${detail}`)
          else if (perUser(name, /^(?:SCAN|SEARCH) (\w+)/.exec(detail)?.[1] ?? '')) bad.push(`${name}: ${detail}`)
          // A range with edges inside days: of its partial days' day links, only the users of the
          // first day with a next day after the whole days, of the last with a previous one before
          // them (a range of the indexes by day and neighbour), never every user of a day.
          else if (
            name.startsWith('overview bounded') &&
            /^SCAN (l|f|retention_day_links)\b|^SEARCH (l|f|retention_day_links) USING PRIMARY KEY \(day=\?\)$/.test(
              detail,
            )
          )
            bad.push(`${name}: ${detail}`)
        if (name.startsWith('search') && !/^SCAN f VIRTUAL TABLE INDEX \d+:/.test(rows[0]?.detail ?? ''))
          bad.push(`${name}: first ${rows[0]?.detail}`)
        const by = (ix: string) =>
          rows.some((r) => r.detail.includes(`COVERING INDEX retention_day_links_day_${ix} (day=?`))
        if (by('next_day') && by('prev_day')) linked.add(name)
      }
      for (const name of new Set(reads.map((r) => r.name)))
        if (name.startsWith('overview bounded') && !linked.has(name))
          bad.push(`${name}: no day links read by day and neighbour`)
      expect(bad).toEqual([])
      // The summaries were derived: the reads have something to read.
      expect((db.prepare('SELECT sum(messages) AS n FROM rollup_hourly').get() as { n: number }).n).toBe(RECORDS)
      expect((db.prepare('SELECT sum(messages) AS n FROM rollup_usage').get() as { n: number }).n).toBe(RECORDS / 5)
      const hours = db.prepare('SELECT sum(messages) AS n, sum(conversations) AS c FROM rollup_usage_hours').get() as {
        n: number
        c: number
      }
      expect(hours.n).toBe(RECORDS / 5)
      expect(hours.c).toBeGreaterThan(0)
      expect((db.prepare('SELECT sum(users) AS n FROM rollup_nh_phrases').get() as { n: number }).n).toBeGreaterThan(0)
      expect((db.prepare('SELECT sum(lasts) AS n FROM rollup_segments').get() as { n: number }).n).toBeGreaterThan(0)
      const spans = db.prepare('SELECT sum(n) AS n FROM rollup_spans').get() as { n: number }
      expect(spans.n).toBe((db.prepare('SELECT sum(n) AS n FROM rollup_user_steps').get() as { n: number }).n)
    } finally {
      db.close()
    }
  })

  it("SQLite's funnels read their steps' packs made by index searches: no statement reads every row of a step", async () => {
    const db = new Database(file, { readonly: true })
    try {
      const plans: string[] = []
      const cache = new FunnelPackCache(sqliteDialect, (q) => {
        if (!q.sql.startsWith('PRAGMA'))
          for (const r of db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{ detail: string }>)
            plans.push(`${r.detail} ← ${q.sql.replace(/\s+/g, ' ').slice(0, 90)}`)
        return db.prepare(q.sql).all(...q.params) as Row[]
      })
      await cache.warm(0)
      const steps = db
        .prepare('SELECT DISTINCT kind, name FROM rollup_user_steps ORDER BY kind, name LIMIT 3')
        .all() as FunnelStep[]
      expect(steps.length).toBeGreaterThan(1)
      const counts = cache.count({ steps })
      expect(counts?.[0]?.users).toBeGreaterThan(0)
      expect(plans.length).toBeGreaterThan(0)
      // Each table access a search of the step rows: a day's by step and hour (never every row of
      // the step), a step's first or last hour (min, max) and the next step's name by step; no sort.
      const search = (keys: string) =>
        new RegExp(`^SEARCH rollup_user_steps USING (COVERING )?INDEX rollup_user_steps_kind_name_\\w+ \\(${keys}\\) ←`)
      const bad = plans.filter((p) => {
        if (/TEMP B-TREE/.test(p)) return true
        if (!/^(SCAN|SEARCH) /.test(p) || p.startsWith('SCAN CONSTANT ROW')) return false
        if (p.includes('first_ts, last_ts')) return !search('kind=\\? AND name=\\? AND hour>\\? AND hour<\\?').test(p)
        if (p.includes('min(hour)')) return !search('kind=\\? AND name=\\?').test(p)
        return !search('kind=\\? AND name>\\?').test(p)
      })
      expect(plans.some((p) => p.includes('first_ts, last_ts'))).toBe(true)
      expect(bad).toEqual([])
    } finally {
      db.close()
    }
  })

  it('handoffs at write time: an operator action and a written session find their user’s sessions and marks by key', () => {
    const db = new Database(file, { readonly: true })
    try {
      const captured: Query[] = []
      const exec = (q: Query): Row[] => {
        captured.push(q)
        // The thread's user, then one of their sessions that the action falls in.
        return /conversation_summaries/.test(q.sql)
          ? [{ in_user: 'user-7', last_user: 'user-7' }]
          : [{ sid: '', start_ts: 0, end_ts: 1 }]
      }
      const gap = 30 * 60_000
      const action = { ts: 1, action: 'pause', bot: 'shop', target: 'user-7' }
      runSteps(
        markHandoff(sqliteDialect, action, gap, (key) => lockUsers(sqliteDialect, [key])),
        exec,
      )
      runSteps(findHandoffs(sqliteDialect, [{ bot: 'shop', userId: 'user-7', start: 0, end: 1 }], gap), exec)
      expect(
        captured.map((q) => /\b(sessions|handoff_marks|rollup_handoffs|conversation_summaries)\b/.exec(q.sql)?.[1]),
      ).toEqual(['conversation_summaries', 'handoff_marks', 'sessions', 'sessions', 'rollup_handoffs', 'handoff_marks'])
      const bad: string[] = []
      // A bot's sessions by start time, or any table walked: what grows with the bot's history.
      for (const q of captured)
        for (const { detail } of db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{
          detail: string
        }>)
          if (/^SCAN|sessions_bot_start_ts|sessions_start_ts/.test(detail)) bad.push(`${q.sql}: ${detail}`)
      expect(bad).toEqual([])
    } finally {
      db.close()
    }
  })
})
