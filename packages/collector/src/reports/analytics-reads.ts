/**
 * The analytics methods of a {@link RecordStore}, the same on both databases (like
 * report-reads.ts): each store hands in its dialect, its way of running a statement and its
 * session gap.
 */
import type { RecordStore } from '../store/store'
import { clampLimit } from '../store/store-rows'
import { funnelReport, overviewReport, pathsReport, retentionReport } from './analytics-queries'
import type { Dialect } from './dialect'
import { lastMessageIdQuery } from './message-queries'
import type { Exec } from './report-queries'
import { readyZones } from './retention-zone-demand'
import { searchPage } from './search-page'

/** The analytics reads of a store. */
export type AnalyticsReads = Pick<RecordStore, 'overview' | 'retention' | 'search' | 'paths' | 'funnel'> &
  Required<Pick<RecordStore, 'lastMessageId'>>

/**
 * `execWithin(ms)`: runs a statement with its own bound instead of the store's (PostgreSQL), for
 * a read made off the request path (`budgetMs`); absent, `exec` runs every read.
 */
export function analyticsReads(
  d: Dialect,
  exec: Exec,
  zones: readonly string[],
  execWithin?: (ms: number) => Exec,
): AnalyticsReads {
  const within = (budgetMs: number | undefined): Exec =>
    budgetMs !== undefined && execWithin ? execWithin(budgetMs) : exec
  return {
    // The option's zones and the prepared ones kept on demand (read per request: another collector may have prepared one).
    overview: (filter) => overviewReport(d, within(filter.budgetMs), filter, () => readyZones(d, exec, zones)),
    retention: async (filter) => retentionReport(d, exec, filter, await readyZones(d, exec, zones)),
    paths: (filter) => pathsReport(d, exec, filter),
    funnel: (filter) => funnelReport(d, within(filter.budgetMs), filter),
    lastMessageId: async () => Number((await exec(lastMessageIdQuery(d)))[0]?.id ?? 0),
    search: (filter) => searchPage(d, exec, { ...filter, limit: clampLimit(filter.limit, 50) }),
  }
}
