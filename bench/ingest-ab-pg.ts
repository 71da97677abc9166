/**
 * PostgreSQL twin of bench/ingest-ab.ts: ingest into a loaded database before and after a schema
 * step, in the same run. A server of its own (a temp cluster, `fsync=off` as the tests run it),
 * a database bulk-seeded at the schema before the step (`--seed`, scale-bench records), then two
 * copies of it (`CREATE DATABASE … TEMPLATE`): "before" with the step marked done without running,
 * "after" migrated by the store's open. The same batches of 500 go into both, alternating which
 * goes first; per store: wall time, this process's CPU and the CPU of that database's backends
 * (from /proc). The ratio is the result.
 *
 * `node --import tsx bench/ingest-ab-pg.ts [--seed 200000] [--records 20000] [--users 10000] [--step 13]`
 * `--floor`: both at today's schema, "after" storing records WITHOUT the summaries (what ingest
 *   costs before any report's share); needs `--import ./bench/support/summaries-off.mjs` after tsx.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { PgRecordStore } from '../packages/collector/src/index'
import { ingestMany } from '../packages/collector/src/ingest/ingest'
import { LiveFeed } from '../packages/collector/src/live/live-feed'
import { migrate, PG_MIGRATIONS } from '../packages/collector/src/store/postgres/pg-migrations'
import { startPostgres } from '../packages/collector/test/support/postgres'
import { acceptedScaleRecord } from './ingest-records'
import { bulkSeedPostgres, deriveIfPending } from './scale-bulk'

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string' },
    records: { type: 'string' },
    users: { type: 'string' },
    step: { type: 'string' },
    floor: { type: 'boolean' },
  },
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
const SEED = Number(args.seed ?? 200_000)
const N = Number(args.records ?? 20_000)
const USERS = Number(args.users ?? Math.round(SEED / 20))
const FLOOR = args.floor === true
if (FLOOR && !(globalThis as { convotrackSummariesHook?: boolean }).convotrackSummariesHook)
  throw new Error('--floor: run with `node --import tsx --import ./bench/support/summaries-off.mjs`')
// --floor: every migration in both (no step between them).
const STEP = FLOOR ? Math.max(...PG_MIGRATIONS.map((m) => m.version)) + 1 : Number(args.step ?? 13)
const BATCH = 500
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

const shape = { records: SEED + N, users: USERS, end: Math.floor(Date.now() / 600_000) * 600_000, days: 90 }
const accepted = acceptedScaleRecord(shape, 'ab.')

/** The users per day and hour as migration 12 made them (keyed by bot first, a time-first copy beside). */
const AS_MIGRATION_12 = ['day', 'hour']
  .map((p) => {
    const t = `convotrack_rollup_user_${p}s`
    return `ALTER TABLE ${t} DROP CONSTRAINT ${t}_pkey; ALTER TABLE ${t} ADD PRIMARY KEY (bot, ${p}, user_id);
CREATE INDEX ${t}_${p}_bot_user_id ON ${t} (${p}, bot, user_id);`
  })
  .join('\n')

/** User + system CPU (µs) of these processes so far. */
function cpuOf(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // ended meanwhile
    }
  }
  return ticks * 10_000 // USER_HZ = 100
}

const server = await startPostgres()
try {
  const base = await server.createDatabase('ab_base')
  const c = new pg.Client({ connectionString: base })
  await c.connect()
  await migrate(
    c,
    PG_MIGRATIONS.filter((m) => m.version < STEP),
  )
  // The earlier steps create today's summary tables: put them back as migration 12 made them.
  if (STEP === 13) await c.query(AS_MIGRATION_12)
  await c.end()
  await bulkSeedPostgres(base, SEED, accepted, log)
  await deriveIfPending(base, log)
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  for (const name of ['ab_before', 'ab_after']) await admin.query(`CREATE DATABASE ${name} TEMPLATE ab_base`)
  const mark = new pg.Client({ connectionString: server.urlFor('ab_before') })
  await mark.connect()
  for (const m of PG_MIGRATIONS.filter((x) => x.version >= STEP))
    await mark.query('INSERT INTO convotrack_migrations (version, name) VALUES ($1, $2)', [
      m.version,
      'skipped (bench)',
    ])
  await mark.end()
  const a = await PgRecordStore.open(server.urlFor('ab_before'), { listen: false })
  let t = performance.now()
  const b = await PgRecordStore.open(server.urlFor('ab_after'), { listen: false })
  log(`${SEED.toLocaleString('en')} records; "after" migrated in ${Math.round(performance.now() - t)} ms`)
  const backends = async (db: string) =>
    (await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db])).rows.map((r) => Number(r.pid))
  const feed = new LiveFeed()
  const spent = { before: 0, after: 0 }
  const cpu = { before: 0, after: 0 }
  const dbCpu = { before: 0, after: 0 }
  for (let start = SEED, k = 0; start < SEED + N; start += BATCH, k++) {
    const batch = Array.from({ length: Math.min(BATCH, SEED + N - start) }, (_, j) => accepted(start + j))
    const order: Array<['before' | 'after', PgRecordStore, string]> = [
      ['before', a, 'ab_before'],
      ['after', b, 'ab_after'],
    ]
    if (k % 2 === 1) order.reverse()
    for (const [name, store, db] of order) {
      const pids = await backends(db)
      const d0 = cpuOf(pids)
      t = performance.now()
      // --floor: "after" stores without the summaries (bench/support/summaries-off.mjs).
      ;(globalThis as { convotrackSummariesOff?: boolean }).convotrackSummariesOff = FLOOR && name === 'after'
      const c0 = process.cpuUsage()
      const results = await ingestMany(store, feed, batch)
      const used = process.cpuUsage(c0)
      spent[name] += performance.now() - t
      cpu[name] += used.user + used.system
      dbCpu[name] += cpuOf(pids) - d0
      if (results.some((r) => !('id' in r))) throw new Error(`${name}: a record was not stored`)
    }
  }
  const rate = (ms: number) => Math.round(N / (ms / 1000))
  const per = (us: number) => Math.round(us / N)
  process.stdout.write(
    `before ${rate(spent.before)} rec/s, CPU/record collector ${per(cpu.before)} µs + database ${per(dbCpu.before)} µs · ` +
      `after ${rate(spent.after)} rec/s, ${per(cpu.after)} µs + ${per(dbCpu.after)} µs · after / before: ` +
      `${(spent.before / spent.after).toFixed(2)}× rate, ${((cpu.before + dbCpu.before) / (cpu.after + dbCpu.after)).toFixed(2)}× less CPU\n`,
  )
  await a.close()
  await b.close()
  await admin.end()
} finally {
  await server.destroy()
}
