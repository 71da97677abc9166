/**
 * Reports at scale: loads N records of a mixed-platform bot (bench/scale-records.ts: universal,
 * Messenger, Slack, Alexa, Twitter DMs, custom and revenue events, ~8 % NotHandled, M users,
 * event time spread over 90 days) into a collector's store, measures ingest through
 * `POST /track/batch`, gives the store its operators (scale-bulk.ts `ensureHandoffs`) and users'
 * ratings (scale-feedback.ts) once, then times every read the dashboard makes — at the default
 * range and all time, median and max of 5 — and prints them as a table.
 *
 *   pnpm bench:scale -- --records 1000000 --db /var/tmp/scale.db
 *   pnpm bench:scale -- --records 10000000 --db postgres://postgres@127.0.0.1:5432/scale
 *   pnpm bench:scale -- --records 200000 --db pg            # a throwaway PostgreSQL (test/support/postgres.ts)
 *   pnpm bench:scale -- --records 10000000 --db pg --pg-dir /var/tmp/scale-pg   # kept, so a load can resume
 *
 * Options (or env): --records N (SCALE_RECORDS, 1 000 000), --users M (SCALE_USERS, N / 20),
 * --db FILE|URL|pg (SCALE_DB), --pg-dir DIR (SCALE_PG_DIR), --slice S (SCALE_SLICE, records
 * measured through /track/batch, default min(N, 200 000)), --collectors C (SCALE_COLLECTORS:
 * collector processes sharing the database; default 2 on PostgreSQL, 1 on SQLite, as the README's
 * deployment says), --seed store|http (SCALE_SEED), --seed-until ISO-TIME (SCALE_SEED_UNTIL: stop
 * the bulk seed then, short of N, and go on with the slice and the reads — the largest load that
 * fits the time), --interleaved (SCALE_INTERLEAVED=1: event times spread over the 90 days in any
 * first part of the load instead of growing with the index, so a load cut short is still 90 days).
 *
 * Loading: the first N − S records are the BULK SEED and, with `--seed store` (the default), go
 * through the collector's ingest code in this process (validateRecord + ingestMany, the batch
 * route's path without HTTP) — labelled "seed" in the output, not an ingest rate; the last S go
 * through /track/batch of real collector processes (4 batches of 500 in flight) and give the
 * ingest rate. `--seed http` sends everything through /track/batch. `--seed bulk` (for measuring
 * reads at 10 M) writes the prepared records straight into the tables and derives the summaries
 * from them with the migrations' code (bench/scale-bulk.ts): minutes instead of hours; it stores
 * each record with the receive time a live collector would have given it, while `--seed store`
 * and the HTTP slice are received now (a record without a time of its own, a Messenger answer, is
 * then dated at the load: with `--slice 0` the newest messages are a live bot's). Record i is always the same
 * record with the idempotency key `s.<i>`, so an interrupted load resumes where the store's count
 * says and a repeat is stored once. A store that already holds N records is only read.
 */
import { mkdirSync } from 'node:fs'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { isPostgresUrl, PgRecordStore, type RecordStore, SqliteRecordStore } from '../packages/collector/src/index'
import { ingestMany } from '../packages/collector/src/ingest/ingest'
import { LiveFeed } from '../packages/collector/src/live/live-feed'
import { DAY_MS } from '../packages/collector/src/reports/range'
import { type PostgresServer, startPostgres } from '../packages/collector/test/support/postgres'
import { type CollectorProcess, startCollectorProcess } from './collector-batch'
import { acceptedScaleRecord } from './ingest-records'
import { bulkSeedPostgres, bulkSeedSqlite, deriveIfPending, ensureHandoffs } from './scale-bulk'
import { ensureFeedback } from './scale-feedback'
import { type ScaleShape, scaleRecord } from './scale-records'

const { values: args } = parseArgs({
  options: {
    records: { type: 'string' },
    users: { type: 'string' },
    db: { type: 'string' },
    'pg-dir': { type: 'string' },
    slice: { type: 'string' },
    collectors: { type: 'string' },
    seed: { type: 'string' },
    'seed-until': { type: 'string' },
    interleaved: { type: 'boolean' },
    'no-analytics': { type: 'boolean' },
  },
  // `pnpm bench:scale -- --records …` passes the `--` on.
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
const opt = (name: keyof typeof args, env: string, fallback: string) =>
  String(args[name] ?? process.env[env] ?? fallback)

const RECORDS = Number(opt('records', 'SCALE_RECORDS', '1000000'))
const USERS = Number(opt('users', 'SCALE_USERS', String(Math.max(1, Math.round(RECORDS / 20)))))
const DB = opt('db', 'SCALE_DB', '/var/tmp/convotrack-scale.db')
const PG_DIR = args['pg-dir'] ?? process.env.SCALE_PG_DIR
const SLICE = Math.min(RECORDS, Number(opt('slice', 'SCALE_SLICE', '200000')))
const SEED = opt('seed', 'SCALE_SEED', 'store')
/** Bulk seeding stops at this time (ISO 8601) even short of N: the slice through /track/batch follows, then the reads. */
const SEED_UNTIL = Date.parse(opt('seed-until', 'SCALE_SEED_UNTIL', '')) || Number.POSITIVE_INFINITY
const INTERLEAVED = args.interleaved === true || process.env.SCALE_INTERLEAVED === '1'
/** `--seed bulk` without the analytics' summaries (their derivation is the longest: an hour at 10 M on a shared machine); their reads are not timed. */
const ANALYTICS = args['no-analytics'] !== true
const BATCH = 500
const IN_FLIGHT = 4
const RUNS = 5
const BOT = 'bench'
const KEY = 'bench-key'

// Event time ends at the last full 10 minutes, so a resumed load (minutes later) writes the same times.
const shape: ScaleShape = {
  records: RECORDS,
  users: USERS,
  end: Math.floor(Date.now() / 600_000) * 600_000,
  days: 90,
  interleaved: INTERLEAVED,
}

const wire = (i: number) => {
  const r = scaleRecord(i, shape)
  return { ...r, idempotencyKey: `s.${i.toString(36)}` }
}

/** Record i as ingest accepts it (validated as the batch route does), keyed as on the wire. */
const accepted = acceptedScaleRecord(shape, 's.')

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

/** The bench's own store (seeding, counting): a 10-minute query timeout, as a count of 10 M rows takes a while. */
async function openStore(db: string): Promise<RecordStore> {
  return isPostgresUrl(db) ? PgRecordStore.open(db, { queryTimeoutMs: 600_000 }) : new SqliteRecordStore(db)
}

function progress(label: string, from: number, to: number) {
  const t0 = performance.now()
  let shown = from
  return (done: number) => {
    if (done - shown < 100_000 && (done < to || shown === to)) return
    shown = done
    const rate = (done - from) / ((performance.now() - t0) / 1000)
    const eta = (to - done) / rate
    log(
      `${label}: ${done.toLocaleString('en')} / ${to.toLocaleString('en')} (${Math.round(rate)} rec/s, ${Math.round(eta)} s left)`,
    )
  }
}

/**
 * Records [from, to) through the ingest code in this process, batches of 500, `parallel` in flight;
 * stops early at SEED_UNTIL. Returns the rate and where it stopped.
 */
async function seedInProcess(
  store: RecordStore,
  from: number,
  to: number,
  parallel: number,
): Promise<{ rate: number; end: number }> {
  const feed = new LiveFeed()
  const show = progress('seed (in-process ingest, no HTTP)', from, to)
  const t0 = performance.now()
  let next = from
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < to && Date.now() < SEED_UNTIL) {
        const start = next
        next = Math.min(to, next + BATCH)
        const batch = Array.from({ length: next - start }, (_, j) => accepted(start + j))
        await ingestMany(store, feed, batch)
        show(next)
      }
    }),
  )
  return { rate: (next - from) / ((performance.now() - t0) / 1000), end: next }
}

/** Records [from, to) through POST /track/batch, IN_FLIGHT batches in flight over the collectors. */
async function ingestHttp(collectors: CollectorProcess[], from: number, to: number): Promise<number> {
  const pools = collectors.map((c) => new Pool(c.url, { connections: IN_FLIGHT, keepAliveTimeout: 60_000 }))
  const show = progress('ingest POST /track/batch', from, to)
  let next = from
  let refused = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, lane) => {
      const pool = pools[lane % pools.length] as Pool
      while (next < to) {
        const start = next
        next = Math.min(to, next + BATCH)
        const records = Array.from({ length: next - start }, (_, j) => {
          const r = wire(start + j)
          return `{"platform":"${r.platform}","type":"${r.type}","v":"11.1.0-rest","idempotencyKey":"${r.idempotencyKey}","body":${r.body}}`
        })
        for (let attempt = 0; ; attempt++) {
          const res = await pool.request({
            method: 'POST',
            path: `/track/batch?apiKey=${KEY}`,
            headers: { 'content-type': 'application/json' },
            body: `{"records":[${records.join(',')}]}`,
          })
          const text = await res.body.text()
          if (res.statusCode === 200) {
            const answer = JSON.parse(text) as { refused: number }
            refused += answer.refused
            break
          }
          if (res.statusCode !== 503 || attempt >= 5)
            throw new Error(`/track/batch answered ${res.statusCode}: ${text}`)
        }
        show(next)
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  await Promise.all(pools.map((p) => p.close()))
  if (refused > 0) throw new Error(`/track/batch refused ${refused} records`)
  return (to - from) / seconds
}

interface Timing {
  median: number
  max: number
  /** The status of the answers that were not 200 (200 when none). */
  status: number
  /** How many of the runs were not 200. */
  failed: number
}

async function timeRead(url: string): Promise<Timing> {
  const ms: number[] = []
  let status = 0
  let failed = 0
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    const res = await fetch(url)
    await res.arrayBuffer()
    ms.push(performance.now() - t0)
    if (res.status !== 200) {
      status = res.status
      failed++
    }
  }
  ms.sort((a, b) => a - b)
  return { median: ms[Math.floor(RUNS / 2)] as number, max: ms[RUNS - 1] as number, status: status || 200, failed }
}

/** The time from a first request to its 200 (asking again after each 202's `Retry-After`). */
async function firstAnswer(url: string): Promise<Timing> {
  const t0 = performance.now()
  for (;;) {
    const res = await fetch(url)
    await res.arrayBuffer()
    if (res.status !== 202) {
      const ms = performance.now() - t0
      return { median: ms, max: ms, status: res.status, failed: res.status === 200 ? 0 : 1 }
    }
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000))
  }
}

/** From posting one record to its message on an open `/api/stream`, 5 times. */
async function timeStream(base: string): Promise<Timing> {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const ac = new AbortController()
    const res = await fetch(`${base}/api/stream`, { signal: ac.signal })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let seen = ''
    const until = async (needle: string) => {
      while (!seen.includes(needle)) {
        const { value, done } = await reader.read()
        if (done) throw new Error('stream ended')
        seen += decoder.decode(value, { stream: true })
      }
    }
    await until('retry:')
    const text = `live probe ${Date.now()}-${i}`
    const t0 = performance.now()
    const posted = await fetch(`${base}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text, userId: 'live-probe' }),
    })
    if (posted.status !== 201) throw new Error(`/track answered ${posted.status}`)
    await until(text)
    ms.push(performance.now() - t0)
    ac.abort()
    await reader.cancel().catch(() => undefined)
  }
  ms.sort((a, b) => a - b)
  return { median: ms[Math.floor(RUNS / 2)] as number, max: ms[RUNS - 1] as number, status: 200, failed: 0 }
}

/**
 * The end of the past ranges the overview is timed over: a UTC midnight 7 days before the load's
 * end (the dashboard's ranges are local midnights; UTC is kept), and the same range moved 5 hours
 * later, its edges inside UTC days.
 */
const PAST_TO = Math.floor((Date.now() - 7 * DAY_MS) / DAY_MS) * DAY_MS
const past = (shift: number) =>
  `reports/overview?from=${new Date(PAST_TO - 30 * DAY_MS + shift).toISOString()}&to=${new Date(PAST_TO + shift).toISOString()}`

/** The dashboard's reads, by name → path (the range's query is appended). */
const READS: Array<[name: string, path: string]> = [
  ['/api/stats', 'stats'],
  ['/api/conversations', 'conversations'],
  ['/api/messages?limit=100 (firehose)', 'messages?limit=100'],
  ['/api/reports/not-handled', 'reports/not-handled'],
  ['/api/reports/intents', 'reports/intents'],
  ['/api/reports/events', 'reports/events'],
  ['/api/reports/segments', 'reports/segments'],
  ['/api/reports/timeline?bucket=hour', 'reports/timeline?bucket=hour'],
  ['/api/reports/timeline?bucket=day', 'reports/timeline?bucket=day'],
  ['/api/transcript (page of 200)', `transcript?bot=${BOT}&thread=user-0&limit=200`],
  // The analytics (issue 28): from here on.
  ['/api/reports/overview', 'reports/overview'],
  // A range that ends in the past (records stored after it). Whole UTC days: pairs of days (the
  // previous-day summary). Edges inside days: the same sum over its whole UTC days and the users of
  // its two partial days not active on them (the day links; README "Users"). Each timed for that
  // one range only.
  ['/api/reports/overview (30 whole days ending 7 days ago; one range)', past(0)],
  ['/api/reports/overview (30 days ending 7 days ago, edges inside days; one range)', past(5 * 3_600_000)],
  ['/api/reports/retention?period=week', 'reports/retention?period=week'],
  [
    '/api/reports/funnel (greeting → order.status → purchase)',
    'reports/funnel?steps=intent:greeting,intent:order.status,event:purchase',
  ],
  ['/api/reports/paths?depth=4', 'reports/paths?depth=4'],
  ['/api/reports/not-handled/clusters', 'reports/not-handled/clusters'],
  ['/api/search?q=order (first page)', 'search?q=order'],
  ['/api/search?q="speak to" human*', `search?q=${encodeURIComponent('"speak to" human*')}`],
  // A word in no message: its page is the count and the full-text index alone (on PostgreSQL the
  // planner, left to itself, tested every message of the range: a 503 at 10 M).
  ['/api/search?q=refund (in no message)', 'search?q=refund'],
  ['/api/reports/retention?period=day', 'reports/retention?period=day'],
  ['/api/reports/retention?period=month', 'reports/retention?period=month'],
  // A zone not in retentionZones, kept on demand since its first request (prepared before the reads).
  [
    '/api/reports/retention?period=week&tz=Asia/Tokyo (kept on demand)',
    'reports/retention?period=week&tz=Asia%2FTokyo',
  ],
  ['/api/reports/paths?depth=8', 'reports/paths?depth=8'],
  ['/api/reports/usage (LLM tokens, issue 31)', 'reports/usage'],
]

/** The reads before the analytics' ones. */
const CORE_READS = READS.findIndex(([name]) => name.startsWith('/api/reports/overview'))

const RANGES: Array<[name: string, query: string]> = [
  ['default (last 30 days)', ''],
  ['all time', 'all=1'],
]

async function main(): Promise<void> {
  let server: PostgresServer | undefined
  let db = DB
  if (DB === 'pg') {
    if (PG_DIR) mkdirSync(PG_DIR, { recursive: true })
    server = await startPostgres(PG_DIR ? { dir: PG_DIR } : {})
    db = await server.ensureDatabase('scale')
  }
  const pgBackend = isPostgresUrl(db)
  const collectorCount = Number(opt('collectors', 'SCALE_COLLECTORS', pgBackend ? '2' : '1'))
  const backend = pgBackend ? 'PostgreSQL 15' : 'SQLite file (WAL)'
  log(
    `${backend} at ${db}: ${RECORDS.toLocaleString('en')} records, ${USERS.toLocaleString('en')} users, 90 days of event time`,
  )
  const collectors: CollectorProcess[] = []
  try {
    let seedRate: number | undefined
    let store = await openStore(db)
    let have = (await store.counts()).records
    let deriveSeconds = 0
    if (SEED === 'bulk') {
      // Straight into the tables, then the summaries derived from them (bench/scale-bulk.ts).
      await store.close()
      const until = RECORDS - SLICE
      // (bulkSeedPostgres checks the records table itself: an interrupted derive leaves the summaries' count short.)
      if (have < until) {
        if (pgBackend) seedRate = (await bulkSeedPostgres(db, until, accepted, log)).rate
        else ({ rate: seedRate, deriveSeconds } = bulkSeedSqlite(db, until, accepted, log))
      }
      if (pgBackend) deriveSeconds = (await deriveIfPending(db, log, { analytics: ANALYTICS })) || deriveSeconds
      store = await openStore(db)
      have = (await store.counts()).records
    }
    const httpFrom = SEED === 'http' ? 0 : RECORDS - SLICE
    // A resumed load starts a little before the count (batches in flight may have landed out of order).
    const resume = SEED === 'bulk' ? have : Math.max(0, have - IN_FLIGHT * BATCH)
    if (have > 0) log(`store holds ${have.toLocaleString('en')} records: resuming at ${resume.toLocaleString('en')}`)
    let sliceFrom = Math.max(resume, httpFrom)
    if (resume < httpFrom) {
      const seeded = await seedInProcess(store, resume, httpFrom, pgBackend ? 3 : 1)
      seedRate = seeded.rate
      if (seeded.end < httpFrom) {
        log(`seeding stopped at ${seeded.end.toLocaleString('en')} records (--seed-until): a load of fewer than N`)
        sliceFrom = seeded.end
      }
    }
    // The operators' actions (handoffs), once: every store loaded before them lacks them.
    if (ANALYTICS) await ensureHandoffs(db, log)
    for (let c = 0; c < collectorCount; c++) collectors.push(await startCollectorProcess(db))
    let ingestRate: number | undefined
    if (have < RECORDS)
      ingestRate = await ingestHttp(collectors, sliceFrom, sliceFrom + Math.min(SLICE, RECORDS - sliceFrom))
    const base = (collectors[0] as CollectorProcess).url
    // The users' ratings (scale-feedback.ts), once the load is whole (not cut short by --seed-until):
    // every store loaded before them lacks them.
    if (ANALYTICS && (await store.counts()).records >= RECORDS) {
      const { count } = (await store.overview({ bot: BOT })).feedback
      await ensureFeedback(store, shape, count, pgBackend ? 3 : 1, log)
    }
    if (ANALYTICS && store instanceof PgRecordStore) {
      // The funnel steps packed (funnel-packs-pg.ts) by the job a collector runs 5 minutes after it
      // starts and every hour: run here first, so that no read is timed while it packs.
      const t0 = performance.now()
      await store.repackFunnels()
      log(`funnel steps packed in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    } else if (ANALYTICS) {
      // SQLite: the packs are kept in the collector's process (funnel-packs-memory.ts), made by the job
      // it starts a second after it opens: waited for, so that no read is timed while it runs.
      for (const c of collectors)
        log(`funnel steps packed in the collector in ${((await c.repackFunnels()) / 1000).toFixed(1)} s`)
    }
    // Counted here, not by a collector: its reads have a query timeout the count may not meet.
    const counts = await store.counts()
    await store.close()
    log(
      `store: ${counts.records.toLocaleString('en')} records, ${counts.messages.toLocaleString('en')} messages; timing reads`,
    )
    if (ANALYTICS) {
      // A zone not in retentionZones becomes kept on demand at its first request (202 while prepared).
      const asked = performance.now()
      const status = async () => {
        const res = await fetch(`${base}/api/reports/retention?period=week&tz=Asia%2FTokyo`)
        await res.arrayBuffer()
        return res.status
      }
      while ((await status()) === 202) await new Promise((r) => setTimeout(r, 1000))
      log(`Asia/Tokyo kept on demand: prepared in ${((performance.now() - asked) / 1000).toFixed(1)} s`)
    }
    const rows: Array<{ read: string; timings: Timing[] }> = []
    for (const [name, path] of ANALYTICS ? READS : READS.slice(0, CORE_READS)) {
      // A path with its own range is timed for that range alone (the first column).
      const ranges = path.includes('from=') ? RANGES.slice(0, 1) : RANGES
      if (path.startsWith('reports/funnel') || path.startsWith('reports/overview')) {
        // Counted off the request path and kept (answer-cache.ts): the time to its first answer, then the reads.
        const first: Timing[] = []
        const sep = path.includes('?') ? '&' : '?'
        for (const [, query] of ranges) first.push(await firstAnswer(`${base}/api/${path}${query ? sep + query : ''}`))
        rows.push({ read: `${name}: first answer (202 until counted)`, timings: first })
      }
      const timings: Timing[] = []
      for (const [, query] of ranges) {
        const sep = path.includes('?') ? '&' : '?'
        timings.push(await timeRead(`${base}/api/${path}${query ? sep + query : ''}`))
      }
      rows.push({ read: name, timings })
    }
    rows.push({ read: 'live stream: POST /track → its event on /api/stream', timings: [await timeStream(base)] })

    const f = (t: Timing | undefined) =>
      t === undefined
        ? '—'
        : `${t.median.toFixed(t.median < 10 ? 1 : 0)} / ${t.max.toFixed(t.max < 10 ? 1 : 0)} ms${t.failed ? ` (${t.failed} × ${t.status})` : ''}`
    console.log(
      `\n${backend}, ${counts.records.toLocaleString('en')} records (${counts.messages.toLocaleString('en')} messages), ` +
        `${USERS.toLocaleString('en')} users — node ${process.version}, ${cpus().length} CPUs, ${collectorCount} collector process(es)`,
    )
    console.log(
      `ingest through /track/batch (${IN_FLIGHT} × ${BATCH} in flight): ${ingestRate ? `${Math.round(ingestRate)} rec/s` : 'not measured (store already loaded)'}` +
        (seedRate ? ` · seed (${SEED}, no HTTP): ${Math.round(seedRate)} rec/s` : '') +
        (deriveSeconds ? ` · summaries derived in ${Math.round(deriveSeconds)} s` : ''),
    )
    if (!ANALYTICS) console.log('analytics summaries not derived (--no-analytics): their reads are not timed')
    console.log(`\n| read (median / max of ${RUNS}) | ${RANGES.map(([n]) => n).join(' | ')} |`)
    console.log(`|---|${RANGES.map(() => '---').join('|')}|`)
    for (const r of rows) console.log(`| ${r.read} | ${RANGES.map((_, i) => f(r.timings[i])).join(' | ')} |`)
    console.log(
      JSON.stringify({
        backend,
        records: counts.records,
        messages: counts.messages,
        users: USERS,
        ingestRate,
        seedRate,
        deriveSeconds,
        reads: Object.fromEntries(rows.map((r) => [r.read, r.timings])),
      }),
    )
    if (rows.some((r) => r.timings.some((t) => t.status !== 200))) process.exitCode = 1
  } finally {
    for (const c of collectors) await c.stop()
    if (server) await (PG_DIR ? server.stop() : server.destroy())
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
