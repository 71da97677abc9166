// Deriving the analytics from a big history (PostgreSQL migration 6) runs in one transaction.
// Ingest serialises writers with a transaction-scoped lock per user; the rebuild must not, or
// half a million users overflow PostgreSQL's lock table (max_locks_per_transaction) and the
// upgrade fails with "out of shared memory". The locks a transaction holds are read from
// pg_locks before it ends.
import { PgRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lockUsers, rebuildAnalytics } from '../src/reports/analytics-writes'
import { postgresDialect } from '../src/reports/dialect'
import type { Row } from '../src/reports/report-queries'
import { runStepsAsync, type Steps } from '../src/reports/rollup-writes'
import { load, traffic } from './rollup-contract'
import { type PostgresServer, startPostgres } from './support/postgres'

describe('PostgreSQL: the analytics rebuild holds no lock per user', () => {
  let server: PostgresServer
  let url: string
  beforeAll(async () => {
    server = await startPostgres()
    url = await server.createDatabase()
    const store = await PgRecordStore.open(url, { listen: false })
    await load(store, traffic(400, 11))
    await store.close()
  }, 60_000)
  afterAll(async () => {
    await server?.destroy()
  })

  /** Runs `steps` in a transaction and answers the advisory locks it holds just before it ends. */
  async function advisoryLocksHeldBy(steps: Steps<unknown>): Promise<number> {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query('BEGIN')
      await runStepsAsync(
        steps,
        async (q) => (await client.query<Row>(postgresDialect.sql(q.sql), q.params as unknown[])).rows,
      )
      const held = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
      )
      await client.query('ROLLBACK')
      return Number(held.rows[0]?.n)
    } finally {
      await client.end()
    }
  }

  it('ingest-style user locks are visible in pg_locks (the measurement sees them)', async () => {
    expect(
      await advisoryLocksHeldBy(lockUsers(postgresDialect, ['shop\u0000u1', 'shop\u0000u2', 'help\u0000u1'])),
      // The three users' and the retention zone list's (shared: see ZONE_LIST_LOCK).
    ).toBe(4)
  })

  it("the rebuild of every user's sessions takes none", async () => {
    expect(await advisoryLocksHeldBy(rebuildAnalytics(postgresDialect))).toBe(0)
  })
})
