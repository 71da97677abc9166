/**
 * One search page, cheap for a common word on both databases and the same answer as sorting
 * every match.
 *
 * SQLite: one statement, its full-text index read in time order ({@link sqliteSearchQuery}).
 *
 * PostgreSQL (its full-text index has no order but its own): the newest messages after the cursor
 * are checked in growing steps ({@link SEARCH_SCAN_STEPS}; a common word fills its page there),
 * except that after the first step a query with few matches (under {@link SEARCH_FEW_MATCHES}
 * in the whole index) sorts the rest of them; only if the page is still not full does the rest
 * of the range come from the full-text index, sorted, after the last message checked. The parts
 * are disjoint and in (ts, id) order, so keyset pages have no gap and no duplicate. It counts the
 * matches only when its statistics do not already say a word of the query is common (the count
 * rechecks each match in its row), and reads a rest whose matches it counted few through the
 * full-text index alone (see `searchQuery`'s `few`).
 */
import type { ReadFilter, SearchHit } from '../store/store'
import { searchHit } from '../store/store-rows'
import type { Dialect } from './dialect'
import type { Exec } from './report-queries'
import {
  planRows,
  SEARCH_FEW_MATCHES,
  SEARCH_SCAN_STEPS,
  type SearchSpan,
  searchCursor,
  searchEstimateQueries,
  searchMatchCountQuery,
  searchQuery,
  searchScanQuery,
  searchScanSpanQuery,
  sqliteSearchQuery,
} from './search-query'

/** PostgreSQL's cost model of a search (exported for tests: small steps make a small store take every path). */
export interface SearchPlan {
  steps: readonly number[]
  fewMatches: number
}

export async function searchPage(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
  plan: SearchPlan = { steps: SEARCH_SCAN_STEPS, fewMatches: SEARCH_FEW_MATCHES },
): Promise<SearchHit[]> {
  if (d.name === 'sqlite') return (await exec(sqliteSearchQuery(filter))).map(searchHit)
  const hits: SearchHit[] = []
  let cursor = filter.cursor
  const countFew = async () =>
    Number((await exec(searchMatchCountQuery(d, filter.q, plan.fewMatches)))[0]?.n ?? 0) < plan.fewMatches
  // PostgreSQL counts only where its statistics say the words are rare: the count rechecks each
  // match in its table row (the index keeps no word positions for phrases), and 20 000 of them
  // scattered over years of history were a second of disk reads.
  const statisticsSayMany = async () => {
    let least = Number.POSITIVE_INFINITY
    for (const q of searchEstimateQueries(d, filter.q)) least = Math.min(least, planRows(await exec(q)) ?? least)
    // No estimate read: count.
    return Number.isFinite(least) && least >= plan.fewMatches
  }
  /** The matches are known to be few (true), many (false), or not counted (undefined). */
  let few: boolean | undefined
  for (const [i, scan] of plan.steps.entries()) {
    // The first step before the count: a word among the newest messages fills its page there
    // (the count alone read tens of thousands of rows on PostgreSQL for a common word).
    if (i === 1) {
      few = (await statisticsSayMany()) ? undefined : await countFew()
      if (few) break
    }
    const page = { ...filter, limit: filter.limit - hits.length, cursor }
    const found = await exec(searchScanQuery(d, page, scan))
    hits.push(...found.map(searchHit))
    if (hits.length >= filter.limit) return hits
    // Where the step ended: read only when the page is not full after it.
    const span = spanOf((await exec(searchScanSpanQuery(d, page, scan)))[0])
    // Fewer messages than `scan` were left after the cursor: all checked.
    if (span.n < scan || span.ts === undefined || span.id === undefined) return hits
    cursor = searchCursor(span.ts, span.id)
  }
  // The rest is read through the full-text index when its matches are few: counted now if the
  // steps did not (the planner, left to itself, may walk the range testing every message).
  if (few === undefined) few = await countFew()
  const rest = await exec(searchQuery(d, { ...filter, limit: filter.limit - hits.length, cursor }, few === true))
  return hits.concat(rest.map(searchHit))
}

/** A span statement's row as numbers (`ts`/`id` absent when the step ran out of messages). */
function spanOf(row: Record<string, unknown> | undefined): SearchSpan {
  const num = (v: unknown) => (v === null || v === undefined ? undefined : Number(v))
  return {
    n: Number(row?.n ?? 0),
    lo: Number(row?.lo ?? 0),
    hi: Number(row?.hi ?? 0),
    ts: num(row?.ts),
    id: num(row?.id),
  }
}
