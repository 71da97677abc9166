export { type Access, type AuditDraft, ROUTE_RULES, type RouteRule } from './access/access-rules'
export { type Principal, validateAuth } from './access/auth'
export { type BotInfo, DEMO_BOT } from './access/bot-registry'
export { hashPassword, verifyPassword } from './access/password'
export { type Collector, DEFAULT_PORT, isLoopbackHost, NO_AUTH_HELP, startCollector } from './collector'
export { loadConfigFile, parseCommandLine } from './config'
export { type CollectorErrorCode, RequestError } from './errors'
export { MESSENGER_WEBHOOK_PATH, verifyHubSignature } from './http/messenger-webhook'
export {
  BATCH_HEADER,
  type BatchAnswer,
  type BatchLimits,
  type BatchResult,
  batchAdvertisement,
  DEFAULT_BATCH_LIMITS,
} from './http/track-batch-route'
export { EARLIEST_EVENT_MS, eventTime, FUTURE_SLACK_MS } from './ingest/event-time'
export {
  ANONYMOUS_USER,
  LEGACY_PLATFORMS,
  LEGACY_TYPES,
  type LegacyPlatform,
  type LegacyType,
  type RecordPlatform,
  type StoredRecordType,
} from './ingest/legacy-records'
export type { EventFields, MessageButton, NormalizedMessage } from './ingest/normalize'
export { normalizeRecord } from './ingest/normalize'
export {
  API_VERSIONS,
  PLATFORMS,
  parseTrackQuery,
  RECORD_TYPES,
  type TrackQuery,
  validateRecord,
} from './ingest/validate-record'
export type { HandoffAlert } from './live/alerts'
export { DEFAULT_HANDOFF, type HandoffConfig } from './live/handoff-rules'
export { postWebhook, type WebhookResult } from './live/webhook-client'
export { type LogOption, REDACT_PATHS } from './ops/logging'
export { CollectorMetrics } from './ops/metrics'
export type {
  AlertOptions,
  AuthOptions,
  AuthToken,
  AuthUser,
  BotConfig,
  CollectorOptions,
  HandoffOptions,
  MessengerPageConfig,
  Role,
  WebhookRetryOptions,
} from './options'
export {
  HANDOFF_ACTIONS,
  type OverviewDay,
  type OverviewReport,
  type RetentionCohort,
  type RetentionReport,
  type RetentionZoneState,
} from './reports/analytics-queries'
export { FEEDBACK_EVENT, feedbackScore } from './reports/feedback-score'
export { PERIODS, type Period } from './reports/periods'
export { clusterPhrases, type PhraseCluster } from './reports/phrase-clusters'
export { dayStart, parseInstant, RangeParamError, type ReportRange, rangeOf } from './reports/range'
export type {
  HandoffChange,
  HandoffEntry,
  HandoffFilter,
  HandoffNote,
  HandoffReason,
  HandoffRow,
  HandoffState,
  HandoffStore,
  IdleQuery,
  ResumedConversation,
} from './store/handoff-records'
export { openStore } from './store/open-store'
export { isPostgresUrl, PgRecordStore, type PgStoreOptions } from './store/postgres/pg-store'
export { SqliteRecordStore } from './store/sqlite/sqlite-store'
export type {
  AddResult,
  AuditEntry,
  ConversationSummary,
  ErasureResult,
  EventsReport,
  IncomingRecord,
  IntentLine,
  NotHandledLine,
  PauseState,
  ReadFilter,
  RecordStore,
  Segment,
  StoreChange,
  StoredMessage,
  StoredRecord,
  StoreOptions,
  TimelineBucket,
  TranscriptPage,
  UsageLine,
} from './store/store'
export { StoreUnavailableError } from './store/store-unavailable'
