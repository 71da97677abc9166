import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import { afterAll } from 'vitest'
import { runRollupContract } from './rollup-contract'
import { runStoreContract } from './store-contract'

const dir = mkdtempSync(join(tmpdir(), 'convotrack-contract-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0

runStoreContract('SQLite in memory', async () => ({ store: new SqliteRecordStore(':memory:') }))
runStoreContract('SQLite file', async () => {
  const file = join(dir, `s${++n}.db`)
  return { store: new SqliteRecordStore(file), reopen: async () => new SqliteRecordStore(file) }
})

runRollupContract('SQLite in memory', async () => ({ store: new SqliteRecordStore(':memory:') }))
runRollupContract('SQLite file', async () => {
  const file = join(dir, `r${++n}.db`)
  return { store: new SqliteRecordStore(file), reopen: async () => new SqliteRecordStore(file) }
})
