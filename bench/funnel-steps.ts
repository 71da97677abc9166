/**
 * The funnel read before (bench/funnel-before.ts, on a copy of the loaded file as it was: the
 * indexes it had) and after (a second copy opened through the store: its migrations derive the
 * step spans and add the index on step, user and hour), side by side in one process, alternating,
 * median / max of 5:
 *   node --import tsx bench/funnel-steps.ts /var/tmp/f-new.db /var/tmp/f-old.db
 */
import { SqliteRecordStore } from '@convotrack/collector'
import Database from 'better-sqlite3'
import { USER_STEPS } from '../packages/collector/src/reports/analytics-tables'
import type { FunnelStep } from '../packages/collector/src/reports/analytics-types'
import { sqliteDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { funnelReport } from '../packages/collector/src/reports/funnel-report'
import { STEP_SPANS } from '../packages/collector/src/reports/funnel-spans'
import { type Funnel, funnelBefore } from './funnel-before'

const file = process.argv[2] ?? '/var/tmp/f-new.db'
const old = new Database(process.argv[3] ?? '/var/tmp/f-old.db', { readonly: true })
const t0 = performance.now()
await new SqliteRecordStore(file).close()
console.log(`opened (migrations) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
const db = new Database(file)
const steps = d.table(USER_STEPS.name)
const exec = async (q: Query) => db.prepare(q.sql).all(...(q.params as unknown[])) as Record<string, unknown>[]

const execOld = async (q: Query) => old.prepare(q.sql).all(...(q.params as unknown[])) as Record<string, unknown>[]
const before = (filter: Funnel) => funnelBefore(d, execOld, filter)
const after = async (filter: Funnel) => (await funnelReport(d, exec, filter)).map((l) => l.users)

const count = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n)
console.log(
  `rows: ${count(`SELECT count(*) AS n FROM ${steps}`)} step-hours, ${count(`SELECT count(*) AS n FROM ${d.table(STEP_SPANS.name)}`)} step spans`,
)
// The dashboard's default range: the last 30 days from now.
const now = Date.now()
const ranges = { 'last 30 days': { from: now - 30 * 86_400_000, to: null }, 'all time': {} }
const funnels: Record<string, FunnelStep[]> = {
  'greeting → order.status → purchase': [
    { kind: 'intent', name: 'greeting' },
    { kind: 'intent', name: 'order.status' },
    { kind: 'event', name: 'purchase' },
  ],
  greeting: [{ kind: 'intent', name: 'greeting' }],
  'payment → goodbye': [
    { kind: 'intent', name: 'payment' },
    { kind: 'intent', name: 'goodbye' },
  ],
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
for (const [fn, funnel] of Object.entries(funnels))
  for (const [rn, r] of Object.entries(ranges)) {
    const filter = { ...r, steps: funnel }
    const times = { before: [] as number[], after: [] as number[] }
    const answers = { before: [] as number[], after: [] as number[] }
    for (let i = 0; i < 5; i++)
      for (const [name, run] of [
        ['before', before],
        ['after', after],
      ] as const) {
        const a = performance.now()
        answers[name] = await run(filter)
        times[name].push(performance.now() - a)
      }
    const same = answers.before.join() === answers.after.join()
    console.log(
      `${fn} | ${rn} | users ${answers.after.join(' → ')}${same ? '' : ` (before: ${answers.before.join(' → ')})`} | before ${median(times.before).toFixed(1)} / ${Math.max(...times.before).toFixed(1)} ms | after ${median(times.after).toFixed(1)} / ${Math.max(...times.after).toFixed(1)} ms | ${(median(times.before) / median(times.after)).toFixed(1)}×`,
    )
  }
db.close()
old.close()
