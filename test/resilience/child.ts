/**
 * One adapter under load, in its own process (started by harness.ts with `--expose-gc`).
 * It installs NO handler that changes what Node does with an unhandled rejection or an
 * uncaught exception: only an `uncaughtExceptionMonitor`, which observes (and marks the
 * report on stderr) before Node's default handling crashes the process.
 *
 * Phases (the two that need the server switched are announced to the parent over IPC):
 *  1. warm-up: both app instances (tracked and untracked), server healthy; flushed.
 *  2. baseline, first half: the untracked app at `ratePerSec` (reply latency without tracking).
 *  3. tracked: the tracked app, same pace, `durationMs`; the parent takes the server down at the
 *     start, then brings it back with the fault mix (reply latency with tracking, memory).
 *  4. flush: the parent makes the server healthy; adapters settle, `tracker.flush()`.
 *  5. baseline, second half.
 *  6. drop: a fresh tracker with a small `maxQueueSize` against a server that stays down,
 *     a fresh tracked app, more records than the queue holds; the drop accounting is checked.
 */
import { writeSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { ConvotrackError, FlushResult, Tracker, TrackerStats } from '@convotrack/core'
import { createTracker } from '@convotrack/core'
import { Agent } from 'undici'
import type { AppUnderLoad } from './apps/app'
import { APPS } from './apps/index'
import { startPlatformFake } from './platform-fake'
import type { ChildConfig, ChildMessage, ChildResult, DriveResult, DropResult } from './protocol'
import { summarize } from './stats'

process.on('uncaughtExceptionMonitor', (error, origin) => {
  // Observe only: Node's default handling (print, exit non-zero) still happens after this.
  writeSync(2, `\n[resilience] FATAL origin=${origin}: ${(error as Error)?.stack ?? String(error)}\n`)
})

const config = JSON.parse(process.env.RESILIENCE_CHILD ?? '{}') as ChildConfig
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')

function send(message: ChildMessage): void {
  process.send?.(message)
}

/** Tells the parent a phase starts and waits for its acknowledgement (the server is in the right state then). */
function phase(name: 'tracked-start' | 'load-done'): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (m: { ack?: string }) => {
      if (m?.ack !== name) return
      process.off('message', onMessage)
      resolve()
    }
    process.on('message', onMessage)
    send({ type: 'phase', phase: name })
  })
}

/** Counts the records handed to the tracker: every platform call that did not throw. */
function countLogged(tracker: Tracker): () => number {
  let logged = 0
  const channels = ['universal', 'sms', 'generic', 'twitter', 'messenger', 'slack', 'kik', 'alexa'] as const
  for (const name of channels) {
    const channel = tracker[name] as unknown as Record<string, (...args: unknown[]) => boolean>
    for (const method of ['logIncoming', 'logOutgoing']) {
      const original = channel[method] as (...args: unknown[]) => boolean
      channel[method] = (...args: unknown[]) => {
        const queued = original.apply(channel, args)
        logged++
        return queued
      }
    }
  }
  return () => logged
}

function heap(): { heapUsed: number; rss: number } {
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, rss: m.rss }
}

function gcHeap(): { heapUsed: number; rss: number } {
  gc?.()
  gc?.()
  return heap()
}

/**
 * Sends `count` messages to `app`, open loop at `rate` per second (a slow reply never delays
 * the next message). Latency runs from each message's scheduled time to its reply, so a
 * stalled event loop shows in the figures instead of hiding (no coordinated omission).
 */
async function drive(
  app: AppUnderLoad,
  prefix: string,
  count: number,
  rate: number,
): Promise<DriveResult & { samples: number[] }> {
  const latencies: number[] = []
  /** Latencies by the second (of the run) their message was scheduled in. */
  const bySecond: number[][] = []
  const errors: string[] = []
  let failed = 0
  let timedOut = 0
  const pending: Array<Promise<void>> = []
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  const cpuStart = process.cpuUsage()
  const start = performance.now()
  const fire = (i: number) => {
    const id = `${prefix}${i}`
    const scheduled = start + (i * 1000) / rate
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), config.replyTimeoutMs)
    })
    pending.push(
      Promise.race([app.send(`u${i % config.users}`, id).then(() => 'ok' as const), timeout])
        .then(
          (outcome) => {
            if (outcome === 'timeout') {
              timedOut++
              platform.forget(id)
            } else {
              const ms = performance.now() - scheduled
              latencies.push(ms)
              const second = Math.floor((scheduled - start) / 1000)
              const bucket = bySecond[second] ?? []
              bucket.push(ms)
              bySecond[second] = bucket
            }
          },
          (error: unknown) => {
            failed++
            if (errors.length < 5) errors.push(String((error as Error)?.message ?? error))
          },
        )
        .finally(() => clearTimeout(timer)),
    )
  }
  let sent = 0
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(count, Math.floor(((performance.now() - start) * rate) / 1000) + 1)
      while (sent < due) fire(sent++)
      if (sent >= count) {
        clearInterval(tick)
        resolve()
      }
    }, 2)
  })
  const sendingMs = performance.now() - start
  await Promise.all(pending)
  const cpu = process.cpuUsage(cpuStart)
  loop.disable()
  return {
    messages: count,
    replied: latencies.length,
    failed,
    timedOut,
    errors,
    sendingMs: Math.round(sendingMs),
    cpuMsPerMessage: Math.round(((cpu.user + cpu.system) / 1000 / count) * 100) / 100,
    loopDelayP99Ms: Math.round(loop.percentile(99) / 1e4) / 100,
    loopDelayMaxMs: Math.round(loop.max / 1e4) / 100,
    latency: summarize(latencies),
    timeline: Array.from(bySecond, (values) => summarize(values ?? [])),
    samples: latencies,
  }
}

/** The two halves of the baseline (before and after the tracked phase) as one. */
function merge(a: DriveResult & { samples: number[] }, b: DriveResult & { samples: number[] }): DriveResult {
  return {
    messages: a.messages + b.messages,
    replied: a.replied + b.replied,
    failed: a.failed + b.failed,
    timedOut: a.timedOut + b.timedOut,
    errors: [...a.errors, ...b.errors].slice(0, 5),
    sendingMs: a.sendingMs + b.sendingMs,
    cpuMsPerMessage:
      Math.round(
        ((a.cpuMsPerMessage * a.messages + b.cpuMsPerMessage * b.messages) / (a.messages + b.messages)) * 100,
      ) / 100,
    loopDelayP99Ms: Math.max(a.loopDelayP99Ms, b.loopDelayP99Ms),
    loopDelayMaxMs: Math.max(a.loopDelayMaxMs, b.loopDelayMaxMs),
    latency: summarize([...a.samples, ...b.samples]),
    timeline: [...a.timeline, ...b.timeline],
  }
}

function diffStats(after: TrackerStats, before: TrackerStats): TrackerStats {
  const out = { ...after, droppedByReason: { ...after.droppedByReason } }
  for (const k of ['sent', 'retried', 'failed', 'dropped', 'ignored', 'invalid'] as const) out[k] -= before[k]
  for (const k of ['queue_full', 'redacted', 'closed'] as const) out.droppedByReason[k] -= before.droppedByReason[k]
  return out
}

const t0 = performance.now()
/** ms since the child started when each phase ended. */
const marks: Record<string, number> = {}
const mark = (name: string) => {
  marks[name] = Math.round(performance.now() - t0)
}
const chosen = APPS[config.adapter]
if (!chosen) throw new Error(`unknown adapter ${config.adapter}`)
const factory = chosen
const platform = await startPlatformFake()
const client = new Agent({ connections: 256, keepAliveTimeout: 30_000, pipelining: 1 })

// ---- the tracked app's tracker: the suite's settings, errors counted by code
const errorsByCode: Record<string, number> = {}
const tracker = createTracker({
  apiKey: 'resilience-key',
  baseUrl: config.trackingUrl,
  concurrency: config.tracker.concurrency,
  retry: config.tracker.retry,
  maxQueueSize: config.tracker.maxQueueSize,
  onError: (error: ConvotrackError) => {
    errorsByCode[error.code] = (errorsByCode[error.code] ?? 0) + 1
  },
})
const logged = countLogged(tracker)
const untrackedApp = await factory({ tracker: undefined, platform, client })
const trackedApp = await factory({ tracker, platform, client })
mark('apps started')

// 1. warm-up (JIT, connection pools, Bolt's auth.test), then nothing of it stays in flight
const warm = Math.max(1, config.warmupMessages)
await drive(untrackedApp, 'rzu-', warm, Math.min(config.ratePerSec, 200))
await drive(trackedApp, 'rzv-', warm, Math.min(config.ratePerSec, 200))
await trackedApp.settle?.(10_000)
const warmFlush = await tracker.flush(30_000)
if (!warmFlush.delivered) throw new Error(`warm-up records not delivered: ${JSON.stringify(warmFlush)}`)
for (const k of Object.keys(errorsByCode)) delete errorsByCode[k]
mark('warm-up')
const statsBefore = tracker.stats()
const loggedBefore = logged()
const count = Math.round((config.ratePerSec * config.durationMs) / 1000)

// 2. baseline: the same app without its tracking line; half now, half after the flush, so a
//    change in the machine's load during the run weighs on both sides alike
const half = Math.round(count / 2)
const baselineBefore = await drive(untrackedApp, 'rzb-', half, config.ratePerSec)
mark('baseline, first half')

// 3. tracked, while the service is down and then misbehaving
const memStart = gcHeap()
await phase('tracked-start')
let peakHeap = 0
let peakRss = 0
let peakPending = 0
if (config.injectUnhandledRejectionAtMs !== undefined)
  setTimeout(() => void Promise.reject(new Error('injected by the suite')), config.injectUnhandledRejectionAtMs)
const sampler = setInterval(() => {
  const m = heap()
  const s = tracker.stats()
  peakHeap = Math.max(peakHeap, m.heapUsed)
  peakRss = Math.max(peakRss, m.rss)
  peakPending = Math.max(peakPending, s.queued + s.inFlight)
}, 50)
const { samples: _trackedSamples, ...tracked } = await drive(trackedApp, 'rz-', count, config.ratePerSec)
clearInterval(sampler)
const atLoadEnd = diffStats(tracker.stats(), statsBefore)
mark('tracked load')

// 4. the service is back: hand everything over and flush
await phase('load-done')
const flushStarted = performance.now()
const flushCpuStart = process.cpuUsage()
await trackedApp.settle?.(config.flushTimeoutMs)
const flush: FlushResult = await tracker.flush(config.flushTimeoutMs)
const flushMs = Math.round(performance.now() - flushStarted)
const flushCpu = process.cpuUsage(flushCpuStart)
const flushCpuMs = Math.round((flushCpu.user + flushCpu.system) / 1000)
mark('flush')
const memEnd = gcHeap()
const afterFlush = diffStats(tracker.stats(), statsBefore)
const loggedTracked = logged() - loggedBefore
const baselineAfter = await drive(untrackedApp, 'rzc-', count - half, config.ratePerSec)
const baseline = merge(baselineBefore, baselineAfter)
mark('baseline, second half')

// 5. deliberate overflow: a small queue, a service that stays down
async function dropRun(): Promise<DropResult> {
  const dropErrors: Record<string, number> = {}
  let droppedEvents = 0
  const small = createTracker({
    apiKey: 'resilience-key',
    baseUrl: config.downUrl,
    concurrency: config.tracker.concurrency,
    retry: config.tracker.retry,
    maxQueueSize: config.drop.maxQueueSize,
    onError: (error: ConvotrackError) => {
      // A full queue reports its drops in summaries: one error standing for `count` records.
      const count = (error as { count?: number }).count ?? 1
      dropErrors[error.code] = (dropErrors[error.code] ?? 0) + count
    },
  })
  small.on('dropped', (reason) => {
    if (reason === 'queue_full') droppedEvents++
  })
  const smallLogged = countLogged(small)
  const app = await factory({ tracker: small, platform, client })
  mark('drop run: app started')
  const result = await drive(app, 'rzd-', config.drop.messages, config.ratePerSec)
  mark('drop run: load')
  // Every reply seen, but an adapter may hand a turn's records over just after (Slack: once the
  // listener's promise settles). Wait for both records of every message; no flush: the service is down.
  const settleBy = Date.now() + 60_000 // a hang detector: the loop ends as soon as they are in
  while (smallLogged() < 2 * result.replied && Date.now() < settleBy) await new Promise((r) => setTimeout(r, 5))
  mark('drop run: settled')
  await small.flush(0) // reports the drop summary held back (the service is down: nothing delivers)
  const s = small.stats()
  const queued = s.queued + s.inFlight
  const out: DropResult = {
    maxQueueSize: config.drop.maxQueueSize,
    messages: result.messages,
    replied: result.replied,
    logged: smallLogged(),
    pending: queued,
    queueFull: s.droppedByReason.queue_full,
    droppedEvents,
    onErrorDropped: dropErrors.dropped_queue_full ?? 0,
    sent: s.sent,
    failed: s.failed,
    exact: false,
  }
  out.exact =
    out.logged - out.pending === out.queueFull &&
    out.queueFull === out.droppedEvents &&
    out.queueFull === out.onErrorDropped &&
    out.sent === 0 &&
    out.failed === 0
  await small.close(200)
  mark('drop run: tracker closed')
  await app.close()
  return out
}
const drop = await dropRun()
mark('drop run')

await tracker.close(2_000)
await untrackedApp.close()
await trackedApp.close()
await platform.close()
await client.close()
mark('closed')

const result: ChildResult = {
  adapter: config.adapter,
  baseline,
  tracked,
  loggedTracked,
  atLoadEnd,
  afterFlush,
  flush,
  flushMs,
  flushCpuMs,
  errorsByCode,
  memory: {
    startHeapUsed: memStart.heapUsed,
    endHeapUsed: memEnd.heapUsed,
    peakHeapUsed: peakHeap,
    startRss: memStart.rss,
    endRss: memEnd.rss,
    peakRss,
  },
  peakPending,
  drop,
  marks,
}
send({ type: 'result', result })
process.disconnect?.()
