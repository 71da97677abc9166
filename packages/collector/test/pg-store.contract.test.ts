import { PgRecordStore } from '@convotrack/collector'
import type pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
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

// A plan PostgreSQL estimates as costly (a funnel over many users) was JIT-compiled for ~2 s
// before it ran: the collector's sessions turn JIT off, each connection of the pool before its
// first statement.
it('PostgreSQL: the collector’s connections run without JIT compilation', async () => {
  const store = await PgRecordStore.open(await server.createDatabase(), { listen: false })
  try {
    const pool = (store as unknown as { pool: pg.Pool }).pool
    // Two connections at once: each new one is set, not only the first.
    const clients = await Promise.all([pool.connect(), pool.connect()])
    try {
      for (const c of clients) expect((await c.query('SHOW jit')).rows).toEqual([{ jit: 'off' }])
    } finally {
      for (const c of clients) c.release()
    }
  } finally {
    await store.close()
  }
})
