import { PgRecordStore } from '@convotrack/collector'
import { afterAll, beforeAll } from 'vitest'
import { runRollupContract } from './rollup-contract'
import { runStoreContract } from './store-contract'
import { type PostgresServer, startPostgres } from './support/postgres'

// A real PostgreSQL server (Debian's package), started for this file; each test gets its own database.
let server: PostgresServer
beforeAll(async () => {
  server = await startPostgres()
})
afterAll(async () => {
  await server?.destroy()
})

runStoreContract('PostgreSQL', async () => {
  const url = await server.createDatabase()
  return { store: await PgRecordStore.open(url), reopen: () => PgRecordStore.open(url) }
})

runRollupContract('PostgreSQL', async () => {
  const url = await server.createDatabase()
  return { store: await PgRecordStore.open(url), reopen: () => PgRecordStore.open(url) }
})
