export { MessengerMiddleware, type MessengerMiddlewareOptions } from './botbuilder'
export type {
  BotAccount,
  BotActivity,
  BotResourceResponse,
  BotSendActivitiesHandler,
  BotTurnContext,
  WebhookMiddleware,
  WebhookNext,
  WebhookRequest,
  WebhookResponse,
} from './framework-types'
export { type HookMessage, type MessengerHook, type ReceiveHookOptions, receive, send } from './hooks'
export { type MessengerSend, type MessengerSendBody, type TrackedSendApiOptions, trackedSendApi } from './send-api'
export { type GraphApiError, MessengerSendError } from './send-error'
export { type MessengerWebhookOptions, messengerWebhook } from './webhook'
