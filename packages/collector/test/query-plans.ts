// Every dashboard read at its default range, EXPLAINed on a store holding many records: none
// may read the big tables (records, messages) whole. PostgreSQL: no `Seq Scan` of them (EXPLAIN
// FORMAT JSON, after ANALYZE as autovacuum would); SQLite: no `SCAN` of them (EXPLAIN QUERY PLAN,
// without ANALYZE: a fresh file). The NotHandled report and the segments at their default range
// read neither a per-user summary nor the profiles (their size grows with the users, not the
// answer). No timing is asserted.
// This module is the proof's shared half: the seed, the summaries' derivation and the list of
// every dashboard read ({@link dashboardReads}: a new read is added there). Its two halves,
// query-plans.postgres.volume.test.ts and query-plans.sqlite.volume.test.ts, run side by side.
import type { ReadFilter } from '@convotrack/collector'
import { funnelReport, overviewReport, pathsReport, retentionReport } from '../src/reports/analytics-queries'
import { rebuildAnalytics, rebuildSteps } from '../src/reports/analytics-writes'
import { rebuildConversationStarts } from '../src/reports/conversation-starts'
import type { Dialect, Query } from '../src/reports/dialect'
import { lastMessageIdQuery, recentQuery, transcriptQuery } from '../src/reports/message-queries'
import { rebuildPhraseDays } from '../src/reports/nh-phrase-days'
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
import { rebuildRollups, type Steps } from '../src/reports/rollup-writes'
import { SEARCH_SCAN_STEPS, searchQuery, searchScanQuery, searchScanSpanQuery } from '../src/reports/search-query'
import { rebuildUsage, usageReport } from '../src/reports/usage-rollup'

const HOUR = 3_600_000
const DAY = 24 * HOUR
export const NOW = Date.now()

/**
 * `records` records over 90 days of event time (one user per 50 records, ~8 % NotHandled inputs,
 * NotHandled replies, events), written by SQL on the database's side (fast whatever the machine).
 * The summaries are then derived by {@link derivations}.
 */
export function seedSql(d: Dialect, records: number): string[] {
  // Users of 50 records each, a multiple of 40: every size has the same shape (a user's records share g % 40).
  if (records % 2000 !== 0) throw new Error(`seedSql: records must be a multiple of 2 000, got ${records}`)
  const series =
    d.name === 'postgres'
      ? `generate_series(1, ${records}) AS s (g)`
      : `(WITH RECURSIVE s (g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ${records}) SELECT g FROM s) s`
  const ts = `(${NOW - 90 * DAY} + CAST(g AS BIGINT) * ${Math.floor((90 * DAY) / records)})`
  const dir = `CASE WHEN g % 10 < 5 THEN 'incoming' WHEN g % 10 < 9 THEN 'outgoing' ELSE 'event' END`
  const bot = `CASE WHEN g % 5 = 0 THEN 'help' ELSE 'shop' END`
  const nhIn = '(g % 20 = 0)'
  const intent = `CASE WHEN ${nhIn} OR g % 40 = 5 THEN 'NotHandled' WHEN g % 10 < 5 THEN 'i' || (g % 40) END`
  const text = `CASE WHEN ${nhIn} THEN 'unknown ' || (g % 300) WHEN g % 10 < 5 THEN 'hello ' || (g % 50)
    WHEN g % 10 < 9 THEN 'reply ' || (g % 30) ELSE 'e' || (g % 12) END`
  const user = `'user-' || (g % ${Math.ceil(records / 50)})`
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

/**
 * The summaries derived from the seeded messages by the upgrade's rebuild (the same code as a
 * migration of an existing database), in the order an upgrade runs them.
 */
export function derivations(d: Dialect): Steps[] {
  return [
    rebuildRollups(d),
    rebuildConversationStarts(d),
    rebuildReadSummaries(d),
    rebuildPhraseDays(d),
    rebuildAnalytics(d),
    rebuildSteps(d),
    rebuildUsage(d),
    rebuildPaths(d),
    rebuildRetention(d, ['UTC']),
  ]
}

/**
 * Every read the dashboard makes, at its default range (the last 30 days from a whole hour; minute
 * buckets: the last day), as statements, on a store seeded with `records` ({@link seedSql}: ids
 * 1…records). A new dashboard read is added here: both stores' tests EXPLAIN every entry.
 */
export async function dashboardReads(d: Dialect, records: number): Promise<Array<{ name: string; q: Query }>> {
  // Cursors and `afterId`s three quarters of the way through the ids.
  const later = Math.floor((records * 3) / 4)
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
        () => conversationsReport(d, capture, { ...f, limit: 200, cursor: `${NOW - DAY}:${later}` }),
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
      ['overview', () => overviewReport(d, capture, f)],
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
      // A later page: from its cursor (SQLite: the cursor's search key).
      [
        'search page 2',
        () => capture(searchQuery(d, { ...f, q: 'hello', limit: 50, cursor: `${NOW - DAY}:${later}` })),
      ],
      // PostgreSQL's steps: the newest messages by (ts, id), each tested; where the step ended.
      ...(d.name === 'postgres'
        ? ([
            [
              'search newest',
              () => capture(searchScanQuery(d, { ...f, q: 'hello', limit: 50 }, SEARCH_SCAN_STEPS[0] as number)),
            ],
            ['search newest span', () => capture(searchScanSpanQuery(d, f, SEARCH_SCAN_STEPS[0] as number))],
          ] as Array<[string, () => Promise<unknown>]>)
        : []),
      ['usage', () => usageReport(d, capture, f)],
      ['search phrase prefix', () => capture(searchQuery(d, { ...f, q: '"unknown 12" rep*', limit: 50 }))],
      // Few matches (counted): read through the full-text index only, whatever the planner estimates.
      ['search few', () => capture(searchQuery(d, { ...f, q: '"unknown 12" rep*', limit: 50 }, true))],
      ['search few absent word', () => capture(searchQuery(d, { ...f, q: 'absentword', limit: 50 }, true))],
    ]
    for (const [n, read] of reads) {
      // All time: the analytics reads (the firehose and lists walk their time index newest first).
      if (
        suffix === ' all time' &&
        !['overview', 'retention', 'paths', 'funnel', 'clusters', 'intents', 'events'].includes(n)
      )
        continue
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
    // The overview of a bounded range (a week, its edges inside UTC days; messages stored after it):
    // its whole UTC days' users from the previous-day rows, its partial first and last days' from
    // those days' rows of the day links (UTC is kept, but the range is not its whole days).
    name = `overview bounded${suffix}`
    answer = [{ found: 1 }]
    await overviewReport(d, capture, {
      ...f,
      from: floorHour(NOW - 20 * DAY) + 5 * HOUR,
      to: floorHour(NOW - 13 * DAY) + 7 * HOUR,
    })
    // Whole UTC days ending a week ago, UTC kept: the previous-day rows of the range's days, no user's row.
    name = `overview past days${suffix}`
    const midnight = Math.floor(NOW / DAY) * DAY
    await overviewReport(d, capture, { ...f, from: midnight - 37 * DAY, to: midnight - 7 * DAY })
    answer = []
    // A range that ends in the past (inputs stored after it): the phrase × user × hour rows of the range.
    name = `not-handled ending in the past${suffix}`
    answer = [{ found: 1 }]
    await notHandledReport(d, capture, { ...f, to: floorHour(NOW - 10 * DAY) })
    answer = []
    if (suffix === ' all time') continue
    out.push({ name: `messages${suffix}`, q: recentQuery(d, f, 50) })
    out.push({ name: `messages afterId${suffix}`, q: recentQuery(d, { ...f, afterId: later }, 50) })
  }
  out.push({ name: 'transcript', q: transcriptQuery(d, 'shop', 'user-7', 500) })
  out.push({ name: 'transcript page back', q: transcriptQuery(d, 'shop', 'user-7', 500, later) })
  // The funnel route's mark of what the store holds (a kept answer is fresh while it stays).
  out.push({ name: 'newest message id', q: lastMessageIdQuery(d) })
  return out
}

/**
 * Does the read `name` (at its default range) read `table`, one row per user (or, for the usage
 * report by UTC day, per conversation)? Only NotHandled, segments, usage and the overview (of a
 * range with nothing after it: its users and new users sum hours; of whole days of a kept zone:
 * its users sum pairs of days; of a range with edges inside days: the users of its two partial
 * days, never every user-day of the range; its NotHandled count and handoffs sum hours, never
 * phrases, users, operator actions or sessions; over all time, its feedback per intent sums days)
 * and the intents and events of all time (their day rows, no hour row) are held to it.
 */
export function perUser(name: string, table: string): boolean {
  if (name.startsWith('usage days')) return /^(rollup_usage|u)$/.test(table)
  // The intents and events of all time: their day rows, no hour row (a range ending now reads its
  // last day's hours).
  if (name === 'intents all time' || name === 'events all time') return /^rollup_(intents|events)$/.test(table)
  // The overview of all time (or of whole days): its feedback per intent from the day rows, no hour
  // × intent row (a range with edges inside days reads those days' hours).
  if (name.startsWith('overview') && !name.startsWith('overview bounded') && name.endsWith('all time'))
    if (table === 'rollup_feedback') return true
  // The overview's NotHandled count and handoffs: hour totals, never the rows per phrase or per user
  // of each hour, nor the operators' actions, the sessions or the conversations they were in.
  if (name.startsWith('overview'))
    return /^(user_profiles|user_segments|rollup_user_days|rollup_user_hours|rollup_not_handled|rollup_nh_phrases|nh_phrase_users|audit|sessions|conversation_summaries|handoff_marks|[acs])$/.test(
      table,
    )
  if (!/^(not-handled|segments)/.test(name) || name.startsWith('not-handled ending in the past')) return false
  return /^(rollup_not_handled|nh_phrase_users|user_segments|user_profiles)$/.test(table)
}

/** A node of PostgreSQL's `EXPLAIN (FORMAT JSON)`. */
export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Index Cond'?: string
  'Recheck Cond'?: string
  'Join Type'?: string
  Plans?: PlanNode[]
}

/** A plan's nodes, depth first. */
export function* walk(node: PlanNode | undefined): Generator<PlanNode> {
  if (!node) return
  yield node
  for (const child of node.Plans ?? []) yield* walk(child)
}
