/**
 * The funnel statement of two source trees side by side on one PostgreSQL store: "old" is another
 * checkout of this repository (e.g. `git worktree add /tmp/old <commit>`; it imports only that
 * tree's `src`), "new" is this tree. Each funnel's statement is built by each tree's
 * `funnelReport`, then run alternately (ABBA…) on the same connection; median of `--runs`, and
 * whether the counts are the same.
 *
 *   node --import tsx bench/funnel-trees-pg.ts --old /tmp/old --url postgres://…/scale \
 *     [--days 30|all] [--runs 4] intent:greeting,intent:order.status,event:purchase [more funnels…]
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import type { FunnelStep } from '../packages/collector/src/reports/analytics-types'
import { postgresDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { funnelReport } from '../packages/collector/src/reports/funnel-report'
import type { Exec } from '../packages/collector/src/reports/report-queries'

const { values: args, positionals } = parseArgs({
  options: {
    old: { type: 'string' },
    url: { type: 'string' },
    days: { type: 'string' },
    runs: { type: 'string' },
  },
  allowPositionals: true,
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
if (!args.old || !args.url || positionals.length === 0)
  throw new Error('--old TREE --url POSTGRES_URL and one or more funnels (kind:name,kind:name,…)')
const older = (await import(resolve(args.old, 'packages/collector/src/reports/funnel-report.ts'))) as {
  funnelReport: typeof funnelReport
}
const runs = Number(args.runs ?? 4)
const hour = 3_600_000
const from = args.days === 'all' ? 0 : Math.floor((Date.now() - Number(args.days ?? 30) * 86_400_000) / hour) * hour

/** The one statement a tree's funnel read sends. */
async function statement(report: typeof funnelReport, steps: FunnelStep[]): Promise<Query> {
  let sent: Query | undefined
  const capture: Exec = async (q) => {
    sent = q
    return []
  }
  await report(d, capture, { from, to: null, steps })
  if (!sent) throw new Error('the funnel sent no statement')
  return sent
}

const client = new pg.Client({ connectionString: args.url })
await client.connect()
try {
  for (const funnel of positionals) {
    const steps = funnel.split(',').map((s): FunnelStep => {
      const [kind, name] = s.split(':')
      if ((kind !== 'intent' && kind !== 'event') || !name) throw new Error(`${s}: a step is intent:NAME or event:NAME`)
      return { kind, name }
    })
    const sides = { old: await statement(older.funnelReport, steps), new: await statement(funnelReport, steps) }
    const ms = { old: [] as number[], new: [] as number[] }
    const counts = { old: '', new: '' }
    for (let i = 0; i < runs; i++)
      for (const side of i % 2 === 0 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
        const t = performance.now()
        const res = await client.query(d.sql(sides[side].sql), sides[side].params as unknown[])
        ms[side].push(performance.now() - t)
        counts[side] = JSON.stringify(res.rows[0])
      }
    const median = (v: number[]) => Math.round([...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] as number)
    process.stdout.write(
      `${args.days ?? 30} days ${funnel}: old ${median(ms.old)} ms · new ${median(ms.new)} ms · ${counts.old === counts.new ? `same counts ${counts.new}` : `DIFFERENT counts: old ${counts.old}, new ${counts.new}`}\n`,
    )
  }
} finally {
  await client.end()
}
