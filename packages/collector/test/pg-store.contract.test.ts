import { PgRecordStore } from '@convotrack/collector'
import { afterAll, beforeAll } from 'vitest'
import { runAnalyticsContract, runSearchContract } from './analytics-contract'
import { KEPT_ZONES, runAnalyticsRecount } from './analytics-recount'
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

runAnalyticsContract('PostgreSQL', async () => ({
  store: await PgRecordStore.open(await server.createDatabase(), { retentionZones: KEPT_ZONES }),
}))
runAnalyticsRecount('PostgreSQL', async (zones, options) => {
  const url = await server.createDatabase()
  return {
    store: await PgRecordStore.open(url, { ...options, retentionZones: zones ?? KEPT_ZONES }),
    reopen: (again, more) => PgRecordStore.open(url, { ...more, retentionZones: again ?? KEPT_ZONES }),
  }
})
runSearchContract('PostgreSQL', async () => ({ store: await PgRecordStore.open(await server.createDatabase()) }))
