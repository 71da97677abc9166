/**
 * Ingest of two source trees side by side into copies of one loaded SQLite store: "old" is another
 * checkout of this repository (e.g. `git worktree add /tmp/old <commit>`; its `src` is imported),
 * "new" is this tree. Each side opens its own copy of `--base` (the new side's migrations run on
 * its copy first, timed), then the same batches of 500 scale-bench records go into both,
 * alternating which goes first, through each tree's in-process ingest (every summary maintained as
 * at `POST /track/batch`). Prints the CPU per record of each side and their ratio: what a code
 * change costs ingest, measured against the code before it in the same run.
 *
 *   node --import tsx bench/ingest-trees.ts --old /tmp/old --base FILE [--records 20000] [--users 50000] [--dir /var/tmp]
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { SqliteRecordStore } from '../packages/collector/src/index'
import { ingestMany } from '../packages/collector/src/ingest/ingest'
import { LiveFeed } from '../packages/collector/src/live/live-feed'
import { acceptedScaleRecord } from './ingest-records'

const { values: args } = parseArgs({
  options: {
    old: { type: 'string' },
    base: { type: 'string' },
    records: { type: 'string' },
    users: { type: 'string' },
    dir: { type: 'string' },
  },
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
if (!args.old || !args.base || !existsSync(args.base)) throw new Error('--old TREE --base FILE (a loaded store)')
const src = (path: string) => resolve(args.old as string, 'packages/collector/src', path)
const older = {
  store: (await import(src('index.ts'))) as { SqliteRecordStore: typeof SqliteRecordStore },
  ingest: (await import(src('ingest/ingest.ts'))) as { ingestMany: typeof ingestMany },
  feed: (await import(src('live/live-feed.ts'))) as { LiveFeed: typeof LiveFeed },
}
const N = Number(args.records ?? 20_000)
const dir = args.dir ?? '/var/tmp'
const files = { old: `${dir}/ingest-trees-old.db`, new: `${dir}/ingest-trees-new.db` }
for (const file of Object.values(files)) {
  for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true })
  for (const ext of ['', '-wal']) if (existsSync(args.base + ext)) copyFileSync(args.base + ext, file + ext)
}
const probe = new Database(args.base, { readonly: true })
const from = Number(probe.prepare('SELECT count(*) FROM records').pluck().get())
probe.close()
// The slice continues the load's time line: event times at the end of its span.
const shape = {
  records: from + N,
  users: Number(args.users ?? 50_000),
  end: Math.floor(Date.now() / 600_000) * 600_000,
  days: 90,
}
const accepted = acceptedScaleRecord(shape, 'trees.')

const oldStore = new older.store.SqliteRecordStore(files.old)
let t = performance.now()
const newStore = new SqliteRecordStore(files.new)
process.stderr.write(
  `${from.toLocaleString('en')} records; the new side's migrations took ${Math.round(performance.now() - t)} ms\n`,
)
const sides = {
  old: { store: oldStore, ingest: older.ingest.ingestMany, feed: new older.feed.LiveFeed() },
  new: { store: newStore, ingest: ingestMany, feed: new LiveFeed() },
}
const cpu = { old: 0, new: 0 }
const wall = { old: 0, new: 0 }
for (let start = from, k = 0; start < from + N; start += 500, k++) {
  const batch = Array.from({ length: Math.min(500, from + N - start) }, (_, j) => accepted(start + j))
  for (const name of k % 2 === 0 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
    const side = sides[name]
    const c = process.cpuUsage()
    t = performance.now()
    const results = await side.ingest(side.store, side.feed, batch)
    wall[name] += performance.now() - t
    const used = process.cpuUsage(c)
    cpu[name] += used.user + used.system
    if (results.some((r) => !('id' in r))) throw new Error(`${name}: a record was not stored`)
  }
}
const rate = (ms: number) => Math.round(N / (ms / 1000))
process.stdout.write(
  `old ${rate(wall.old)} rec/s, ${Math.round(cpu.old / N)} µs CPU/record · new ${rate(wall.new)} rec/s, ${Math.round(cpu.new / N)} µs CPU/record · new / old CPU ${(cpu.new / cpu.old).toFixed(3)}\n`,
)
await oldStore.close()
await newStore.close()
for (const file of Object.values(files)) for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true })
