/**
 * Search's first and second page before (every match sorted) and after (the newest messages in
 * steps), median / max of 5, on a loaded SQLite file opened read-only:
 *   node --import tsx bench/search-pages.ts /var/tmp/s.db
 */
import Database from 'better-sqlite3'
import { sqliteDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { searchPage } from '../packages/collector/src/reports/search-page'
import { searchQuery } from '../packages/collector/src/reports/search-query'

const db = new Database(process.argv[2] ?? '/var/tmp/s.db', { readonly: true })
const exec = async (q: Query) => db.prepare(q.sql).all(...(q.params as unknown[])) as Record<string, unknown>[]
const now = Date.now()
const ranges = { '30 days': { from: now - 30 * 86_400_000, to: now + 60_000 }, 'all time': {} }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
for (const q of ['order', '"speak to" human*', 'zzqx']) {
  for (const [rn, r] of Object.entries(ranges)) {
    for (const [name, run] of [
      ['before', async () => (await exec(searchQuery(d, { ...r, q, limit: 50 }))).map((x) => `${x.ts}:${x.id}`)],
      ['after', async () => (await searchPage(d, exec, { ...r, q, limit: 50 })).map((x) => `${x.ts}:${x.id}`)],
    ] as const) {
      const t: number[] = []
      let ans: string[] = []
      for (let i = 0; i < 5; i++) {
        const a = performance.now()
        ans = await run()
        t.push(performance.now() - a)
      }
      // The next page too (from the last hit), to show `next` is as cheap.
      const last = ans.at(-1)
      const t2: number[] = []
      if (last)
        for (let i = 0; i < 5; i++) {
          const a = performance.now()
          if (name === 'before') await exec(searchQuery(d, { ...r, q, limit: 50, cursor: last }))
          else await searchPage(d, exec, { ...r, q, limit: 50, cursor: last })
          t2.push(performance.now() - a)
        }
      console.log(
        `${q} | ${rn} | ${name} | hits ${ans.length} | median ${median(t).toFixed(1)} / max ${Math.max(...t).toFixed(1)} ms | page 2 median ${t2.length ? median(t2).toFixed(1) : '-'} ms | first ${ans[0]} last ${last}`,
      )
    }
  }
}
