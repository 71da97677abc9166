import { fileURLToPath } from 'node:url'
import { isPostgresUrl, parseCommandLine } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { redactUrl } from '../src/pg-store'

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
})
