import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import { afterAll, describe } from 'vitest'
import { runAnalyticsContract, runSearchContract } from './analytics-contract'
import { KEPT_ZONES, RECOUNT_HERE, runAnalyticsRecount } from './analytics-recount'
import { runRollupContract } from './rollup-contract'
import { runStoreContract } from './store-contract'

const dir = mkdtempSync(join(tmpdir(), 'convotrack-contract-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0

// The store and rollup contracts in memory prove the same SQL on the same SQLite as on a file: on
// the other Node lines, which are there for the client (their better-sqlite3 build), the file's
// run does (RECOUNT_HERE says why the SQL is the system Node's to prove).
describe.skipIf(!RECOUNT_HERE)('in memory (the system Node)', () => {
  runStoreContract('SQLite in memory', async () => ({ store: new SqliteRecordStore(':memory:') }))
  runRollupContract('SQLite in memory', async () => ({ store: new SqliteRecordStore(':memory:') }))
})
runStoreContract('SQLite file', async () => {
  const file = join(dir, `s${++n}.db`)
  return { store: new SqliteRecordStore(file), reopen: async () => new SqliteRecordStore(file) }
})

runRollupContract('SQLite file', async () => {
  const file = join(dir, `r${++n}.db`)
  return { store: new SqliteRecordStore(file), reopen: async () => new SqliteRecordStore(file) }
})

runAnalyticsContract('SQLite in memory', async () => ({
  store: new SqliteRecordStore(':memory:', { retentionZones: KEPT_ZONES }),
}))
runAnalyticsRecount('SQLite in memory', async (zones, options) => ({
  store: new SqliteRecordStore(':memory:', { ...options, retentionZones: zones ?? KEPT_ZONES }),
}))
runAnalyticsRecount('SQLite file', async (zones, options) => {
  const file = join(dir, `a${++n}.db`)
  return {
    store: new SqliteRecordStore(file, { ...options, retentionZones: zones ?? KEPT_ZONES }),
    reopen: async (again, more) => new SqliteRecordStore(file, { ...more, retentionZones: again ?? KEPT_ZONES }),
  }
})
runSearchContract('SQLite in memory', async () => ({ store: new SqliteRecordStore(':memory:') }))
