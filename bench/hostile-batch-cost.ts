/**
 * What one batch of big hostile records costs on PostgreSQL, statement by statement: the
 * question behind the collector's default `queryTimeoutMs` (3 s). A throwaway server logs every
 * statement's duration (`log_min_duration_statement = 0`, parameters not logged); batches of
 * `--records` records (default 8: the hostile fuzz's largest batch; 200 = the batch route's limit)
 * carrying `--size` characters of hostile text each go through the batch route's ingest path
 * (`ingestMany`, no HTTP), and the slowest statements are printed with their share of the batch.
 *
 *   npx tsx bench/hostile-batch-cost.ts --records 200 --size 200000
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { PgRecordStore, validateRecord } from '../packages/collector/src/index'
import { ingestMany } from '../packages/collector/src/ingest/ingest'
import { LiveFeed } from '../packages/collector/src/live/live-feed'
import { startPostgres } from '../packages/collector/test/support/postgres'

const { values: args } = parseArgs({
  options: {
    records: { type: 'string' },
    size: { type: 'string' },
    batches: { type: 'string' },
    'drop-index': { type: 'string' },
  },
  args: process.argv.slice(2).filter((a) => a !== '--'),
})
const RECORDS = Number(args.records ?? 8)
const SIZE = Number(args.size ?? 200_000)
const BATCHES = Number(args.batches ?? 5)

/** Hostile text of about SIZE characters, of the fuzz's kinds, by index. */
function hostileText(i: number): string {
  const units = ['\\"', '<', '<a href="', '*_~`', '&lt;', 'word ', `w${i} `]
  const unit = units[i % units.length] as string
  if (i % units.length === units.length - 1) {
    // Many distinct words: the most a text search index has to take from one message.
    const words: string[] = []
    for (let n = 0; words.length * 8 < SIZE; n++) words.push(`w${i}x${n}`)
    return words.join(' ')
  }
  return unit.repeat(Math.ceil(SIZE / unit.length))
}

function body(i: number): Record<string, unknown> {
  const text = hostileText(i)
  if (i % 3 === 0)
    return {
      text,
      userId: `u${i % 5}`,
      intent: { name: 'NotHandled' },
      platformUserJson: { locale: 'en_GB', note: text.slice(0, 1000) },
    }
  if (i % 3 === 1) return { text, userId: `u${i % 5}` }
  return { type: 'customEvent', name: text.slice(0, 1000), userId: `u${i % 5}`, extraInfo: { blob: text } }
}

async function main() {
  const server = await startPostgres()
  try {
    const admin = new pg.Client({ connectionString: server.url })
    await admin.connect()
    await admin.query('ALTER SYSTEM SET log_min_duration_statement = 0')
    await admin.query('ALTER SYSTEM SET log_parameter_max_length = 0')
    await admin.query('SELECT pg_reload_conf()')
    // The server's log sits in its socket folder (test/support/postgres.ts).
    const dir = String((await admin.query('SHOW unix_socket_directories')).rows[0]?.unix_socket_directories)
    await admin.end()
    const url = await server.createDatabase('hostile')
    const store = await PgRecordStore.open(url, { queryTimeoutMs: 600_000, listen: false })
    if (args['drop-index']) {
      // What one index costs: the same batches without it.
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(`DROP INDEX ${args['drop-index']}`)
      await c.end()
    }
    const feed = new LiveFeed()
    const logFile = join(dir, 'server.log')
    const start = readFileSync(logFile, 'utf8').length
    const totals: number[] = []
    for (let b = 0; b < BATCHES; b++) {
      const batch = Array.from({ length: RECORDS }, (_, j) => {
        const i = b * RECORDS + j
        const bd = body(i)
        const platform = 'universal' as const
        const type = i % 3 === 2 ? 'event' : i % 3 === 0 ? 'incoming' : 'outgoing'
        validateRecord(platform, type, bd, '11.1.0-rest')
        return { bot: 'fuzz', platform, type, v: '11.1.0-rest', raw: JSON.stringify(bd), body: bd } as never
      })
      const t0 = performance.now()
      await ingestMany(store, feed, batch)
      totals.push(performance.now() - t0)
    }
    await store.close()
    // "duration: 12.345 ms  execute <unnamed>: INSERT INTO …" / "statement: BEGIN"
    const lines = readFileSync(logFile, 'utf8').slice(start).split('\n')
    const bySql = new Map<string, { ms: number; n: number; max: number }>()
    for (const line of lines) {
      const m = /duration: ([\d.]+) ms\s+(?:execute [^:]*|statement|parse [^:]*|bind [^:]*): (.*)$/.exec(line)
      if (!m || /^(parse|bind)/.test(line.split('ms')[1]?.trim() ?? '')) continue
      const ms = Number(m[1])
      const sql = (m[2] as string).replace(/\s+/g, ' ').slice(0, 90)
      const e = bySql.get(sql) ?? { ms: 0, n: 0, max: 0 }
      e.ms += ms
      e.n++
      e.max = Math.max(e.max, ms)
      bySql.set(sql, e)
    }
    const sum = [...bySql.values()].reduce((t, e) => t + e.ms, 0)
    totals.sort((a, b) => a - b)
    console.log(
      `${BATCHES} batches of ${RECORDS} records × ~${SIZE.toLocaleString('en')} characters of hostile text; ` +
        `batch median ${totals[Math.floor(BATCHES / 2)]?.toFixed(0)} ms, max ${totals.at(-1)?.toFixed(0)} ms; ` +
        `server time in statements ${sum.toFixed(0)} ms`,
    )
    console.log('| statement (start) | calls | total ms | max ms | share |\n|---|---|---|---|---|')
    for (const [sql, e] of [...bySql].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
      console.log(
        `| \`${sql}\` | ${e.n} | ${e.ms.toFixed(0)} | ${e.max.toFixed(0)} | ${((100 * e.ms) / sum).toFixed(0)} % |`,
      )
  } finally {
    await server.destroy()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
