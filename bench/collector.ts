/**
 * Collector ingest benchmark: records/s that `POST /track` accepts from a keep-alive client,
 * latency percentiles, and the SQLite file size per 100 000 records.
 *
 *   npx tsx bench/collector.ts                    # 100 000 records, 8 keep-alive connections
 *   BENCH_RECORDS=20000 BENCH_CONNECTIONS=4 npx tsx bench/collector.ts
 *
 * Each connection runs one request at a time (what the SDK's transport does per socket), so
 * latency is the server's answer time, not time spent queued in the client.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { startCollector } from '../packages/collector/src/index'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const WARMUP = Math.min(2_000, Math.floor(RECORDS / 10))

const locales = ['en_GB', 'de_DE', 'fr_FR', 'es_ES']
const intents = ['greeting', 'order.status', 'shop', 'NotHandled']

/** Realistic universal records (~250–350 bytes), alternating incoming and outgoing. */
function record(i: number): { query: string; body: string } {
  const userId = `user-${i % 5_000}`
  const incoming = i % 2 === 0
  const body = incoming
    ? {
        text: `where is my order number ${i}?`,
        userId,
        conversationId: `conv-${i % 5_000}`,
        intent: { name: intents[i % intents.length], confidence: 0.5 + (i % 50) / 100 },
        platformUserJson: { locale: locales[i % locales.length], plan: i % 3 === 0 ? 'pro' : 'free' },
      }
    : {
        text: 'Your order ships tomorrow. Anything else?',
        userId,
        conversationId: `conv-${i % 5_000}`,
        buttons: [
          { id: 'yes', label: 'Yes', value: 'yes' },
          { id: 'no', label: 'No', value: 'no' },
        ],
      }
  return {
    query: `/track?platform=universal&type=${incoming ? 'incoming' : 'outgoing'}&v=11.1.0-rest&apiKey=bench-key`,
    body: JSON.stringify(body),
  }
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-bench-'))
  const db = join(dir, 'bench.db')
  const collector = await startCollector({
    port: 0,
    db,
    demoBot: false,
    bots: [{ name: 'bench', apiKey: 'bench-key' }],
  })
  const pool = new Pool(collector.url, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 })
  const latencies = new Float64Array(RECORDS)
  let failures = 0

  const send = async (i: number): Promise<number> => {
    const { query, body } = record(i)
    const t0 = process.hrtime.bigint()
    const res = await pool.request({
      method: 'POST',
      path: query,
      headers: { 'content-type': 'application/json' },
      body,
    })
    await res.body.dump()
    if (res.statusCode !== 201) failures++
    return Number(process.hrtime.bigint() - t0) / 1e6
  }

  const run = async (from: number, to: number, record?: Float64Array) => {
    let next = from
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < to) {
          const i = next++
          const ms = await send(i)
          if (record) record[i - from] = ms
        }
      }),
    )
  }

  try {
    await run(0, WARMUP)
    const before = await collector.store.counts()
    const t0 = process.hrtime.bigint()
    await run(WARMUP, WARMUP + RECORDS, latencies)
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    const after = await collector.store.counts()
    await pool.close()
    await collector.close() // checkpoints the WAL into the main file
    const bytes = statSync(db).size
    const stored = after.records
    latencies.sort()
    const fmt = (n: number) => n.toFixed(2)
    console.log(
      `collector ingest — node ${process.version}, ${cpus().length} CPUs, SQLite file (WAL), ${CONNECTIONS} keep-alive connections`,
    )
    console.log(`  records sent        ${RECORDS} (+${WARMUP} warm-up), refused ${failures}`)
    console.log(`  stored              ${after.records - before.records} records in this run`)
    console.log(`  throughput          ${Math.round(RECORDS / seconds)} records/s (${fmt(seconds)} s)`)
    console.log(
      `  latency             p50 ${fmt(percentile(latencies, 50))} ms · p90 ${fmt(percentile(latencies, 90))} ms · p99 ${fmt(percentile(latencies, 99))} ms · max ${fmt(latencies[latencies.length - 1] ?? 0)} ms`,
    )
    console.log(
      `  SQLite size         ${(bytes / 1024 / 1024).toFixed(1)} MiB for ${stored} records → ${(((bytes / stored) * 100_000) / 1024 / 1024).toFixed(1)} MiB per 100 000 records (${Math.round(bytes / stored)} B/record, raw JSON + normalized row + indexes)`,
    )
    if (failures > 0) process.exitCode = 1
  } finally {
    await pool.close().catch(() => {})
    await collector.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
