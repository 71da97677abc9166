import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isPostgresUrl, PgRecordStore, parseCommandLine } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { redactUrl } from '../src/store/postgres/pg-store'

const deployBots = fileURLToPath(new URL('../deploy/bots.json', import.meta.url))

describe('choosing PostgreSQL', () => {
  it('DATABASE_URL picks the database when --db and the config file name none; --db wins', () => {
    const env = { DATABASE_URL: 'postgres://u:secret@db:5432/convotrack', SHOP_KEY: 'k-shop' }
    const fromEnv = parseCommandLine(['--config', deployBots], env)
    expect(fromEnv).toMatchObject({
      help: false,
      options: { db: 'postgres://u:secret@db:5432/convotrack', bots: [{ name: 'shop', apiKey: 'k-shop' }] },
    })
    expect(parseCommandLine(['--db', 'other.db'], env)).toMatchObject({ options: { db: 'other.db' } })
    expect(parseCommandLine([], {})).toMatchObject({ options: { db: './convotrack.db' } })
  })

  it('postgres:// and postgresql:// URLs select the PostgreSQL store; logs never show the password', () => {
    expect(isPostgresUrl('postgres://h/db')).toBe(true)
    expect(isPostgresUrl('postgresql://h/db')).toBe(true)
    expect(isPostgresUrl('./postgres.db')).toBe(false)
    expect(isPostgresUrl(':memory:')).toBe(false)
    expect(redactUrl('postgres://u:hunter2@db:5432/convotrack')).toBe('postgres://u:***@db:5432/convotrack')
    expect(redactUrl('postgres://u@db/convotrack')).toBe('postgres://u@db/convotrack')
  })

  it('"postgres" in the config file passes the store options; a bad value names the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'convotrack-pgcfg-'))
    try {
      const file = join(dir, 'config.json')
      writeFileSync(file, JSON.stringify({ postgres: { queryTimeoutMs: 1500, maxConnections: 4 } }))
      expect(parseCommandLine(['--config', file], {})).toMatchObject({
        options: { postgres: { queryTimeoutMs: 1500, maxConnections: 4 } },
      })
      writeFileSync(file, JSON.stringify({ postgres: { queryTimeoutMs: -1 } }))
      expect(() => parseCommandLine(['--config', file], {})).toThrow(
        /"postgres"\.queryTimeoutMs must be a positive number/,
      )
      writeFileSync(file, JSON.stringify({ postgres: 5 }))
      expect(() => parseCommandLine(['--config', file], {})).toThrow(/"postgres" must be an object/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('PgRecordStore.open refuses a bound that is not a positive number, naming it (before connecting)', async () => {
    await expect(PgRecordStore.open('postgres://127.0.0.1:1/none', { queryTimeoutMs: 0 })).rejects.toThrow(
      /queryTimeoutMs must be a positive number of milliseconds \(got 0\)/,
    )
    await expect(
      PgRecordStore.open('postgres://127.0.0.1:1/none', { connectionTimeoutMs: Number.NaN }),
    ).rejects.toThrow(/connectionTimeoutMs must be a positive number/)
  })
})
