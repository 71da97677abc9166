export { type Access, type AuditDraft, ROUTE_RULES, type RouteRule } from './access-rules'
export { type Principal, validateAuth } from './auth'
export { type BotInfo, DEMO_BOT } from './bot-registry'
export { type Collector, DEFAULT_PORT, isLoopbackHost, NO_AUTH_HELP, startCollector } from './collector'
export { loadConfigFile, parseCommandLine } from './config'
export { type CollectorErrorCode, RequestError } from './errors'
export {
  LEGACY_PLATFORMS,
  LEGACY_TYPES,
  type LegacyPlatform,
  type LegacyType,
  type RecordPlatform,
  type StoredRecordType,
} from './legacy-records'
export { type LogOption, REDACT_PATHS } from './logging'
export { MESSENGER_WEBHOOK_PATH, verifyHubSignature } from './messenger-webhook'
export { CollectorMetrics } from './metrics'
export type { EventFields, MessageButton, NormalizedMessage } from './normalize'
export { normalizeRecord } from './normalize'
export type {
  AuthOptions,
  AuthToken,
  AuthUser,
  BotConfig,
  CollectorOptions,
  MessengerPageConfig,
  Role,
  WebhookRetryOptions,
} from './options'
export { hashPassword, verifyPassword } from './password'
export { isPostgresUrl, PgRecordStore, type PgStoreOptions } from './pg-store'
export { SqliteRecordStore } from './sqlite-store'
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
  TimelineBucket,
  TranscriptPage,
} from './store'
export { StoreUnavailableError } from './store-unavailable'
export {
  BATCH_HEADER,
  type BatchAnswer,
  type BatchLimits,
  type BatchResult,
  batchAdvertisement,
  DEFAULT_BATCH_LIMITS,
} from './track-batch-route'
export {
  API_VERSIONS,
  PLATFORMS,
  parseTrackQuery,
  RECORD_TYPES,
  type TrackQuery,
  validateRecord,
} from './validate-record'
export { postWebhook, type WebhookResult } from './webhook-client'
