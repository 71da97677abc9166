/**
 * SQLite search pages on a loaded file opened read-only (the index keyed by time, SQLite step 20):
 * the first page and the next (from the first's last hit) of a common word, a phrase with a prefix
 * and a word in no message, over the last 30 days, all time, a range ending 30 days ago, one bot
 * and a bot with no message; median / max of 5. Each first page is checked against every match
 * of the range sorted in JavaScript (the first 50).
 *   node --import tsx bench/search-pages.ts /var/tmp/s.db
 */
import Database from 'better-sqlite3'
import { sqliteDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { searchPage } from '../packages/collector/src/reports/search-page'
import { parseSearch } from '../packages/collector/src/reports/search-query'

const db = new Database(process.argv[2] ?? '/var/tmp/s.db', { readonly: true })
db.exec('PRAGMA cache_size = -65536')
const exec = async (q: Query) => db.prepare(q.sql).all(...(q.params as unknown[])) as Record<string, unknown>[]
const now = Date.now()
const DAY = 86_400_000
const bot = String(db.prepare('SELECT bot FROM messages ORDER BY id DESC LIMIT 1').pluck().get())
const ranges: Record<string, { from?: number; to?: number; bot?: string }> = {
  '30 days': { from: now - 30 * DAY, to: now + 60_000 },
  'all time': {},
  'ending 30 days ago': { to: now - 30 * DAY },
  'one bot, 30 days': { from: now - 30 * DAY, to: now + 60_000, bot },
  'a bot with no message': { bot: 'no-such-bot' },
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

/** The first 50 hits by sorting every match of the range (its words in the text, a phrase's in a row). */
function sorted(r: { from?: number; to?: number; bot?: string }, q: string): string[] {
  const terms = parseSearch(q)
  const rows = db
    .prepare(
      `SELECT id, ts, text FROM messages WHERE text IS NOT NULL AND ts >= ? AND ts < ?${r.bot ? ' AND bot = ?' : ''}`,
    )
    .all(r.from ?? 0, r.to ?? Number.MAX_SAFE_INTEGER, ...(r.bot ? [r.bot] : [])) as Array<{
    id: number
    ts: number
    text: string
  }>
  const words = (t: string) => t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  const holds = (text: string) => {
    const w = words(text)
    return terms.every((t) =>
      w.some((_, i) =>
        t.words.every((x, j) => (t.prefix && j === t.words.length - 1 ? w[i + j]?.startsWith(x) : w[i + j] === x)),
      ),
    )
  }
  return rows
    .filter((m) => holds(m.text))
    .sort((a, b) => b.ts - a.ts || b.id - a.id)
    .slice(0, 50)
    .map((m) => `${m.ts}:${m.id}`)
}

for (const q of ['order', '"speak to" human*', 'zzqx']) {
  for (const [rn, r] of Object.entries(ranges)) {
    const [first, next] = [[] as number[], [] as number[]]
    let ids: string[] = []
    for (let i = 0; i < 5; i++) {
      let a = performance.now()
      const hits = await searchPage(d, exec, { ...r, q, limit: 50 })
      first.push(performance.now() - a)
      ids = hits.map((h) => `${h.ts}:${h.id}`)
      const last = hits.at(-1)
      if (!last) continue
      a = performance.now()
      await searchPage(d, exec, { ...r, q, limit: 50, cursor: `${last.ts}:${last.id}` })
      next.push(performance.now() - a)
    }
    const same = ids.join() === sorted(r, q).join() ? '' : ' (differs from the sort!)'
    console.log(
      `${q} | ${rn} | hits ${ids.length}${same} | first page ${median(first).toFixed(2)} / ${Math.max(...first).toFixed(2)} ms | next page ${next.length ? `${median(next).toFixed(2)} / ${Math.max(...next).toFixed(2)} ms` : '-'}`,
    )
  }
}
