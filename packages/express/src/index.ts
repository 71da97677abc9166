export type { ReceiverErrorBody, ReceiverErrorCode } from './json-error'
export {
  type OperatorMessage,
  type OperatorMessageReceiverOptions,
  operatorMessageReceiver,
} from './operator-message-receiver'
export { type PauseReceiverOptions, type PauseWebhookBody, pauseReceiver, type WebhookHandler } from './pause-receiver'
export { captureRawBody } from './raw-body'
export { DEFAULT_MAX_BODY_BYTES, type SignedWebhookOptions, type WebhookReplayGuard } from './signed-request'
