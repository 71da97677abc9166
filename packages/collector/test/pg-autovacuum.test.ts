/**
 * PostgreSQL migration 29: every collector table is vacuumed (and its statistics taken) after 1 % of
 * its rows changed or were added, not the server's default 20 % — the reports read their summaries
 * from indexes alone, and rows no vacuum has seen yet are checked in the table (pg-autovacuum.ts).
 * On a real server whose autovacuum looks every second.
 */
import { PgRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AUTOVACUUM_SCALE_FACTOR } from '../src/store/postgres/pg-autovacuum'
import { type PostgresServer, startPostgres } from './support/postgres'

let server: PostgresServer
let url: string
let client: pg.Client

beforeAll(async () => {
  server = await startPostgres()
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query('ALTER SYSTEM SET autovacuum_naptime = 1')
  await admin.query('SELECT pg_reload_conf()')
  await admin.end()
  url = await server.createDatabase()
  await (await PgRecordStore.open(url)).close()
  client = new pg.Client({ connectionString: url })
  await client.connect()
})
afterAll(async () => {
  await client?.end()
  await server?.destroy()
})

/** How many times autovacuum has vacuumed `table` (its statistics read afresh). */
async function autovacuums(table: string): Promise<number> {
  await client.query('SELECT pg_stat_clear_snapshot()')
  const { rows } = await client.query('SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = $1', [table])
  return Number(rows[0]?.autovacuum_count)
}

describe('autovacuum of the collector tables (PostgreSQL migration 29)', () => {
  it('every convotrack_ table has autovacuum and analyze after 1 % of its rows', async () => {
    const { rows } = await client.query<{ relname: string; reloptions: string[] | null }>(
      `SELECT relname, reloptions FROM pg_class
       WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace AND relname LIKE 'convotrack\\_%'`,
    )
    expect(rows.length).toBeGreaterThan(30)
    const want = [
      `autovacuum_vacuum_scale_factor=${AUTOVACUUM_SCALE_FACTOR}`,
      `autovacuum_analyze_scale_factor=${AUTOVACUUM_SCALE_FACTOR}`,
      `autovacuum_vacuum_insert_scale_factor=${AUTOVACUUM_SCALE_FACTOR}`,
    ]
    for (const r of rows)
      expect({ table: r.relname, options: r.reloptions }).toEqual({
        table: r.relname,
        options: expect.arrayContaining(want),
      })
  })

  it('a summary of 100 000 rows is vacuumed after 3 000 of them changed, and after 3 000 were added', async () => {
    const table = 'convotrack_retention_day_links'
    await client.query(
      `INSERT INTO ${table} (day, bot, user_id, prev_day, next_day, first_hour, last_hour)
       SELECT 86400000::bigint * (i % 90), 'b', 'u' || i, 0, 0, 0, 0 FROM generate_series(1, 100000) i`,
    )
    // Counted from here: the server's own vacuum of the load, then ours.
    await client.query(`VACUUM ANALYZE ${table}`)
    const before = await autovacuums(table)
    // 3 % of the rows: over 1 %, under the default 20 %.
    const updated = await client.query(
      `UPDATE ${table} SET last_hour = 3600000 WHERE user_id IN (SELECT 'u' || i FROM generate_series(1, 3000) i)`,
    )
    expect(updated.rowCount).toBe(3_000)
    await expect.poll(() => autovacuums(table), { timeout: 30_000, interval: 200 }).toBeGreaterThan(before)
    const afterUpdate = await autovacuums(table)
    await client.query(
      `INSERT INTO ${table} (day, bot, user_id, prev_day, next_day, first_hour, last_hour)
       SELECT 86400000::bigint * (i % 90), 'b', 'v' || i, 0, 0, 0, 0 FROM generate_series(1, 3000) i`,
    )
    await expect.poll(() => autovacuums(table), { timeout: 30_000, interval: 200 }).toBeGreaterThan(afterUpdate)
  })
})
