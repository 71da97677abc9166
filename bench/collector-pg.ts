/**
 * The collector on PostgreSQL vs SQLite, in the same run (quote the ratio, not the figures):
 *  (a) end to end: records/s a real core tracker with its default options (it discovers the
 *      collector's batch route and sends batches with idempotency keys) gets acknowledged by a
 *      collector on a SQLite file vs on PostgreSQL (a local server started for the run);
 *  (b) the store's batch path: records/s through `store.addMany` in batches of 500 (what a batch
 *      route stores per request).
 *
 *   npx tsx bench/collector-pg.ts                  # 20 000 records per run, 3 alternating rounds
 *   BENCH_RECORDS=2000 BENCH_ROUNDS=5 npx tsx bench/collector-pg.ts
 *
 * The two stores run alternately (SQLite, PostgreSQL, SQLite, …) so background load hits both
 * alike; the ratio quoted is the median of the rounds' ratios.
 *
 * Needs Debian's postgresql package (scripts/ensure-system-deps.sh installs it).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTracker } from '@convotrack/core'
import {
  normalizeRecord,
  PgRecordStore,
  type RecordStore,
  SqliteRecordStore,
  startCollector,
} from '../packages/collector/src/index'
import { startPostgres } from '../packages/collector/test/support/postgres'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const BATCH = 500

const body = (i: number) => ({
  text: `where is my order number ${i}?`,
  userId: `user-${i % 500}`,
  conversationId: `conv-${i % 500}`,
  platformUserJson: { locale: 'en_GB', plan: i % 3 === 0 ? 'pro' : 'free' },
})

async function endToEnd(db: string): Promise<number> {
  const collector = await startCollector({
    port: 0,
    db,
    demoBot: false,
    bots: [{ name: 'bench', apiKey: 'bench-key' }],
  })
  try {
    const warm = createTracker({ apiKey: 'bench-key', baseUrl: collector.url })
    for (let i = 0; i < 500; i++) warm.universal.logIncoming(body(i))
    await warm.close()
    const tracker = createTracker({ apiKey: 'bench-key', baseUrl: collector.url, maxQueueSize: RECORDS })
    const t0 = performance.now()
    for (let i = 0; i < RECORDS; i++) tracker.universal.logIncoming(body(i))
    const flushed = await tracker.flush(300_000)
    const seconds = (performance.now() - t0) / 1000
    await tracker.close()
    if (flushed.sent !== RECORDS || flushed.failed !== 0) throw new Error(`delivery failed: ${JSON.stringify(flushed)}`)
    return RECORDS / seconds
  } finally {
    await collector.close()
  }
}

async function storeBatches(store: RecordStore): Promise<number> {
  const items = (from: number) =>
    Array.from({ length: BATCH }, (_, j) => {
      const b = body(from + j)
      const raw = JSON.stringify(b)
      return {
        record: {
          bot: 'bench',
          platform: 'universal' as const,
          type: 'incoming' as const,
          v: '11.1.0-rest' as const,
          raw,
          receivedAt: Date.now(),
          idempotencyKey: `bench.${(from + j).toString(36)}`,
        },
        messages: normalizeRecord('universal', 'incoming', b),
      }
    })
  await store.addMany(items(10_000_000)) // warm-up
  const t0 = performance.now()
  for (let i = 0; i < RECORDS; i += BATCH) await store.addMany(items(i))
  const seconds = (performance.now() - t0) / 1000
  const counts = await store.counts()
  if (counts.records !== RECORDS + BATCH) throw new Error(`stored ${counts.records}`)
  return RECORDS / seconds
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-bench-pg-'))
  const server = await startPostgres()
  const runs = {
    sqliteE2e: [] as number[],
    pgE2e: [] as number[],
    sqliteBatch: [] as number[],
    pgBatch: [] as number[],
  }
  try {
    for (let round = 0; round < ROUNDS; round++) {
      runs.sqliteE2e.push(await endToEnd(join(dir, `e2e-${round}.db`)))
      runs.pgE2e.push(await endToEnd(await server.createDatabase(`bench_e2e_${round}`)))
      const sqlite = new SqliteRecordStore(join(dir, `batch-${round}.db`))
      runs.sqliteBatch.push(await storeBatches(sqlite))
      await sqlite.close()
      const pgStore = await PgRecordStore.open(await server.createDatabase(`bench_batch_${round}`))
      runs.pgBatch.push(await storeBatches(pgStore))
      await pgStore.close()
    }
    const r = (n: number) => Math.round(n)
    const line = (name: string, a: number[], b: number[]) => {
      const ratios = a.map((x, i) => (b[i] ?? Number.NaN) / x)
      console.log(`  ${name}`)
      console.log(`      SQLite (file, WAL)   ${a.map(r).join(' / ')} records/s`)
      console.log(`      PostgreSQL (local)   ${b.map(r).join(' / ')} records/s`)
      console.log(
        `      PostgreSQL / SQLite  ${ratios.map((x) => x.toFixed(2)).join(' / ')} → median ${median(ratios).toFixed(2)}×`,
      )
      return median(ratios)
    }
    console.log(
      `collector on PostgreSQL vs SQLite — node ${process.version}, ${cpus().length} CPUs, ${RECORDS} records per run, ${ROUNDS} rounds`,
    )
    const e2e = line(
      '(a) end to end, core tracker (default options: batches) → POST /track/batch → store',
      runs.sqliteE2e,
      runs.pgE2e,
    )
    const batch = line(`(b) store.addMany, batches of ${BATCH} with idempotency keys`, runs.sqliteBatch, runs.pgBatch)
    console.log(
      JSON.stringify({
        records: RECORDS,
        rounds: ROUNDS,
        ...runs,
        e2eRatio: +e2e.toFixed(2),
        batchRatio: +batch.toFixed(2),
      }),
    )
  } finally {
    await server.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
