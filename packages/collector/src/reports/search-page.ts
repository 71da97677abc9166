/**
 * One search page, cheap for a common word on both databases and the same answer as sorting
 * every match: first the newest {@link SEARCH_SCAN_ROWS} messages after the cursor are checked
 * one by one (a common word fills its page there); only if the page is not full does the rest
 * of the range come from the full-text index, after the last message checked — the two parts
 * are disjoint and in (ts, id) order, so keyset pages have no gap and no duplicate.
 */
import type { ReadFilter, SearchHit } from '../store/store'
import { searchHit } from '../store/store-rows'
import type { Dialect } from './dialect'
import type { Exec } from './report-queries'
import { SEARCH_SCAN_ROWS, searchCursor, searchQuery, searchScanEndQuery, searchScanQuery } from './search-query'

export async function searchPage(
  d: Dialect,
  exec: Exec,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
  scan = SEARCH_SCAN_ROWS,
): Promise<SearchHit[]> {
  const hits = (await exec(searchScanQuery(d, filter, scan))).map(searchHit)
  if (hits.length >= filter.limit) return hits
  const [end] = await exec(searchScanEndQuery(d, filter, scan))
  // Fewer messages than `scan` after the cursor: every one was checked.
  if (end === undefined) return hits
  const rest = await exec(
    searchQuery(d, {
      ...filter,
      limit: filter.limit - hits.length,
      cursor: searchCursor(Number(end.ts), Number(end.id)),
    }),
  )
  return hits.concat(rest.map(searchHit))
}
