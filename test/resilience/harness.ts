/**
 * The parent side of the resilience suite: for one adapter it starts the misbehaving tracking
 * server (fault-server.ts) in this process, forks the adapter's app in its own Node process
 * (child.ts, with `--expose-gc` and Node's default error handling), switches the server
 * down / faulty / healthy at the phases the child announces, and gathers the figures.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { type FaultCounts, type FaultMix, HEALTHY, ISSUE_FAULTS, startFaultServer } from './fault-server'
import type { ChildConfig, ChildMessage, ChildResult } from './protocol'

export interface SuiteOptions {
  /** Messages per second sent to each app, by adapter (others: 300). */
  ratePerSec: Record<string, number>
  /** Length of the baseline and of the tracked phase, each. */
  durationMs: number
  /** The service is down (connections refused) this long from the start of the tracked phase. */
  downMs: number
  /** What the service does once it is up during the tracked phase. */
  faults: FaultMix
  warmupMessages: number
  /** Distinct users (and conversations) the messages come from. */
  users: number
  replyTimeoutMs: number
  flushTimeoutMs: number
  /** Tracker options of the app under test (see docs/reliability.md for why these). */
  tracker: ChildConfig['tracker']
  drop: ChildConfig['drop']
  /** Seed of the fault sequence. */
  seed: number
  /** Longest a child may take from start to exit. */
  childTimeoutMs: number
  /** Self-test only: see `ChildConfig.injectUnhandledRejectionAtMs`. */
  injectUnhandledRejectionAtMs?: number
}

export const DEFAULT_OPTIONS: SuiteOptions = {
  // Bolt, botbuilder and the Express webhook cost 3.5–4.5 ms of CPU per message here (app, load
  // driver and platform stand-in in one process): at 300/s their untracked baseline already
  // saturates a shared core, and a saturated baseline measures queueing, not tracking.
  ratePerSec: { universal: 300, alexa: 300, kik: 300, messenger: 150, slack: 150, botbuilder: 150 },
  durationMs: 6_000,
  downMs: 2_500,
  faults: ISSUE_FAULTS,
  warmupMessages: 200,
  users: 50,
  replyTimeoutMs: 10_000,
  flushTimeoutMs: 60_000,
  // Default tracker options: the adaptive concurrency limit and the gate carry these loads as a
  // user who copies the one line gets them (no hand tuning).
  tracker: {},
  drop: { maxQueueSize: 500, messages: 400 },
  seed: 9,
  childTimeoutMs: 150_000,
}

export interface AdapterResult {
  adapter: string
  ratePerSec: number
  /** Child exit: code 0 and no fatal marker = no crash. */
  exitCode: number | null
  signal: string | null
  crashed: boolean
  /** Uncaught exceptions / unhandled rejections observed (the first one ends the process). */
  uncaughtExceptions: number
  unhandledRejections: number
  /** `(node:…) Warning` lines the child printed. */
  warnings: string[]
  stderrTail: string
  /** Records logged during the tracked phase (2 per message: incoming + reply). */
  logged: number
  /** Distinct `type:id` records the server accepted, at the end of the load and after the flush. */
  deliveredAtLoadEnd: number
  delivered: number
  duplicates: number
  deliveredPct: number
  server: FaultCounts
  child?: ChildResult
  wallMs: number
  /** ms from the child's result to its exit: it must end on its own (no timer or socket left behind). */
  exitAfterResultMs: number | undefined
  /** 1-minute load average of the machine when the adapter's run started and ended (other work shares the cores). */
  loadAverage: [number, number]
}

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** True when @convotrack/kik exports `kikTracking` (it was being finished in parallel). */
export function kikAvailable(): boolean {
  try {
    return /\bkikTracking\b/.test(readFileSync(new URL('../../packages/kik/src/index.ts', import.meta.url), 'utf8'))
  } catch {
    return false
  }
}

export async function runAdapter(adapter: string, options: SuiteOptions = DEFAULT_OPTIONS): Promise<AdapterResult> {
  const started = Date.now()
  const loadBefore = os.loadavg()[0] ?? 0
  const server = await startFaultServer(HEALTHY, { seed: options.seed })
  const downServer = await startFaultServer(HEALTHY, { seed: options.seed, down: true })
  const config: ChildConfig = {
    adapter,
    trackingUrl: server.url,
    downUrl: downServer.url,
    ratePerSec: rateFor(adapter, options),
    durationMs: options.durationMs,
    warmupMessages: options.warmupMessages,
    users: options.users,
    replyTimeoutMs: options.replyTimeoutMs,
    flushTimeoutMs: options.flushTimeoutMs,
    tracker: options.tracker,
    drop: options.drop,
  }
  if (options.injectUnhandledRejectionAtMs !== undefined)
    config.injectUnhandledRejectionAtMs = options.injectUnhandledRejectionAtMs
  const child: ChildProcess = fork(CHILD, [], {
    cwd: ROOT,
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, RESILIENCE_CHILD: JSON.stringify(config), TSX_TSCONFIG_PATH: `${ROOT}tsconfig.json` },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  let stderr = ''
  let stdout = ''
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString('utf8')
  })
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString('utf8')
  })
  let result: ChildResult | undefined
  let resultAt = 0
  let deliveredAtLoadEnd = 0
  let upTimer: NodeJS.Timeout | undefined
  child.on('message', (m: ChildMessage) => {
    if (m.type === 'result') {
      result = m.result
      resultAt = Date.now()
    } else if (m.phase === 'tracked-start') {
      void server.down().then(() => {
        upTimer = setTimeout(() => {
          server.faults = options.faults
          void server.up()
        }, options.downMs)
        child.send({ ack: 'tracked-start' })
      })
    } else if (m.phase === 'load-done') {
      // The service is back: no more faults (same latency); everything still held must now arrive.
      clearTimeout(upTimer)
      deliveredAtLoadEnd = server.delivered('rz-').distinct
      server.faults = HEALTHY
      void server.up().then(() => child.send({ ack: 'load-done' }))
    }
  })
  const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.childTimeoutMs)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal })
    })
  })
  const exitedAt = Date.now()
  clearTimeout(upTimer)
  const delivered = server.delivered('rz-')
  const counts = server.counts()
  await server.close()
  await downServer.close()

  const fatal = [...stderr.matchAll(/\[resilience\] FATAL origin=(\w+)/g)].map((m) => m[1])
  const logged = result?.loggedTracked ?? 0
  const out: AdapterResult = {
    adapter,
    ratePerSec: config.ratePerSec,
    exitCode: exit.code,
    signal: exit.signal,
    crashed: exit.code !== 0 || exit.signal !== null || fatal.length > 0 || result === undefined,
    uncaughtExceptions: fatal.filter((o) => o === 'uncaughtException').length,
    unhandledRejections: fatal.filter((o) => o === 'unhandledRejection').length,
    warnings: (stderr + stdout).split('\n').filter((l) => /\(node:\d+\) \w*Warning/.test(l)),
    stderrTail: stderr.slice(-2000),
    logged,
    deliveredAtLoadEnd,
    delivered: delivered.distinct,
    duplicates: delivered.duplicates,
    deliveredPct: logged > 0 ? Math.round((delivered.distinct / logged) * 10_000) / 100 : 0,
    server: counts,
    wallMs: Date.now() - started,
    exitAfterResultMs: resultAt ? exitedAt - resultAt : undefined,
    loadAverage: [round2(loadBefore), round2(os.loadavg()[0] ?? 0)],
  }
  if (result) out.child = result
  return out
}

export function rateFor(adapter: string, options: SuiteOptions): number {
  return options.ratePerSec[adapter] ?? 300
}

function round2(v: number): number {
  return Math.round(v * 100) / 100
}
