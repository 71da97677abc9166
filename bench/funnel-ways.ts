/**
 * The funnel statements side by side on loaded step rows: before the spans (funnel-before.ts
 * `funnelBefore`), the per-user walk after them (`funnelWalk`, the collector at 368f885) and the
 * collector's own (`funnelReport`), alternating in one process, median / max of `rounds`, over the
 * last 30 days, all time and a week that ended 33 days ago. Used by funnel-steps-pg.ts and
 * funnel-steps-sqlite.ts.
 */
import type { FunnelStep } from '../packages/collector/src/reports/analytics-types'
import type { Dialect } from '../packages/collector/src/reports/dialect'
import { funnelReport } from '../packages/collector/src/reports/funnel-report'
import type { Exec } from '../packages/collector/src/reports/report-queries'
import { type Funnel, funnelBefore, funnelWalk } from './funnel-before'

const H = 3_600_000
const DAY = 24 * H

/** The synthetic load's funnel: greeting → order.status → purchase. */
export const SHOP_FUNNEL: FunnelStep[] = [
  { kind: 'intent', name: 'greeting' },
  { kind: 'intent', name: 'order.status' },
  { kind: 'event', name: 'purchase' },
]

export async function compareFunnels(d: Dialect, exec: Exec, now: number, rounds = 5): Promise<void> {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
  const ways = {
    before: (f: Funnel) => funnelBefore(d, exec, f),
    walk: (f: Funnel) => funnelWalk(d, exec, f),
    now: async (f: Funnel) => (await funnelReport(d, exec, f)).map((l) => l.users),
  }
  const ranges = {
    'last 30 days': { from: now - 30 * DAY, to: null },
    'all time': {},
    'a week 40–33 days ago': { from: now - 40 * DAY, to: now - 33 * DAY },
  }
  for (const [rn, r] of Object.entries(ranges)) {
    const filter: Funnel = { ...r, steps: SHOP_FUNNEL }
    const times = new Map<string, number[]>()
    const answers = new Map<string, string>()
    for (let i = 0; i < rounds; i++)
      for (const [name, run] of Object.entries(ways)) {
        const t = performance.now()
        answers.set(name, (await run(filter)).join(' → '))
        times.set(name, [...(times.get(name) ?? []), performance.now() - t])
      }
    const want = answers.get('now')
    const cells = Object.keys(ways).map((n) => {
      const xs = times.get(n) ?? []
      const differs = answers.get(n) === want ? '' : ` (users ${answers.get(n)})`
      return `${n} ${median(xs).toFixed(0)} / ${Math.max(...xs).toFixed(0)} ms${differs}`
    })
    console.log(`${rn} | users ${want} | ${cells.join(' | ')}`)
  }
}
