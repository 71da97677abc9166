export { type BotInfo, DEMO_BOT } from './bot-registry'
export { type Collector, DEFAULT_PORT, startCollector } from './collector'
export { loadConfigFile, parseCommandLine } from './config'
export { type CollectorErrorCode, RequestError } from './errors'
export { MESSENGER_WEBHOOK_PATH, verifyHubSignature } from './messenger-webhook'
export type { EventFields, MessageButton, NormalizedMessage } from './normalize'
export { normalizeRecord } from './normalize'
export type { BotConfig, CollectorOptions, MessengerPageConfig, WebhookRetryOptions } from './options'
export { isPostgresUrl, PgRecordStore, type PgStoreOptions } from './pg-store'
export { SqliteRecordStore } from './sqlite-store'
export type {
  AddResult,
  ConversationSummary,
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
