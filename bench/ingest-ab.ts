/**
 * Ingest into a loaded SQLite store, before and after a schema change, in the same run:
 * two copies of the same store (`--base`, e.g. one `pnpm bench:scale -- --seed bulk` built),
 * "before" opened at its own schema (the newest step, `--skip`, is marked done without running),
 * "after" opened normally (the step runs: its time is printed). Then the same batches of 500
 * scale-bench records go into both, alternating which goes first (ABBA…), through the ingest
 * code in this process (no HTTP): every summary is maintained as at `POST /track/batch`.
 * Absolute figures follow the machine's load; the ratio is the result.
 *
 * `node --import tsx bench/ingest-ab.ts --base FILE [--records 20000] [--users 50000] [--skip 11]`
 * `--after-sql "…"`: instead of the migration, run this SQL on "after" (to try a change first).
 * `--keep`: leave the two copies in `--dir` (ingest-ab-before.db, ingest-ab-after.db).
 * `--seed M`: when `--base` does not exist, make it: M records by the scale bench's bulk seed.
 * `--floor`: "after" is the same schema storing records WITHOUT the summaries (what ingest costs
 *   before any report's share); needs `--import ./bench/support/summaries-off.mjs` after tsx.
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { SqliteRecordStore } from '../packages/collector/src/index'
import { ingestMany } from '../packages/collector/src/ingest/ingest'
import { LiveFeed } from '../packages/collector/src/live/live-feed'
import { acceptedScaleRecord } from './ingest-records'
import { bulkSeedSqlite } from './scale-bulk'

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    records: { type: 'string' },
    users: { type: 'string' },
    skip: { type: 'string' },
    'after-sql': { type: 'string' },
    dir: { type: 'string' },
    seed: { type: 'string' },
    keep: { type: 'boolean' },
    floor: { type: 'boolean' },
  },
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
if (!args.base) throw new Error('--base FILE: a loaded store to copy (never written)')
const BASE = args.base
const N = Number(args.records ?? 20_000)
const USERS = Number(args.users ?? 50_000)
const FLOOR = args.floor === true
if (FLOOR && !(globalThis as { convotrackSummariesHook?: boolean }).convotrackSummariesHook)
  throw new Error('--floor: run with `node --import tsx --import ./bench/support/summaries-off.mjs`')
const SKIP = Number(args.skip ?? 11)
const DIR = args.dir ?? '/var/tmp'
const BATCH = 500

const SEEDED = Number(args.seed ?? 0)
const shape = { records: SEEDED + N, users: USERS, end: Math.floor(Date.now() / 600_000) * 600_000, days: 90 }
const accepted = acceptedScaleRecord(shape, 'ab.')

if (!existsSync(BASE)) {
  if (!SEEDED) throw new Error(`${BASE} does not exist: give --seed M to make it`)
  await new SqliteRecordStore(BASE).close()
  bulkSeedSqlite(BASE, SEEDED, accepted, (line) => process.stderr.write(`${line}\n`))
}

function copy(to: string): void {
  for (const ext of ['', '-wal']) {
    rmSync(to + ext, { force: true })
    if (existsSync(BASE + ext)) copyFileSync(BASE + ext, to + ext)
  }
  rmSync(`${to}-shm`, { force: true })
}

const before = `${DIR}/ingest-ab-before.db`
const after = `${DIR}/ingest-ab-after.db`
copy(before)
copy(after)
const probe = new Database(before)
const from = Number(probe.prepare('SELECT count(*) FROM records').pluck().get())
const version = Number(probe.pragma('user_version', { simple: true }))
probe.close()
// The slice continues the load's time line: event times at the end of its span.
shape.records = from + N
if (!FLOOR) {
  const db = new Database(before)
  db.pragma(`user_version = ${Math.max(version, SKIP)}`)
  db.close()
}
if (args['after-sql']) {
  const db = new Database(after)
  db.exec(args['after-sql'])
  db.pragma(`user_version = ${Math.max(version, SKIP)}`)
  db.close()
}
const a = new SqliteRecordStore(before)
let t = performance.now()
const b = new SqliteRecordStore(after)
const openMs = performance.now() - t
process.stderr.write(
  `${from.toLocaleString('en')} records at user_version ${version}; "after" opened in ${Math.round(openMs)} ms${args['after-sql'] ? ' (--after-sql)' : ''}${FLOOR ? ' (--floor: "after" without the summaries)' : ''}\n`,
)

const feed = new LiveFeed()
const spent = { before: 0, after: 0 }
/** CPU of this process (user + system, µs) per store: less swayed by other processes' load than wall time. */
const cpu = { before: 0, after: 0 }
for (let start = from, k = 0; start < from + N; start += BATCH, k++) {
  const batch = Array.from({ length: Math.min(BATCH, from + N - start) }, (_, j) => accepted(start + j))
  const order: Array<['before' | 'after', SqliteRecordStore]> = [
    ['before', a],
    ['after', b],
  ]
  if (k % 2 === 1) order.reverse()
  for (const [name, store] of order) {
    t = performance.now()
    // --floor: "after" stores without the summaries (bench/support/summaries-off.mjs).
    ;(globalThis as { convotrackSummariesOff?: boolean }).convotrackSummariesOff = FLOOR && name === 'after'
    const c = process.cpuUsage()
    const results = await ingestMany(store, feed, batch)
    const used = process.cpuUsage(c)
    cpu[name] += used.user + used.system
    spent[name] += performance.now() - t
    if (results.some((r) => !('id' in r))) throw new Error(`${name}: a record was not stored`)
  }
}
const rate = (ms: number) => Math.round(N / (ms / 1000))
process.stdout.write(
  `before ${rate(spent.before)} rec/s, ${Math.round(cpu.before / N)} µs CPU/record · after ${rate(spent.after)} rec/s, ${Math.round(cpu.after / N)} µs CPU/record · after / before: ${(spent.before / spent.after).toFixed(2)}× rate, ${(cpu.before / cpu.after).toFixed(2)}× less CPU\n`,
)
await a.close()
await b.close()
// `--keep`: leave both copies (to time reads on them).
if (!args.keep)
  for (const f of [before, after]) for (const ext of ['', '-wal', '-shm']) rmSync(f + ext, { force: true })
