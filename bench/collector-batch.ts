/**
 * The collector's ingest path, single records vs batches, and where the time goes.
 *
 *   npx tsx bench/collector-batch.ts                 # 20 000 records
 *   BENCH_RECORDS=50000 npx tsx bench/collector-batch.ts
 *
 * (a) HTTP ingest into a collector in its own process on a SQLite file (WAL): `POST /track`
 *     with 8 keep-alive connections (one request in flight each) vs `POST /track/batch` with
 *     500 records per batch and 2 connections — records/s, and CPU per record of the collector
 *     process and of the client, measured in the same run.
 * (b) Where the time goes, in-process, per record: JSON parse, validation, normalisation,
 *     locating the raw bodies in a batch, and the SQLite write one transaction per record vs
 *     one transaction per 500 records.
 * Quote ratios: the machine is shared and timings are noisy.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { batchBodySpans } from '../packages/collector/src/http/batch-body-spans'
import { normalizeRecord, SqliteRecordStore, validateRecord } from '../packages/collector/src/index'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000)
const BATCH = 500

const locales = ['en_GB', 'de_DE', 'fr_FR', 'es_ES']
const intents = ['greeting', 'order.status', 'shop', 'NotHandled']

/** Universal records from 500 users (~250–350 bytes), alternating incoming and outgoing. */
export function benchRecord(i: number): { type: 'incoming' | 'outgoing'; body: string } {
  const userId = `user-${i % 500}`
  const incoming = i % 2 === 0
  const body = incoming
    ? {
        text: `where is my order number ${i}?`,
        userId,
        conversationId: `conv-${i % 500}`,
        intent: { name: intents[i % intents.length], confidence: 0.5 + (i % 50) / 100 },
        platformUserJson: { locale: locales[i % locales.length], plan: i % 3 === 0 ? 'pro' : 'free' },
      }
    : {
        text: 'Your order ships tomorrow. Anything else?',
        userId,
        conversationId: `conv-${i % 500}`,
        buttons: [
          { id: 'yes', label: 'Yes', value: 'yes' },
          { id: 'no', label: 'No', value: 'no' },
        ],
      }
  return { type: incoming ? 'incoming' : 'outgoing', body: JSON.stringify(body) }
}

export interface CollectorProcess {
  url: string
  child: ChildProcess
  /** CPU time of the collector process so far, µs. */
  cpu(): Promise<number>
  counts(): Promise<{ records: number; messages: number }>
  /** Runs the store's funnel packing job in that process (`repackFunnels`), ms. */
  repackFunnels(): Promise<number>
  restart(): Promise<string>
  stop(): Promise<void>
}

function ask<T>(child: ChildProcess, message: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return
      child.off('message', on)
      resolve(m[key] as T)
    }
    child.on('message', on)
    child.send(message)
  })
}

/** Starts bench/collector-process.ts on `db` (bot `bench`, key `bench-key`). */
export async function startCollectorProcess(db: string): Promise<CollectorProcess> {
  const child = fork(fileURLToPath(new URL('./collector-process.ts', import.meta.url)), {
    // BENCH_COLLECTOR_ARGS: extra node flags for the collector processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_COLLECTOR_ARGS?.split(' ').filter(Boolean) ?? [])],
    env: { ...process.env, BENCH_DB: db },
    stdio: 'inherit',
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(m.url))
    child.once('exit', (code) => reject(new Error(`collector process exited (${code})`)))
  })
  return {
    url,
    child,
    cpu: () => ask<number>(child, 'cpu', 'cpu'),
    counts: () => ask(child, 'counts', 'counts'),
    repackFunnels: () => ask<number>(child, 'repackFunnels', 'repacked'),
    restart: () => ask<string>(child, 'restart', 'url'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.send('stop')
      }),
  }
}

const clientCpu = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

async function httpIngest(mode: 'single' | 'batch', dir: string) {
  const collector = await startCollectorProcess(join(dir, `${mode}.db`))
  const connections = mode === 'single' ? 8 : 2
  const pool = new Pool(collector.url, { connections, pipelining: 1, keepAliveTimeout: 60_000 })
  const bodies = Array.from({ length: RECORDS }, (_, i) => benchRecord(i))
  let refused = 0
  const post = async (path: string, body: string, ok: number) => {
    const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body })
    const text = await res.body.text()
    if (res.statusCode !== ok) refused++
    else if (ok === 200) refused += (JSON.parse(text) as { refused: number }).refused
  }
  const units: Array<() => Promise<void>> = []
  if (mode === 'single')
    for (const r of bodies)
      units.push(() => post(`/track?platform=universal&type=${r.type}&v=11.1.0-rest&apiKey=bench-key`, r.body, 201))
  else
    for (let i = 0; i < bodies.length; i += BATCH) {
      const chunk = bodies.slice(i, i + BATCH)
      const text = `{"records":[${chunk
        .map(
          (r, j) =>
            `{"platform":"universal","type":"${r.type}","v":"11.1.0-rest","idempotencyKey":"b.${(i + j).toString(36)}","body":${r.body}}`,
        )
        .join(',')}]}`
      units.push(() => post('/track/batch?apiKey=bench-key', text, 200))
    }
  // Warm-up: a few units against the same collector (not counted).
  await post(
    '/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=bench-key',
    JSON.stringify({ text: 'warm-up', userId: 'w' }),
    201,
  )
  const cpu0 = await collector.cpu()
  const client0 = clientCpu()
  const t0 = process.hrtime.bigint()
  let next = 0
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < units.length) await (units[next++] as () => Promise<void>)()
    }),
  )
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  const cpu = (await collector.cpu()) - cpu0
  const client = clientCpu() - client0
  const counts = await collector.counts()
  await pool.close()
  await collector.stop()
  return {
    mode,
    recordsPerSecond: Math.round(RECORDS / seconds),
    seconds,
    collectorCpuUsPerRecord: cpu / RECORDS,
    clientCpuUsPerRecord: client / RECORDS,
    stored: counts.records - 1,
    refused,
  }
}

function time(fn: () => void): number {
  const t0 = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - t0) / 1e3 / RECORDS
}

async function phases(dir: string) {
  const records = Array.from({ length: RECORDS }, (_, i) => benchRecord(i))
  const parsed: Record<string, unknown>[] = []
  const parse = time(() => {
    for (const r of records) parsed.push(JSON.parse(r.body))
  })
  const validate = time(() => {
    for (const [i, r] of records.entries()) validateRecord('universal', r.type, parsed[i])
  })
  const normalized = records.map((r, i) => normalizeRecord('universal', r.type, parsed[i] as Record<string, unknown>))
  const normalize = time(() => {
    for (const [i, r] of records.entries()) normalizeRecord('universal', r.type, parsed[i] as Record<string, unknown>)
  })
  const texts: string[] = []
  for (let i = 0; i < records.length; i += BATCH)
    texts.push(
      `{"records":[${records
        .slice(i, i + BATCH)
        .map((r) => `{"platform":"universal","type":"${r.type}","v":"11.1.0-rest","body":${r.body}}`)
        .join(',')}]}`,
    )
  const batchParse = time(() => {
    for (const t of texts) JSON.parse(t)
  })
  const spans = time(() => {
    for (const t of texts) batchBodySpans(t)
  })
  const restringify = time(() => {
    for (const p of parsed) JSON.stringify(p)
  })
  const item = (i: number, key?: string) => ({
    record: {
      bot: 'bench',
      platform: 'universal' as const,
      type: records[i]!.type,
      v: '11.1.0-rest' as const,
      raw: records[i]!.body,
      receivedAt: Date.now(),
      idempotencyKey: key,
    },
    messages: normalized[i]!,
  })
  const storeOne = new SqliteRecordStore(join(dir, 'phase-one.db'))
  let t0 = process.hrtime.bigint()
  for (let i = 0; i < RECORDS; i++) await storeOne.add(item(i).record, item(i).messages)
  const addEach = Number(process.hrtime.bigint() - t0) / 1e3 / RECORDS
  await storeOne.close()
  const storeMany = new SqliteRecordStore(join(dir, 'phase-many.db'))
  t0 = process.hrtime.bigint()
  for (let i = 0; i < RECORDS; i += BATCH)
    await storeMany.addMany(Array.from({ length: Math.min(BATCH, RECORDS - i) }, (_, j) => item(i + j)))
  const addMany = Number(process.hrtime.bigint() - t0) / 1e3 / RECORDS
  await storeMany.close()
  const storeKeyed = new SqliteRecordStore(join(dir, 'phase-keyed.db'))
  t0 = process.hrtime.bigint()
  for (let i = 0; i < RECORDS; i += BATCH)
    await storeKeyed.addMany(
      Array.from({ length: Math.min(BATCH, RECORDS - i) }, (_, j) => item(i + j, `k.${(i + j).toString(36)}`)),
    )
  const addManyKeyed = Number(process.hrtime.bigint() - t0) / 1e3 / RECORDS
  await storeKeyed.close()
  return { parse, validate, normalize, batchParse, spans, restringify, addEach, addMany, addManyKeyed }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-bench-batch-'))
  try {
    const single = await httpIngest('single', dir)
    const batch = await httpIngest('batch', dir)
    const p = await phases(dir)
    const us = (n: number) => `${n.toFixed(1)} µs`
    console.log(
      `collector ingest — node ${process.version}, ${cpus().length} CPUs, SQLite file (WAL), ${RECORDS} records`,
    )
    for (const r of [single, batch])
      console.log(
        `  ${r.mode === 'single' ? 'POST /track (8 conns)     ' : `POST /track/batch (${BATCH}/batch)`}  ${String(r.recordsPerSecond).padStart(7)} records/s · collector CPU ${us(r.collectorCpuUsPerRecord)}/record · client CPU ${us(r.clientCpuUsPerRecord)}/record · stored ${r.stored}, refused ${r.refused}`,
      )
    console.log(
      `  batch / single: ${(batch.recordsPerSecond / single.recordsPerSecond).toFixed(1)}× records/s, ${(single.collectorCpuUsPerRecord / batch.collectorCpuUsPerRecord).toFixed(1)}× less collector CPU per record`,
    )
    console.log('  where the time goes, per record (in-process):')
    console.log(`    JSON.parse of one /track body   ${us(p.parse)}`)
    console.log(`    JSON.parse share of a batch     ${us(p.batchParse)}`)
    console.log(`    locating raw bodies in a batch  ${us(p.spans)}   (vs re-stringify ${us(p.restringify)})`)
    console.log(`    validateRecord                  ${us(p.validate)}`)
    console.log(`    normalizeRecord                 ${us(p.normalize)}`)
    console.log(`    SQLite, 1 transaction/record    ${us(p.addEach)}`)
    console.log(
      `    SQLite, 1 transaction/${BATCH}      ${us(p.addMany)}   (with idempotency keys ${us(p.addManyKeyed)})`,
    )
    console.log(JSON.stringify({ single, batch, phases: p }))
    if (single.stored !== RECORDS || batch.stored !== RECORDS || single.refused + batch.refused > 0)
      process.exitCode = 1
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
}
