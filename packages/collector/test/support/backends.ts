/**
 * The two record stores the collector ships, for suites that run the same tests on each: SQLite
 * and a real PostgreSQL (support/postgres.ts), plus a universal incoming record to seed them with.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type IncomingRecord,
  type NormalizedMessage,
  normalizeRecord,
  PgRecordStore,
  type RecordStore,
  SqliteRecordStore,
} from '@convotrack/collector'
import { afterAll, beforeAll } from 'vitest'
import { type PostgresServer, startPostgres } from './postgres'

export interface Backend {
  name: string
  /** Where a collector keeps its records: `{ db }` for startCollector (a fresh database each call). */
  db(): Promise<string | undefined>
  /** A fresh store (the caller closes it). */
  store(): Promise<RecordStore>
  /** A database the erase-user CLI verb can open. */
  cliDb(): Promise<string>
  /** Opens the `cliDb` again (another store on the same data). */
  open(db: string): Promise<RecordStore>
}

/**
 * SQLite, and PostgreSQL on a real server this call starts for the calling test file (its
 * `beforeAll`; stopped in its `afterAll`). Call it at the top level of a test file.
 */
export function backends(): Backend[] {
  let pg: PostgresServer | undefined
  beforeAll(async () => {
    pg = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await pg?.destroy()
  })
  const server = () => {
    if (!pg) throw new Error('the PostgreSQL server is not started (beforeAll)')
    return pg
  }
  return [
    {
      name: 'SQLite',
      db: async () => undefined,
      store: async () => new SqliteRecordStore(':memory:'),
      cliDb: async () => join(mkdtempSync(join(tmpdir(), 'ct-erase-')), 'records.db'),
      open: async (db) => new SqliteRecordStore(db),
    },
    {
      name: 'PostgreSQL',
      db: () => server().createDatabase(),
      store: async () => PgRecordStore.open(await server().createDatabase()),
      cliDb: () => server().createDatabase(),
      open: (db) => PgRecordStore.open(db),
    },
  ]
}

/** A universal incoming message of `userId` to `bot`, received at `receivedAt`, as a store takes it. */
export function recordAt(
  bot: string,
  userId: string,
  text: string,
  receivedAt: number,
): { record: IncomingRecord; messages: NormalizedMessage[] } {
  const body = { text, userId }
  return {
    record: { bot, platform: 'universal', type: 'incoming', v: '11.1.0-rest', raw: JSON.stringify(body), receivedAt },
    messages: normalizeRecord('universal', 'incoming', body),
  }
}

/** Stores {@link recordAt} straight into the store. */
export function addAt(store: RecordStore, bot: string, userId: string, text: string, receivedAt: number) {
  const { record, messages } = recordAt(bot, userId, text, receivedAt)
  return store.add(record, messages)
}
