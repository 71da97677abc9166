/**
 * The resilience suite: every adapter's real framework app, paced at several hundred messages
 * a second against a tracking service that is down, then failing, then back.
 *
 *   npx tsx test/resilience/run.ts                       # all adapters, ~2.5 min
 *   npx tsx test/resilience/run.ts --adapters universal,slack --duration 5000 --rate 300
 *
 * Prints a table, writes test/resilience/results.json; exits 1 when a goal is missed
 * (delivery < 100 %, a duplicate, a crash, a reply lost, an inexact drop count).
 * What each column means: docs/reliability.md.
 */
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { ADAPTERS } from './apps/index'
import { type AdapterResult, DEFAULT_OPTIONS, kikAvailable, rateFor, runAdapter, type SuiteOptions } from './harness'
import { probeRecovery } from './recovery-probe'
import { goalsMissed, recoveryTable, resultTable } from './report'

function args(): { adapters: string[]; options: SuiteOptions; probe: boolean; out: string } {
  const argv = process.argv.slice(2)
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const options: SuiteOptions = { ...DEFAULT_OPTIONS }
  const rate = get('rate')
  if (rate) options.ratePerSec = Object.fromEntries(ADAPTERS.map((a) => [a, Number(rate)]))
  if (get('duration')) options.durationMs = Number(get('duration'))
  if (get('down')) options.downMs = Number(get('down'))
  if (get('seed')) options.seed = Number(get('seed'))
  let adapters = get('adapters')?.split(',') ?? ADAPTERS
  if (!kikAvailable()) {
    console.log('@convotrack/kik does not export kikTracking yet: kik skipped')
    adapters = adapters.filter((a) => a !== 'kik')
  }
  return {
    adapters,
    options,
    probe: !argv.includes('--no-probe'),
    out: get('out') ?? new URL('./results.json', import.meta.url).pathname,
  }
}

async function main() {
  const { adapters, options, probe, out } = args()
  const started = Date.now()
  console.log(
    `resilience: ${adapters.map((a) => `${a} ${rateFor(a, options)}/s`).join(', ')}, ${options.durationMs} ms each; ` +
      `service down ${options.downMs} ms, then ${JSON.stringify(options.faults)}; tracker ${JSON.stringify(options.tracker)}`,
  )
  // The recovery probes mostly wait (outage, backoff); they run beside the load runs.
  const probes = probe ? Promise.all([probeRecovery(1), probeRecovery(8)]) : Promise.resolve([])
  const results: AdapterResult[] = []
  for (const adapter of adapters) {
    const r = await runAdapter(adapter, options)
    results.push(r)
    const missed = goalsMissed(r)
    console.log(
      `  ${adapter}: ${r.delivered}/${r.logged} delivered, ${(r.wallMs / 1000).toFixed(1)} s${missed.length ? `  MISSED: ${missed.join(' | ')}` : ''}`,
    )
    if (r.crashed) console.log(r.stderrTail)
  }
  const recovery = await probes
  const totalMs = Date.now() - started
  console.log(`\n${resultTable(results)}\n`)
  if (recovery.length) console.log(`Recovery after an outage, default retry policy:\n${recoveryTable(recovery)}\n`)
  const failures = Object.fromEntries(results.map((r) => [r.adapter, goalsMissed(r)]))
  const report = {
    command: `npx tsx test/resilience/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      totalMemMB: Math.round(os.totalmem() / 1024 / 1024),
      platform: `${os.platform()} ${os.release()}`,
    },
    options,
    totalMs,
    results,
    recovery,
    goalsMissed: failures,
  }
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`wrote ${out} (${(totalMs / 1000).toFixed(0)} s)`)
  if (Object.values(failures).some((f) => f.length > 0)) process.exitCode = 1
}

await main()
