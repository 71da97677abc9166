/** Judging and printing the results: the goals per adapter, the tables. */
import type { AdapterResult } from './harness'
import type { RecoveryResult } from './recovery-probe'
import { mb, table } from './stats'

/** The goals of issue 9 for one adapter; each failure is named. */
export function goalsMissed(r: AdapterResult): string[] {
  const missed: string[] = []
  const c = r.child
  if (r.crashed) missed.push(`crashed (exit ${r.exitCode ?? r.signal})`)
  if (r.unhandledRejections + r.uncaughtExceptions > 0) missed.push('unhandled rejection / uncaught exception')
  if (!c) return [...missed, 'no result from the child']
  if (r.logged !== 2 * c.tracked.messages) missed.push(`logged ${r.logged}, expected ${2 * c.tracked.messages}`)
  if (r.delivered !== r.logged) missed.push(`delivered ${r.delivered}/${r.logged}`)
  if (r.duplicates > 0) missed.push(`${r.duplicates} duplicates`)
  if (!c.flush.delivered) missed.push(`flush: ${JSON.stringify(c.flush)}`)
  for (const [phase, d] of [
    ['baseline', c.baseline],
    ['tracked', c.tracked],
  ] as const)
    if (d.replied !== d.messages)
      missed.push(`${phase}: ${d.messages - d.replied} replies missing ${d.errors.join('; ')}`)
  if (!c.drop.exact) missed.push(`drop accounting: ${JSON.stringify(c.drop)}`)
  if (c.drop.replied !== c.drop.messages) missed.push(`drop run: ${c.drop.messages - c.drop.replied} replies missing`)
  return missed
}

export function resultTable(results: AdapterResult[]): string {
  const rows = results.map((r) => {
    const c = r.child
    const d = c?.drop
    const arrow = (a: number | undefined, b: number | undefined) => `${a ?? '-'} → ${b ?? '-'}`
    return [
      r.adapter,
      String(r.ratePerSec),
      String(c?.tracked.messages ?? '-'),
      String(r.logged),
      String(r.deliveredAtLoadEnd),
      `${r.delivered} (${r.deliveredPct}%)`,
      String(r.duplicates),
      r.crashed ? 'CRASH' : 'no',
      `${r.unhandledRejections}/${r.uncaughtExceptions}`,
      arrow(c?.baseline.latency.p50, c?.tracked.latency.p50),
      arrow(c?.baseline.latency.p99, c?.tracked.latency.p99),
      arrow(c?.baseline.cpuMsPerMessage, c?.tracked.cpuMsPerMessage),
      c ? `${mb(c.memory.startHeapUsed)} → ${mb(c.memory.endHeapUsed)} (${mb(c.memory.peakHeapUsed)})` : '-',
      String(c?.peakPending ?? '-'),
      c ? `${(c.flushMs / 1000).toFixed(1)} (${c.flushCpuMs})` : '-',
      d
        ? `${d.logged}-${d.pending}=${d.queueFull}=${d.droppedEvents}=${d.onErrorDropped} ${d.exact ? 'exact' : 'NOT EXACT'}`
        : '-',
    ]
  })
  return table(
    [
      'adapter',
      'msg/s',
      'msgs',
      'logged',
      'at load end',
      'delivered',
      'dup',
      'crash',
      'unh/unc',
      'p50 ms w/o → with',
      'p99 ms w/o → with',
      'CPU ms/msg w/o → with',
      'heap MB start → end (peak)',
      'peak queue',
      'flush s (CPU ms)',
      'drops: logged-queued=queue_full=events=onError',
    ],
    rows,
  )
}

export function recoveryTable(probes: RecoveryResult[]): string {
  return table(
    [
      'concurrency',
      'records',
      'down ms',
      'first delivery after up ms',
      'all delivered after up ms',
      'longest wait announced ms',
    ],
    probes.map((p) => [
      String(p.concurrency),
      `${p.delivered}/${p.records}`,
      String(p.downMs),
      String(p.firstDeliveryAfterUpMs),
      String(p.allDeliveredAfterUpMs),
      String(p.longestAnnouncedWaitMs),
    ]),
  )
}
