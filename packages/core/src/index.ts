export { blankCredentials, isCredentialKey } from './credentials'
export {
  ConfigError,
  ConvotrackError,
  DroppedRecordError,
  type DropReason,
  InvalidRecordError,
  RefusedRecordError,
  SignatureError,
  TrackerClosedError,
  TransportError,
} from './errors'
export { DEFAULT_EXIT_FLUSH_MS } from './exit-flush'
export { FEEDBACK_EVENT, type Feedback, type FeedbackScale, feedbackEvent } from './feedback'
export type { HeldLog, HeldTurn } from './held-records'
export { toPlainJson, toWireJson } from './json'
export { inLambda, LAMBDA_SAFETY_MARGIN_MS, lambdaFlushBudget, remainingLambdaMs } from './lambda-budget'
export {
  DEFAULT_LAMBDA_FLUSH_MS,
  flushForLambda,
  type LambdaFlushOptions,
  type LambdaFlushWhen,
  withLambdaFlush,
} from './lambda-flush'
export { maskApiKey } from './loss-report'
export { MemoryPauseStore, type MemoryPauseStoreOptions } from './pause/memory-store'
export { type PauseStore, pauseKey } from './pause/store'
export { alexaUserId, SERVICE_USER_ATTRIBUTE, serializeAlexaIncoming, serializeAlexaOutgoing } from './platforms/alexa'
export { NOT_HANDLED, type SerializeContext, type WireRecord } from './platforms/context'
export { EVENT_TYPES, serializeEvent } from './platforms/events'
export { serializeKik } from './platforms/kik'
export {
  isMessengerUserEvent,
  MESSENGER_SEND_URI,
  serializeMessengerIncoming,
  serializeMessengerOutgoing,
} from './platforms/messenger'
export { serializeSlack } from './platforms/slack'
export { serializeTwitterIncoming, serializeTwitterOutgoing } from './platforms/twitter'
export { serializeUniversal, validateUniversal } from './platforms/universal'
export { backoffDelay, DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, type RetryOptions } from './retry'
export { createTracker } from './tracker'
export {
  type CallOptions,
  DEFAULT_BASE_URL,
  type EventOptions,
  type FlushResult,
  type HookedRecord,
  type RecordHandle,
  type RecordHook,
  type RecordInfo,
  type RecordOutcome,
  type RecordTransport,
  type SerializedRecord,
  type Tracker,
  type TrackerEvents,
  type TrackerOptions,
  type TrackerStats,
  type UniversalChannel,
  VERSION,
} from './tracker-types'
export type { RecordMeta, TransportStats } from './transport-types'
export type { TurnState } from './turn-scope'
export type * from './types'
export { API_VERSIONS, PLATFORMS, RECORD_TYPES } from './types'
export { isObject, validateIntent } from './validate'
export {
  DEFAULT_TOLERANCE_SECONDS,
  generateWebhookSecret,
  ReplayGuard,
  type SignOptions,
  signPauseWebhook,
  type VerifiedWebhook,
  type VerifyOptions,
  verifyPauseWebhook,
  WEBHOOK_HEADERS,
} from './webhook-signature'
export {
  InvalidWireRecordError,
  isPlatform,
  isRecordType,
  isSpecVersion,
  isVersionForm,
  validateWireRecord,
  valueAt,
  type WireViolation,
} from './wire-record'
