/** What the parent (harness.ts) and an adapter's child process (child.ts) tell each other. */
import type { FlushResult, RetryOptions, TrackerStats } from '@convotrack/core'
import type { LatencySummary } from './stats'

export interface ChildConfig {
  adapter: string
  /** The misbehaving tracking server. */
  trackingUrl: string
  /** A tracking server that stays down (the drop run). */
  downUrl: string
  ratePerSec: number
  durationMs: number
  warmupMessages: number
  users: number
  replyTimeoutMs: number
  flushTimeoutMs: number
  tracker: { concurrency?: number; retry?: RetryOptions; maxQueueSize?: number }
  drop: { maxQueueSize: number; messages: number }
  /** The suite's self-test: reject a promise nobody handles this many ms into the tracked phase. */
  injectUnhandledRejectionAtMs?: number
}

export interface DriveResult {
  messages: number
  /** Messages whose reply arrived. */
  replied: number
  /** Messages the app refused (non-2xx) or whose send threw. */
  failed: number
  /** Messages with no reply within `replyTimeoutMs`. */
  timedOut: number
  errors: string[]
  /** How long pacing the messages took (should be messages / rate). */
  sendingMs: number
  /** CPU time (user + system) of the whole process during the phase, per message: app, tracker and load driver. */
  cpuMsPerMessage: number
  /** Event-loop delay of the process during the phase (perf_hooks, 10 ms resolution): p99 and max. */
  loopDelayP99Ms: number
  loopDelayMaxMs: number
  latency: LatencySummary
  /** Latency of the messages scheduled in each second of the phase. */
  timeline: LatencySummary[]
}

export interface DropResult {
  maxQueueSize: number
  messages: number
  replied: number
  /** Records handed to the tracker (platform calls that did not throw). */
  logged: number
  /** Still held by the tracker (queued + in flight) at the check. */
  pending: number
  /** `stats().droppedByReason.queue_full`. */
  queueFull: number
  /** `dropped` events with reason `queue_full`. */
  droppedEvents: number
  /** `onError` calls with code `dropped_queue_full`. */
  onErrorDropped: number
  sent: number
  failed: number
  /** logged − pending = queueFull = droppedEvents = onErrorDropped, nothing sent or failed. */
  exact: boolean
}

export interface ChildResult {
  adapter: string
  baseline: DriveResult
  tracked: DriveResult
  /** Records handed to the tracker during the tracked phase. */
  loggedTracked: number
  /** Tracker counters of the tracked phase when the load ended (the server still misbehaving). */
  atLoadEnd: TrackerStats
  /** …and after the flush. */
  afterFlush: TrackerStats
  flush: FlushResult
  flushMs: number
  /** CPU time of the process during the flush (delivering what the outage held back). */
  flushCpuMs: number
  errorsByCode: Record<string, number>
  memory: {
    startHeapUsed: number
    endHeapUsed: number
    peakHeapUsed: number
    startRss: number
    endRss: number
    peakRss: number
  }
  /** Most records held by the tracker at once (queued + in flight) during the tracked phase. */
  peakPending: number
  drop: DropResult
  /** ms since the child started when each phase ended. */
  marks: Record<string, number>
}

export type ChildMessage =
  | { type: 'phase'; phase: 'tracked-start' | 'load-done' }
  | { type: 'result'; result: ChildResult }
