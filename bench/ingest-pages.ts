/**
 * What a batch's commit writes into a loaded SQLite store, b-tree by b-tree: a copy of `--base`
 * takes `--records` scale-bench records in batches of 500 through the ingest code (no HTTP) with
 * checkpoints held back, then every frame of the WAL is mapped to the table or index owning its
 * page (`dbstat`). Pages per record is what the commit costs (each a 4 KiB write, and again at
 * the checkpoint); it does not depend on the machine's load. `--before`: open the copy at its own
 * schema (the newest step, `--skip`, marked done without running) to compare.
 *
 * `node --import tsx bench/ingest-pages.ts --base FILE [--records 2000] [--users 15000] [--before]`
 */
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { SqliteRecordStore } from '../packages/collector/src/index'
import { ingestMany } from '../packages/collector/src/ingest/ingest'
import { LiveFeed } from '../packages/collector/src/live/live-feed'
import { acceptedScaleRecord } from './ingest-records'

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    records: { type: 'string' },
    users: { type: 'string' },
    skip: { type: 'string' },
    before: { type: 'boolean' },
    dir: { type: 'string' },
  },
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
if (!args.base) throw new Error('--base FILE: a loaded store to copy (never written)')
const N = Number(args.records ?? 2_000)
const file = `${args.dir ?? '/var/tmp'}/ingest-pages.db`
const clean = () => {
  for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true })
}
clean()
copyFileSync(args.base, file)
if (existsSync(`${args.base}-wal`)) copyFileSync(`${args.base}-wal`, `${file}-wal`)
const db = new Database(file)
if (args.before) db.pragma(`user_version = ${Number(args.skip ?? 11)}`)
const store = new SqliteRecordStore(file)
// Everything written so far into the file, so the WAL holds only the batches' commits.
db.pragma('wal_checkpoint(TRUNCATE)')
;(store as unknown as { db: Database.Database }).db.exec('PRAGMA wal_autocheckpoint = 0')
const from = Number(db.prepare('SELECT count(*) FROM records').pluck().get())
const shape = {
  records: from + N,
  users: Number(args.users ?? 15_000),
  end: Math.floor(Date.now() / 600_000) * 600_000,
  days: 90,
}
const accepted = acceptedScaleRecord(shape, 'pg.')
const feed = new LiveFeed()
for (let s = from; s < from + N; s += 500)
  await ingestMany(
    store,
    feed,
    Array.from({ length: Math.min(500, from + N - s) }, (_, j) => accepted(s + j)),
  )
const wal = readFileSync(`${file}-wal`)
const pageSize = wal.readUInt32BE(8)
const frames: number[] = []
// The WAL: a 32-byte header, then frames of a 24-byte header (page number first) and the page.
for (let o = 32; o + 24 + pageSize <= wal.length; o += 24 + pageSize) frames.push(wal.readUInt32BE(o))
const owner = new Map<number, string>()
for (const r of db.prepare('SELECT name, pageno FROM dbstat').iterate() as Iterable<{ name: string; pageno: number }>)
  owner.set(r.pageno, r.name)
const by = new Map<string, number>()
for (const p of frames) by.set(owner.get(p) ?? '(free)', (by.get(owner.get(p) ?? '(free)') ?? 0) + 1)
process.stdout.write(
  `${from.toLocaleString('en')} records${args.before ? ' (before the step)' : ''}: ${(frames.length / N).toFixed(1)} pages written per record\n`,
)
for (const [name, n] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 15))
  process.stdout.write(`${(n / N).toFixed(2).padStart(6)}  ${name}\n`)
db.close()
await store.close()
clean()
