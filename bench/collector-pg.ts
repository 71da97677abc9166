/**
 * The collector on PostgreSQL vs SQLite, in the same run (quote the ratio, not the figures):
 *  (a) end to end: records/s a real core tracker (default options, one record per request —
 *      the collector of this branch has no batch route yet) gets acknowledged by a collector
 *      on a SQLite file vs on PostgreSQL (a local server started for the run);
 *  (b) the store's batch path: records/s through `store.addMany` in batches of 500 (what a batch
 *      route stores per request).
 *
 *   npx tsx bench/collector-pg.ts                  # 10 000 records per run
 *   BENCH_RECORDS=4000 npx tsx bench/collector-pg.ts
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

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000)
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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-bench-pg-'))
  const server = await startPostgres()
  try {
    const sqliteE2e = await endToEnd(join(dir, 'e2e.db'))
    const pgE2e = await endToEnd(await server.createDatabase('bench_e2e'))
    const sqlite = new SqliteRecordStore(join(dir, 'batch.db'))
    const sqliteBatch = await storeBatches(sqlite)
    await sqlite.close()
    const pgStore = await PgRecordStore.open(await server.createDatabase('bench_batch'))
    const pgBatch = await storeBatches(pgStore)
    await pgStore.close()
    const r = (n: number) => Math.round(n)
    console.log(
      `collector on PostgreSQL vs SQLite — node ${process.version}, ${cpus().length} CPUs, ${RECORDS} records`,
    )
    console.log('  (a) end to end, core tracker (default options, one record per request) → POST /track → store')
    console.log(`      SQLite (file, WAL)   ${r(sqliteE2e)} records/s`)
    console.log(`      PostgreSQL (local)   ${r(pgE2e)} records/s   → ${(pgE2e / sqliteE2e).toFixed(2)}× SQLite`)
    console.log(`  (b) store.addMany, batches of ${BATCH} with idempotency keys`)
    console.log(`      SQLite (file, WAL)   ${r(sqliteBatch)} records/s`)
    console.log(`      PostgreSQL (local)   ${r(pgBatch)} records/s   → ${(pgBatch / sqliteBatch).toFixed(2)}× SQLite`)
    console.log(
      JSON.stringify({
        records: RECORDS,
        sqliteE2e: r(sqliteE2e),
        pgE2e: r(pgE2e),
        sqliteBatch: r(sqliteBatch),
        pgBatch: r(pgBatch),
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
