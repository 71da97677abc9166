/**
 * convotrack core benchmarks (not tests). Run: `pnpm bench` (or `node --expose-gc --import tsx bench/run.ts`).
 * Every figure is taken with DEFAULT tracker options, next to a raw undici keep-alive client
 * measured in the same run (quote the ratios, not the absolute times: the machine is shared):
 *  (a) hot path: µs per `tracker.universal.logIncoming` vs the raw client's JSON.stringify + request call
 *      (mean, p50 and p99 side by side), alone and (`cost`) from 10 callers while delivery runs
 *  (b) LAN: delivered records/s and CPU µs per record, tracker vs raw client (a warm-up pair, then
 *      BENCH_PAIRS (5) paired runs in alternating order; the ratio taken within each pair, median reported)
 *  (c) real-network situations, 3 000 records offered at 500/s into a sink process:
 *      200 ms latency; token bucket 300 req/s + 429 Retry-After 1; 10 % random 429 + Retry-After 1
 *  (d) burst: 21 000 records from 10 callers, no pacing, each side in a fresh process (peak RSS)
 *  (e) memory while the sink is down: 100 000 logged, bounded by maxQueueBytes
 * Prints a table and JSON (also written to bench/results.json).
 */
import { fork } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createTracker } from '@convotrack/core'
import { Pool } from 'undici'
import { message, type SinkFaults, type SinkProcess, startSinkProcess, trackPath } from './sink'

const N = Number(process.env.BENCH_RECORDS ?? 20_000)
/** Requests in flight of the raw client on the LAN (a keep-alive pool of this many sockets). */
const RAW_CONCURRENCY = 16
const gc = (globalThis as { gc?: () => void }).gc
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const r3 = (x: number) => +x.toFixed(3)

/** The raw client's call: serialize, then `request()` (the answer read off the caller's call). */
function rawPost(pool: Pool, msg: ReturnType<typeof message>): Promise<unknown> {
  return pool
    .request({
      path: trackPath,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(msg),
    })
    .then((r) => r.body.dump())
}

async function hotPath(url: string) {
  const tracker = createTracker({ apiKey: 'bench-key', baseUrl: url })
  const pool = new Pool(url, { connections: RAW_CONCURRENCY })
  const tracked: number[] = []
  const raw: number[] = []
  for (let i = 0; i < 2_000; i++) tracker.universal.logIncoming(message(i)) // warm-up
  await tracker.flush(30_000)
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 1_000; i++) {
      const msg = message(i)
      const t0 = process.hrtime.bigint()
      tracker.universal.logIncoming(msg)
      tracked.push(Number(process.hrtime.bigint() - t0) / 1000)
    }
    await tracker.flush(30_000)
    const pending: Promise<unknown>[] = []
    for (let i = 0; i < 1_000; i++) {
      const msg = message(i)
      const t0 = process.hrtime.bigint()
      pending.push(rawPost(pool, msg))
      raw.push(Number(process.hrtime.bigint() - t0) / 1000)
    }
    await Promise.all(pending)
  }
  await tracker.close()
  await pool.close()
  tracked.sort((a, b) => a - b)
  raw.sort((a, b) => a - b)
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  return {
    calls: tracked.length,
    mean_us: r3(mean(tracked)),
    p50_us: r3(percentile(tracked, 0.5)),
    p99_us: r3(percentile(tracked, 0.99)),
    raw_mean_us: r3(mean(raw)),
    raw_p50_us: r3(percentile(raw, 0.5)),
    raw_p99_us: r3(percentile(raw, 0.99)),
    ratio_mean: r3(mean(tracked) / mean(raw)),
    ratio_p50: r3(percentile(tracked, 0.5) / percentile(raw, 0.5)),
    ratio_p99: r3(percentile(tracked, 0.99) / percentile(raw, 0.99)),
  }
}

/**
 * Mean, p50 and p99 of per-call times (µs). On a shared machine a handful of calls are
 * descheduled for milliseconds (both sides alike) and dominate the mean, so the mean without
 * calls over 1 ms is given too, with how many there were.
 */
function spread(xs: number[]) {
  const sorted = [...xs].sort((a, b) => a - b)
  const calm = xs.filter((x) => x <= 1_000)
  return {
    mean_us: r3(xs.reduce((a, b) => a + b, 0) / xs.length),
    p50_us: r3(percentile(sorted, 0.5)),
    p99_us: r3(percentile(sorted, 0.99)),
    mean_us_without_stalls: r3(calm.reduce((a, b) => a + b, 0) / calm.length),
    stalls_over_1ms: xs.length - calm.length,
  }
}

/**
 * The cost of one call while delivery runs: 10 callers log N records between them (each
 * yielding to the event loop every 50 calls, as request handlers do), every call timed; the raw
 * client's call is JSON.stringify + `request()` under the same load. Pairs in alternating order.
 */
async function callCost(url: string) {
  const CALLERS = 10
  const per = Math.floor(N / CALLERS)
  const trackerSide = async () => {
    const tracker = createTracker({ apiKey: 'bench-key', baseUrl: url })
    const times: number[] = []
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, c) => {
        for (let i = 0; i < per; i++) {
          const msg = message(c * per + i)
          const t0 = process.hrtime.bigint()
          tracker.universal.logIncoming(msg)
          times.push(Number(process.hrtime.bigint() - t0) / 1000)
          if (i % 50 === 49) await new Promise((r) => setImmediate(r))
        }
      }),
    )
    await tracker.close(120_000)
    return times
  }
  const rawSide = async () => {
    const pool = new Pool(url, { connections: RAW_CONCURRENCY, keepAliveTimeout: 30_000 })
    const times: number[] = []
    const pending: Promise<unknown>[] = []
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, c) => {
        for (let i = 0; i < per; i++) {
          const msg = message(c * per + i)
          const t0 = process.hrtime.bigint()
          pending.push(rawPost(pool, msg))
          times.push(Number(process.hrtime.bigint() - t0) / 1000)
          if (i % 50 === 49) await new Promise((r) => setImmediate(r))
        }
      }),
    )
    await Promise.all(pending)
    await pool.close()
    return times
  }
  await trackerSide() // warm-up, not counted
  await rawSide()
  const pairs: Array<{ tracker: ReturnType<typeof spread>; raw: ReturnType<typeof spread> }> = []
  for (let i = 0; i < Number(process.env.BENCH_COST_PAIRS ?? 3); i++) {
    gc?.()
    if (i % 2 === 0) {
      const raw = spread(await rawSide())
      gc?.()
      pairs.push({ raw, tracker: spread(await trackerSide()) })
    } else {
      const tracker = spread(await trackerSide())
      gc?.()
      pairs.push({ tracker, raw: spread(await rawSide()) })
    }
  }
  const ratio = (k: 'mean_us' | 'p50_us' | 'p99_us' | 'mean_us_without_stalls') =>
    pairs.map((p) => r3(p.tracker[k] / p.raw[k]))
  return {
    records: per * CALLERS,
    callers: CALLERS,
    ratio_mean: median(ratio('mean_us')),
    ratio_mean_without_stalls: median(ratio('mean_us_without_stalls')),
    ratio_p50: median(ratio('p50_us')),
    ratio_p99: median(ratio('p99_us')),
    pairs,
  }
}

function cpuUs(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start)
  return d.user + d.system
}

async function throughputTracker(url: string) {
  const tracker = createTracker({ apiKey: 'bench-key', baseUrl: url })
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < N; i++) tracker.universal.logIncoming(message(i))
  const result = await tracker.flush(120_000)
  const ms = performance.now() - t0
  const cpuPerRecord = cpuUs(cpu) / N
  await tracker.close()
  if (!result.delivered) throw new Error(`tracker did not deliver: ${JSON.stringify(result)}`)
  return { records: N, ms: Math.round(ms), perSec: Math.round((N / ms) * 1000), cpu_us_per_record: r3(cpuPerRecord) }
}

async function throughputRaw(url: string) {
  const pool = new Pool(url, { connections: RAW_CONCURRENCY, keepAliveTimeout: 30_000 })
  let next = 0
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  const worker = async () => {
    while (next < N) {
      const body = JSON.stringify(message(next++))
      const res = await pool.request({
        path: trackPath,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      await res.body.dump()
      if (res.statusCode !== 200) throw new Error(`raw client got ${res.statusCode}`)
    }
  }
  await Promise.all(Array.from({ length: RAW_CONCURRENCY }, worker))
  const ms = performance.now() - t0
  const cpuPerRecord = cpuUs(cpu) / N
  await pool.close()
  return { records: N, ms: Math.round(ms), perSec: Math.round((N / ms) * 1000), cpu_us_per_record: r3(cpuPerRecord) }
}

/** Offers `total` records at `perSec` (10 ms ticks) through `log`; resolves at the end of the load. */
async function offer(log: (i: number) => void, total: number, perSec: number): Promise<void> {
  const perTick = perSec / 100
  const t0 = performance.now()
  let i = 0
  while (i < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 10) * perTick) + perTick)
    while (i < due) log(i++)
    await sleep(10)
  }
}

/** One situation: 3 000 records at 500/s into a sink with `faults`, by a default tracker and by the raw client. */
async function situation(name: string, faults: SinkFaults, waitMs = 60_000) {
  const total = 3_000
  const sink = await startSinkProcess(faults)
  try {
    // Tracker, defaults.
    const tracker = createTracker({ apiKey: 'bench-key', baseUrl: sink.url, onError: () => {} })
    const t0 = performance.now()
    await offer((i) => tracker.universal.logIncoming(message(i)), total, 500)
    const loadEnd = performance.now()
    const flushed = await tracker.flush(waitMs)
    const drainMs = performance.now() - loadEnd
    const delivered = (await sink.count()).count
    await tracker.close(100)
    const trackerResult = {
      delivered_pct: +((delivered / total) * 100).toFixed(1),
      drain_after_load_ms: flushed.delivered ? Math.round(drainMs) : null,
      load_ms: Math.round(loadEnd - t0),
    }
    // Raw client: each record posted once over unbounded keep-alive sockets, no retries.
    await sink.reset()
    const pool = new Pool(sink.url, { connections: null, keepAliveTimeout: 30_000 })
    const pending: Promise<unknown>[] = []
    await offer(
      (i) =>
        pending.push(
          pool
            .request({
              path: trackPath,
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(message(i)),
            })
            .then((r) => r.body.dump())
            .catch(() => {}),
        ),
      total,
      500,
    )
    const rawLoadEnd = performance.now()
    await Promise.all(pending)
    const rawDrainMs = performance.now() - rawLoadEnd
    const rawDelivered = (await sink.count()).count
    await pool.close()
    return {
      name,
      faults,
      tracker: trackerResult,
      raw: { delivered_pct: +((rawDelivered / total) * 100).toFixed(1), drain_after_load_ms: Math.round(rawDrainMs) },
    }
  } finally {
    await sink.stop()
  }
}

async function burst(url: string, who: 'tracker' | 'raw') {
  const child = fork(fileURLToPath(new URL('./burst-child.ts', import.meta.url)), [who, url], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  })
  return new Promise<{ delivered: number; ms: number; rssPeakMb: number; rssBeforeMb: number }>((resolve, reject) => {
    child.once('message', resolve)
    child.once('exit', (code) => reject(new Error(`burst child (${who}) exited with ${code}`)))
  })
}

async function memoryWhileDown() {
  gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  const before = process.memoryUsage().rss
  let peak = before
  const tracker = createTracker({ apiKey: 'bench-key', baseUrl: 'http://127.0.0.1:9', onError: () => {} })
  for (let i = 0; i < 100_000; i++) {
    tracker.universal.logIncoming(message(i))
    if (i % 5_000 === 0) {
      peak = Math.max(peak, process.memoryUsage().rss)
      await new Promise((r) => setImmediate(r))
    }
  }
  await sleep(200)
  peak = Math.max(peak, process.memoryUsage().rss)
  const stats = tracker.stats()
  gc?.()
  const heapHeld = process.memoryUsage().heapUsed - heapBefore
  await tracker.close(100)
  return {
    logged: 100_000,
    queued: stats.queued + stats.inFlight,
    dropped_queue_full: stats.droppedByReason.queue_full,
    heap_held_mb: +(heapHeld / 2 ** 20).toFixed(1),
    rss_growth_mb: +((peak - before) / 2 ** 20).toFixed(1),
  }
}

const only = process.env.BENCH_ONLY?.split(',')
const want = (k: string) => !only || only.includes(k)
const results: Record<string, unknown> = { node: process.version }
let lan: SinkProcess | undefined
try {
  lan = await startSinkProcess()
  if (want('memory')) results.memory_while_down = await memoryWhileDown()
  if (want('hot')) results.hot_path = await hotPath(lan.url)
  if (want('cost')) results.call_cost = await callCost(lan.url)
  if (want('lan')) {
    // Pairs of back-to-back runs (order alternating), the ratio taken within each pair, median reported.
    const PAIRS = Number(process.env.BENCH_PAIRS ?? 5)
    // One warm-up pair first, not counted: each side's first run pays for JIT and fresh sockets.
    await throughputRaw(lan.url)
    await throughputTracker(lan.url)
    const pairs: Array<{
      raw: Awaited<ReturnType<typeof throughputRaw>>
      tracked: Awaited<ReturnType<typeof throughputTracker>>
    }> = []
    for (let i = 0; i < PAIRS; i++) {
      if (i % 2 === 0) {
        const raw = await throughputRaw(lan.url)
        pairs.push({ raw, tracked: await throughputTracker(lan.url) })
      } else {
        const tracked = await throughputTracker(lan.url)
        pairs.push({ tracked, raw: await throughputRaw(lan.url) })
      }
    }
    const ratios = pairs.map((p) => r3(p.tracked.perSec / p.raw.perSec))
    const cpuRatios = pairs.map((p) => r3(p.tracked.cpu_us_per_record / p.raw.cpu_us_per_record))
    results.lan = {
      throughput_ratio: median(ratios),
      pair_ratios: ratios,
      cpu_per_record_ratio: median(cpuRatios),
      cpu_pair_ratios: cpuRatios,
      pairs,
      raw_concurrency: RAW_CONCURRENCY,
    }
  }
  if (want('burst')) {
    const tracked = await burst(lan.url, 'tracker')
    const raw = await burst(lan.url, 'raw')
    results.burst = {
      records: 21_000,
      tracker: tracked,
      raw,
      delivered_pct: +((tracked.delivered / 21_000) * 100).toFixed(1),
      rss_peak_ratio: r3(tracked.rssPeakMb / raw.rssPeakMb),
    }
  }
  if (want('network')) {
    results.situations = [
      await situation('latency 200 ms', { latencyMs: 200 }),
      await situation('token bucket 300 req/s, 429 Retry-After 1', { bucketPerSec: 300, retryAfterSec: 1 }),
      await situation('10 % random 429, Retry-After 1', { random429: 0.1, retryAfterSec: 1 }),
    ]
  }
} finally {
  await lan?.stop()
}
console.log(JSON.stringify(results, null, 2))
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`)
