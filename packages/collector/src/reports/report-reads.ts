/**
 * The report methods of a {@link RecordStore}, the same on both databases: each store hands in
 * its dialect and its way of running a statement.
 */
import type {
  ConversationSummary,
  EventsReport,
  IntentLine,
  NotHandledLine,
  ReadFilter,
  RecordStore,
  Segment,
  TimelineBucket,
  UsageLine,
} from '../store/store'
import { clampLimit } from '../store/store-rows'
import type { Dialect } from './dialect'
import {
  conversationsReport,
  countsReport,
  type Exec,
  eventsReportOf,
  intentsReport,
  notHandledReport,
  segmentsReport,
  timelineReport,
} from './report-queries'
import { usageReport } from './usage-rollup'

/** The reads of a store that answer from the summary tables. */
export type ReportReads = Pick<
  RecordStore,
  'conversations' | 'notHandled' | 'intents' | 'events' | 'segments' | 'timeline' | 'counts' | 'usage'
>

export function reportReads(d: Dialect, exec: Exec): ReportReads {
  return {
    conversations: (filter: ReadFilter & { limit?: number; cursor?: string }): Promise<ConversationSummary[]> =>
      conversationsReport(d, exec, { ...filter, limit: clampLimit(filter.limit, 200) }),
    notHandled: (filter: ReadFilter & { limit?: number }): Promise<NotHandledLine[]> =>
      notHandledReport(d, exec, filter, clampLimit(filter.limit, 500)),
    intents: (filter: ReadFilter): Promise<IntentLine[]> => intentsReport(d, exec, filter),
    events: (filter: ReadFilter): Promise<EventsReport> => eventsReportOf(d, exec, filter),
    segments: (filter: ReadFilter): Promise<Segment[]> => segmentsReport(d, exec, filter),
    timeline: (filter: ReadFilter & { bucketMs: number; since?: number }): Promise<TimelineBucket[]> =>
      timelineReport(d, exec, filter),
    counts: (filter: ReadFilter = {}) => countsReport(d, exec, filter),
    usage: (filter: ReadFilter & { since?: number }): Promise<UsageLine[]> => usageReport(d, exec, filter),
  }
}
