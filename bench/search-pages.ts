/**
 * Search's first and second page: every match sorted, the newest messages in steps of 2 000 then
 * 200 000 (SEARCH_SCAN_STEPS), and in steps growing ×4 (2 000 … 128 000), alternating in one
 * process, median / max of 5, on a loaded SQLite file opened read-only:
 *   node --import tsx bench/search-pages.ts /var/tmp/s.db
 */
import Database from 'better-sqlite3'
import { sqliteDialect as d, type Query } from '../packages/collector/src/reports/dialect'
import { type SearchPlan, searchPage } from '../packages/collector/src/reports/search-page'
import { SEARCH_FEW_MATCHES, SEARCH_SCAN_STEPS, searchQuery } from '../packages/collector/src/reports/search-query'

const db = new Database(process.argv[2] ?? '/var/tmp/s.db', { readonly: true })
const exec = async (q: Query) => db.prepare(q.sql).all(...(q.params as unknown[])) as Record<string, unknown>[]
const now = Date.now()
const ranges = { '30 days': { from: now - 30 * 86_400_000, to: now + 60_000 }, 'all time': {} }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const plans: Record<string, SearchPlan> = {
  'steps 2 000, 200 000': { steps: SEARCH_SCAN_STEPS, fewMatches: SEARCH_FEW_MATCHES },
  'steps ×4': { steps: [2000, 8000, 32_000, 128_000], fewMatches: SEARCH_FEW_MATCHES },
}
const page = async (r: object, q: string, name: string, cursor?: string) =>
  (name === 'sort'
    ? await exec(searchQuery(d, { ...r, q, limit: 50, cursor }))
    : await searchPage(d, exec, { ...r, q, limit: 50, cursor }, plans[name])
  ).map((x) => `${x.ts}:${x.id}`)
for (const q of ['order', '"speak to" human*', 'zzqx']) {
  for (const [rn, r] of Object.entries(ranges)) {
    const names = ['sort', ...Object.keys(plans)]
    const t = new Map(names.map((n) => [n, [] as number[]]))
    const t2 = new Map(names.map((n) => [n, [] as number[]]))
    const answers = new Map<string, string[]>()
    // Alternating: each round runs every way once, first page then the next (from the first's last hit).
    for (let i = 0; i < 5; i++)
      for (const name of names) {
        let a = performance.now()
        const ans = await page(r, q, name)
        t.get(name)?.push(performance.now() - a)
        answers.set(name, ans)
        const last = ans.at(-1)
        if (!last) continue
        a = performance.now()
        await page(r, q, name, last)
        t2.get(name)?.push(performance.now() - a)
      }
    for (const name of names) {
      const ans = answers.get(name) ?? []
      const [a, b] = [t.get(name) ?? [], t2.get(name) ?? []]
      const same = ans.join() === (answers.get('sort') ?? []).join() ? '' : ' (differs from the sort!)'
      console.log(
        `${q} | ${rn} | ${name} | hits ${ans.length}${same} | median ${median(a).toFixed(1)} / max ${Math.max(...a).toFixed(1)} ms | page 2 median ${b.length ? median(b).toFixed(1) : '-'} ms`,
      )
    }
  }
}
