import type { AnalyticsReads } from '../reports/analytics-reads'
import type { RetentionZoneState } from '../reports/analytics-types'
import type { ReportReads } from '../reports/report-reads'
import type { RetentionZonePreparer } from './retention-zone-preparer'

/**
 * The reads both stores answer from the summary tables, defined once in `reports/` for both
 * dialects: a store gives its `reports` and `analytics` (bound to its connection) and inherits
 * these methods of `RecordStore`.
 */
export abstract class StoreReads implements ReportReads, AnalyticsReads {
  protected abstract readonly reports: ReportReads
  protected abstract readonly analytics: AnalyticsReads
  /** Keeps retention zones on demand (retention-zone-preparer.ts). */
  protected abstract readonly zonePreparer: RetentionZonePreparer

  /** See {@link RecordStore.retentionZone}. */
  retentionZone(zone: string): Promise<RetentionZoneState> {
    return this.zonePreparer.request(zone)
  }

  /** See {@link RecordStore.retentionZoneReady}. */
  retentionZoneReady(zone: string): Promise<void> {
    return this.zonePreparer.ready(zone)
  }

  conversations(filter: Parameters<ReportReads['conversations']>[0]): ReturnType<ReportReads['conversations']> {
    return this.reports.conversations(filter)
  }

  notHandled(filter: Parameters<ReportReads['notHandled']>[0]): ReturnType<ReportReads['notHandled']> {
    return this.reports.notHandled(filter)
  }

  intents(filter: Parameters<ReportReads['intents']>[0]): ReturnType<ReportReads['intents']> {
    return this.reports.intents(filter)
  }

  events(filter: Parameters<ReportReads['events']>[0]): ReturnType<ReportReads['events']> {
    return this.reports.events(filter)
  }

  segments(filter: Parameters<ReportReads['segments']>[0]): ReturnType<ReportReads['segments']> {
    return this.reports.segments(filter)
  }

  timeline(filter: Parameters<ReportReads['timeline']>[0]): ReturnType<ReportReads['timeline']> {
    return this.reports.timeline(filter)
  }

  usage(filter: Parameters<ReportReads['usage']>[0]): ReturnType<ReportReads['usage']> {
    return this.reports.usage(filter)
  }

  counts(filter: Parameters<ReportReads['counts']>[0] = {}): ReturnType<ReportReads['counts']> {
    return this.reports.counts(filter)
  }

  overview(filter: Parameters<AnalyticsReads['overview']>[0]): ReturnType<AnalyticsReads['overview']> {
    return this.analytics.overview(filter)
  }

  retention(filter: Parameters<AnalyticsReads['retention']>[0]): ReturnType<AnalyticsReads['retention']> {
    return this.analytics.retention(filter)
  }

  funnel(filter: Parameters<AnalyticsReads['funnel']>[0]): ReturnType<AnalyticsReads['funnel']> {
    return this.analytics.funnel(filter)
  }

  /** See {@link RecordStore.lastMessageId}. */
  lastMessageId(): Promise<number> {
    return this.analytics.lastMessageId()
  }

  paths(filter: Parameters<AnalyticsReads['paths']>[0]): ReturnType<AnalyticsReads['paths']> {
    return this.analytics.paths(filter)
  }

  search(filter: Parameters<AnalyticsReads['search']>[0]): ReturnType<AnalyticsReads['search']> {
    return this.analytics.search(filter)
  }
}
