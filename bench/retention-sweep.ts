/**
 * What a retention sweep costs on a loaded store: `--steps` transactions of the sweep's size (500
 * records, the oldest by receive time first, as `retentionDays` runs them), each taking its
 * records' share out of every summary, timed one by one. It DELETES those records: run it on a
 * bench store (bench/collector-scale.ts) after its reads were timed.
 *
 *   npx tsx bench/retention-sweep.ts --db pg --pg-dir /work/bench-data/scale-pg --steps 20
 *   npx tsx bench/retention-sweep.ts --db /work/bench-data/scale-1m.db --steps 20
 */
import { parseArgs } from 'node:util'
import { isPostgresUrl, PgRecordStore, type RecordStore, SqliteRecordStore } from '../packages/collector/src/index'
import { type PostgresServer, startPostgres } from '../packages/collector/test/support/postgres'

const { values: args } = parseArgs({
  options: { db: { type: 'string' }, 'pg-dir': { type: 'string' }, steps: { type: 'string' } },
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
const STEPS = Number(args.steps ?? 20)
const STEP = 500

async function main() {
  let server: PostgresServer | undefined
  let db = String(args.db)
  if (db === 'pg') {
    server = await startPostgres({ dir: String(args['pg-dir']) })
    db = await server.ensureDatabase('scale')
  }
  const store: RecordStore = isPostgresUrl(db)
    ? await PgRecordStore.open(db, { listen: false })
    : new SqliteRecordStore(db)
  try {
    const before = (await store.counts({})).records
    const ms: number[] = []
    let removed = 0
    // Everything received up to now is "old": each step takes the oldest 500.
    const cut = Date.now()
    for (let i = 0; i < STEPS; i++) {
      const t0 = performance.now()
      const n = await store.deleteOlderThan({ before: cut, limit: STEP })
      ms.push(performance.now() - t0)
      removed += n
      if (n < STEP) break
    }
    const sorted = [...ms].sort((a, b) => a - b)
    const total = ms.reduce((t, x) => t + x, 0)
    console.log(
      `${isPostgresUrl(db) ? 'PostgreSQL' : 'SQLite'} holding ${before.toLocaleString('en')} records: ` +
        `${ms.length} sweep steps of ${STEP} records, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms, ` +
        `max ${sorted.at(-1)?.toFixed(0)} ms per step; ${removed.toLocaleString('en')} records in ${(total / 1000).toFixed(1)} s ` +
        `(${Math.round(removed / (total / 1000))} records/s)`,
    )
  } finally {
    await store.close()
    if (server) await server.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
