export { type BotInfo, DEMO_BOT } from './bot-registry'
export { type Collector, DEFAULT_PORT, startCollector } from './collector'
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
export { MESSENGER_WEBHOOK_PATH, verifyHubSignature } from './messenger-webhook'
export type { EventFields, MessageButton, NormalizedMessage } from './normalize'
export { normalizeRecord } from './normalize'
export type { BotConfig, CollectorOptions, MessengerPageConfig, WebhookRetryOptions } from './options'
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
  StoredMessage,
  StoredRecord,
  TimelineBucket,
  TranscriptPage,
} from './store'
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
