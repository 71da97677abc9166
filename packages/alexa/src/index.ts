export { type AlexaTracking, type AlexaTrackingOptions, alexaTracking } from './alexa-tracking'
export { DEFAULT_FLUSH_TIMEOUT_MS, type FlushPolicy } from './lambda-flush'
export { createLogForwarder, type ForwardResult, type LogForwarderOptions } from './log-forwarder'
export { LOG_LINE_MARKER, type LogIntegrationOptions, type LogLineRecord } from './log-line'
export type {
  AlexaResponseLike,
  CloudWatchLogsData,
  CloudWatchLogsEvent,
  ErrorHandlerLike,
  ErrorMapperLike,
  HandlerInputLike,
  LambdaCallback,
  LambdaContextLike,
  LambdaFunction,
  SkillBuilderLike,
  SkillConfigurationLike,
  TrackingRequestHandler,
  TrackingRequestInterceptor,
  TrackingResponseInterceptor,
  VoiceTurn,
  WrappedLambdaContext,
} from './types'
