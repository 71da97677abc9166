/**
 * What the handoff queue costs ingest: records/s a real core tracker gets acknowledged by a
 * collector whose bot has the default handoff rules (every incoming message updates its
 * conversation's row after the answer) vs the same bot with nothing to watch (the desk skips
 * it), on a SQLite file and on PostgreSQL, alternating in the same run (quote the ratios). Also
 * how long the desk takes to catch up after the last acknowledgement (measured as `close()`,
 * which waits for it).
 *
 *   npx tsx bench/handoff-ingest.ts
 *   BENCH_RECORDS=5000 BENCH_ROUNDS=3 npx tsx bench/handoff-ingest.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTracker } from '@convotrack/core'
import { type HandoffOptions, startCollector } from '../packages/collector/src/index'
import { startPostgres } from '../packages/collector/test/support/postgres'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const OFF: HandoffOptions = { intents: [], keywords: [], notHandledStreak: 0, autoResumeMinutes: 0 }

const body = (i: number) => ({ text: `where is my order number ${i}?`, userId: `user-${i % 500}` })

async function run(db: string, handoff: HandoffOptions | undefined): Promise<{ perSecond: number; drainMs: number }> {
  const collector = await startCollector({
    port: 0,
    db,
    demoBot: false,
    log: false,
    bots: [{ name: 'bench', apiKey: 'bench-key', ...(handoff ? { handoff } : {}) }],
  })
  const tracker = createTracker({ apiKey: 'bench-key', baseUrl: collector.url, maxQueueSize: RECORDS })
  const t0 = performance.now()
  for (let i = 0; i < RECORDS; i++) tracker.universal.logIncoming(body(i))
  const flushed = await tracker.flush(300_000)
  const seconds = (performance.now() - t0) / 1000
  await tracker.close()
  if (flushed.sent !== RECORDS) throw new Error(`delivery failed: ${JSON.stringify(flushed)}`)
  const t1 = performance.now()
  await collector.close()
  return { perSecond: RECORDS / seconds, drainMs: performance.now() - t1 }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const pg = await startPostgres()
const dir = mkdtempSync(join(tmpdir(), 'ct-handoff-bench-'))
try {
  for (const [name, next] of [
    ['SQLite file', (n: number) => Promise.resolve(join(dir, `r${n}.db`))],
    ['PostgreSQL', () => pg.createDatabase()],
  ] as const) {
    const ratios: number[] = []
    const drains: number[] = []
    const on: number[] = []
    const off: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const a = await run(await next(2 * r), OFF)
      const b = await run(await next(2 * r + 1), undefined)
      off.push(a.perSecond)
      on.push(b.perSecond)
      ratios.push(b.perSecond / a.perSecond)
      drains.push(b.drainMs - a.drainMs)
    }
    console.log(
      `${name}: desk on / off = ${median(ratios).toFixed(2)} (median of ${ROUNDS}; on ${median(on).toFixed(0)} rec/s, off ${median(off).toFixed(0)} rec/s); desk catch-up after the last ack ≈ ${median(drains).toFixed(0)} ms`,
    )
  }
} finally {
  await pg.destroy()
  rmSync(dir, { recursive: true, force: true })
}
