/**
 * Structural types for what this package touches of ask-sdk-core and of the Lambda runtime,
 * so the published types do not depend on either being installed (ask-sdk-core is an
 * optional peer: `handler(fn)` works without it). ask-sdk's own objects fit these shapes.
 */
import type { Intent, JsonObject } from '@convotrack/core'

/** The part of ask-sdk's `HandlerInput` this package uses. */
export interface HandlerInputLike {
  /** The Alexa request envelope being handled. */
  requestEnvelope: object
  /** What was passed as the second argument of `skill.invoke` (the Lambda context under `.lambda()`). */
  context?: unknown
  attributesManager: {
    getRequestAttributes(): Record<string, unknown>
    getSessionAttributes(): Record<string, unknown> | undefined
  }
}

/** An ask-sdk `Response` (`outputSpeech`, `reprompt`, `card`, `shouldEndSession`, directives…). */
export type AlexaResponseLike = object

/** An ask-sdk request interceptor. */
export interface TrackingRequestInterceptor {
  process(handlerInput: HandlerInputLike): Promise<void>
}

/** An ask-sdk response interceptor. */
export interface TrackingResponseInterceptor {
  process(handlerInput: HandlerInputLike, response?: AlexaResponseLike): Promise<void>
}

/** An ask-sdk request handler. */
export interface TrackingRequestHandler {
  canHandle(handlerInput: HandlerInputLike): Promise<boolean>
  handle(handlerInput: HandlerInputLike & { responseBuilder: { getResponse(): object } }): object
}

/** The part of ask-sdk's error mapper (`getSkillConfiguration().errorMapper`) this package wraps. */
export interface ErrorMapperLike {
  getErrorHandler(
    handlerInput: HandlerInputLike,
    error: Error,
  ): Promise<ErrorHandlerLike | null> | ErrorHandlerLike | null
}

/** An ask-sdk error handler. */
export interface ErrorHandlerLike {
  canHandle(handlerInput: HandlerInputLike, error: Error): Promise<boolean> | boolean
  handle(handlerInput: HandlerInputLike, error: Error): Promise<AlexaResponseLike> | AlexaResponseLike
}

/** The parts of a skill configuration {@link AlexaTracking.instrument} rewrites. */
export interface SkillConfigurationLike {
  requestInterceptors?: unknown[]
  responseInterceptors?: unknown[]
  errorMapper?: ErrorMapperLike | undefined
}

/** An ask-sdk skill builder (`Alexa.SkillBuilders.custom()`). */
export interface SkillBuilderLike {
  getSkillConfiguration(): object
}

/** The Lambda context, as far as this package looks at it. */
export interface LambdaContextLike {
  getRemainingTimeInMillis?(): number
  succeed?(result?: unknown): void
  fail?(error?: unknown): void
  done?(error?: unknown, result?: unknown): void
  [key: string]: unknown
}

/** The context a wrapped handler receives: the Lambda context whose `succeed` / `fail` / `done` answer through the wrapper. */
export interface WrappedLambdaContext extends LambdaContextLike {
  succeed(result?: unknown): void
  fail(error?: unknown): void
  done(error?: unknown, result?: unknown): void
}

/** Node-style Lambda callback. */
export type LambdaCallback<R> = (error?: unknown, result?: R) => void

/**
 * A Lambda function handler in any of its styles: `async (event, context) => response`,
 * `(event, context, callback) => void`, or the legacy `context.succeed(response)`.
 */
export type LambdaFunction<E, R> = (
  event: E,
  context: WrappedLambdaContext,
  callback: LambdaCallback<R>,
) => Promise<R> | R | undefined

/** What `setOutgoingIntent`, `setNotHandled` and `setUserMetadata` record for one request. */
export interface VoiceTurn {
  notHandled: boolean
  intent: Intent | undefined
  userMetadata: JsonObject | undefined
}

/** A CloudWatch Logs subscription event, as Lambda receives it. */
export interface CloudWatchLogsEvent {
  awslogs: {
    /** base64 of the gzip of {@link CloudWatchLogsData} as JSON. */
    data: string
  }
}

/** The decoded `awslogs.data` payload. */
export interface CloudWatchLogsData {
  messageType: 'DATA_MESSAGE' | 'CONTROL_MESSAGE'
  owner: string
  logGroup: string
  logStream: string
  subscriptionFilters: string[]
  logEvents: Array<{ id: string; timestamp: number; message: string }>
}
