/**
 * A retention zone kept on demand, on a store loaded by `pnpm bench:scale` (SQLite): the first
 * request for a zone that is not kept (202), the time until its cohorts are prepared in the
 * background, the read after (median of 5, beside the answer from active hours it replaces), and
 * what the extra zone costs ingest (the same batches of records stored into two copies of the
 * store, one keeping only the option's zone and one with the extra zone, alternating AB/BA).
 *
 * Usage: node --import tsx bench/retention-zones.ts -- --db /var/tmp/my-copy.db [--zone Asia/Tokyo]
 *   [--rounds 10] [--batch 2000]. `--db` is never written to: the script copies it twice beside
 *   itself (`.a`, `.b`) and deletes the copies at the end.
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { type Collector, SqliteRecordStore, startCollector } from '../packages/collector/src/index'
import { prepare } from '../packages/collector/src/ingest/ingest'
import { type ScaleShape, scaleRecord } from './scale-records'

const arg = (name: string, fallback?: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  const v = i >= 0 ? process.argv[i + 1] : fallback
  if (v === undefined) throw new Error(`--${name} is required`)
  return v
}
const SRC = arg('db')
const ZONE = arg('zone', 'Asia/Tokyo')
const ROUNDS = Number(arg('rounds', '10'))
const BATCH = Number(arg('batch', '2000'))
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const ms = (t: number) => (t < 10 ? t.toFixed(1) : Math.round(t).toLocaleString('en'))

function copy(to: string): string {
  for (const ext of ['', '-wal']) if (existsSync(SRC + ext)) copyFileSync(SRC + ext, to + ext)
  return to
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now()
  const out = await fn()
  return [out, performance.now() - t]
}

async function read(c: Collector, query: string): Promise<[number, number]> {
  const [res, took] = await timed(() => fetch(`${c.url}/api/reports/retention?${query}`))
  await res.arrayBuffer()
  return [res.status, took]
}

async function main(): Promise<void> {
  const a = copy(`${SRC}.a`)
  const b = copy(`${SRC}.b`)
  const opened: Array<{ close(): Promise<void> }> = []
  try {
    // A: only the option's zone (UTC); the zone is answered from active hours. B: kept on demand.
    const storeA = new SqliteRecordStore(a, { retentionZonesOnDemand: 0 })
    const storeB = new SqliteRecordStore(b)
    const ca = await startCollector({ port: 0, store: storeA, demoBot: false })
    const cb = await startCollector({ port: 0, store: storeB, demoBot: false })
    opened.push(ca, cb, storeA, storeB)
    const zone = `tz=${encodeURIComponent(ZONE)}`

    const [status, first] = await read(cb, `period=week&${zone}`)
    log(`first request for ${ZONE}: HTTP ${status} in ${ms(first)} ms`)
    const [, prepared] = await timed(() => storeB.retentionZoneReady(ZONE))
    log(`prepared in ${(prepared / 1000).toFixed(1)} s (from the first request's answer)`)

    for (const [range, extra] of [
      ['default (last 30 days)', ''],
      ['all time', '&all=1'],
    ] as const)
      for (const period of ['week', 'day', 'month']) {
        const q = `period=${period}&${zone}${extra}`
        const kept: number[] = []
        for (let i = 0; i < 5; i++) kept.push((await read(cb, q))[1])
        // The answer it replaces, once per range (seconds each at 1 M records).
        const hours = period === 'week' ? [(await read(ca, q))[1]] : []
        log(
          `${range} ${period}: kept on demand ${ms(median(kept))} / ${ms(Math.max(...kept))} ms` +
            (hours.length ? `; from active hours ${ms(hours[0] as number)} ms` : ''),
        )
      }

    // Ingest: the same batches into A and B, alternating which goes first.
    const shape: ScaleShape = { records: 1_000_000, users: 50_000, end: Date.now(), days: 90, interleaved: true }
    const batch = (round: number) =>
      Array.from({ length: BATCH }, (_, k) => {
        const i = 2_000_000 + round * BATCH + k
        const r = scaleRecord(i, shape)
        const p = prepare(
          {
            bot: 'bench',
            platform: r.platform as never,
            type: r.type,
            v: '11.1.0-rest',
            raw: r.body,
            body: JSON.parse(r.body),
          },
          Date.now(),
        )
        return { record: { ...p.record, eventTs: r.ts }, messages: p.messages }
      })
    const times = { a: [] as number[], b: [] as number[] }
    for (let round = 0; round < ROUNDS; round++) {
      const items = batch(round)
      const order = round % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)
      for (const which of order) {
        const store = which === 'a' ? storeA : storeB
        times[which].push((await timed(() => store.addMany(items)))[1])
      }
    }
    const [ma, mb] = [median(times.a), median(times.b)]
    log(
      `ingest of ${BATCH} records (median of ${ROUNDS}): UTC only ${ms(ma)} ms, UTC + ${ZONE} ${ms(mb)} ms (×${(mb / ma).toFixed(2)})`,
    )
  } finally {
    for (const o of opened.reverse()) await o.close().catch(() => {})
    for (const f of [a, b]) for (const ext of ['', '-wal', '-shm']) rmSync(f + ext, { force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
