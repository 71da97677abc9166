/**
 * End to end into the collector: a default tracker vs the same tracker with `batch: false`,
 * logging 20 000 universal records from 500 users into a collector on a SQLite file, in the
 * same run.
 *
 *   npx tsx bench/batch-e2e.ts
 *   BENCH_RECORDS=50000 npx tsx bench/batch-e2e.ts
 *
 * The collector runs in its own process (bench/collector-process.ts) so the CPU per record of
 * each side is measured apart; the bot logs in turns of 500 records and, like a bot whose
 * traffic outruns the service, waits while 5 000 or more are queued (default `maxQueueSize` is
 * 10 000, so nothing is dropped in either mode). Records/s = records / (first log → `flush()`
 * resolved). Every record must be stored (counted in the collector) or the run fails.
 * Also prints the collector's ingest alone (bench/collector-batch.ts's HTTP part).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createTracker, type TrackerOptions } from '@convotrack/core'
import { benchRecord, startCollectorProcess } from './collector-batch'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000)
const TURN = 500
const HIGH_WATER = 5_000

const cpuNow = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

async function run(mode: 'default' | 'batch: false', dir: string) {
  const collector = await startCollectorProcess(join(dir, `${mode === 'default' ? 'default' : 'single'}.db`))
  const options: TrackerOptions & { batch?: boolean } = { apiKey: 'bench-key', baseUrl: collector.url }
  if (mode === 'batch: false') options.batch = false
  const tracker = createTracker(options as TrackerOptions)
  const bodies = Array.from({ length: RECORDS }, (_, i) => ({
    type: benchRecord(i).type,
    message: JSON.parse(benchRecord(i).body),
  }))
  try {
    // Warm-up: one record (and the discovery of batches, in default mode).
    tracker.universal.logIncoming({ text: 'warm-up', userId: 'warm-up' })
    await tracker.flush(30_000)
    const collectorCpu0 = await collector.cpu()
    const trackerCpu0 = cpuNow()
    const t0 = process.hrtime.bigint()
    let waits = 0
    for (let i = 0; i < RECORDS; i++) {
      const { type, message } = bodies[i] as (typeof bodies)[number]
      if (type === 'incoming') tracker.universal.logIncoming(message)
      else tracker.universal.logOutgoing(message)
      if (i % TURN === TURN - 1) {
        await new Promise((r) => setImmediate(r))
        while (tracker.stats().queued >= HIGH_WATER) {
          waits++
          await sleep(1)
        }
      }
    }
    const result = await tracker.flush(300_000)
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    const trackerCpu = cpuNow() - trackerCpu0
    const collectorCpu = (await collector.cpu()) - collectorCpu0
    const counts = await collector.counts()
    return {
      mode,
      recordsPerSecond: Math.round(RECORDS / seconds),
      seconds: +seconds.toFixed(2),
      trackerCpuUsPerRecord: +(trackerCpu / RECORDS).toFixed(1),
      collectorCpuUsPerRecord: +(collectorCpu / RECORDS).toFixed(1),
      stored: counts.records - 1,
      sent: result.sent,
      failed: result.failed,
      dropped: result.dropped,
      waits,
    }
  } finally {
    await tracker.close()
    await collector.stop()
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-bench-e2e-'))
  try {
    const single = await run('batch: false', dir)
    const batched = await run('default', dir)
    console.log(
      `tracker → collector end to end — node ${process.version}, ${cpus().length} CPUs, SQLite file (WAL), ${RECORDS} universal records from 500 users`,
    )
    for (const r of [single, batched])
      console.log(
        `  ${r.mode.padEnd(13)} ${String(r.recordsPerSecond).padStart(7)} records/s (${r.seconds} s) · tracker CPU ${r.trackerCpuUsPerRecord} µs/record · collector CPU ${r.collectorCpuUsPerRecord} µs/record · stored ${r.stored}/${RECORDS}, dropped ${r.dropped}, failed ${r.failed}`,
      )
    console.log(
      `  default / batch: false = ${(batched.recordsPerSecond / single.recordsPerSecond).toFixed(1)}× records/s; CPU per record ${(single.trackerCpuUsPerRecord / batched.trackerCpuUsPerRecord).toFixed(1)}× less in the tracker, ${(single.collectorCpuUsPerRecord / batched.collectorCpuUsPerRecord).toFixed(1)}× less in the collector`,
    )
    console.log(JSON.stringify({ single, batched }))
    if (single.stored !== RECORDS || batched.stored !== RECORDS) {
      console.error('not every record was stored')
      process.exitCode = 1
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
