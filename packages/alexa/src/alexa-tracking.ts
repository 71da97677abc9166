import {
  type AlexaRequestEnvelope,
  type AlexaResponseEnvelope,
  alexaUserId,
  type Intent,
  InvalidRecordError,
  type JsonObject,
  LAMBDA_SAFETY_MARGIN_MS,
  remainingLambdaMs,
  type Tracker,
  validateIntent,
} from '@convotrack/core'
import { currentTurn, holdTurn, reportError, useSink } from '@convotrack/core/adapter'
import { watchBuiltResponses } from './built-responses'
import { DEFAULT_FLUSH_TIMEOUT_MS, type FlushPolicy, flushBeforeAnswer } from './lambda-flush'
import { invokeLambdaFunction } from './lambda-invoke'
import { checkLogGroupName, formatLogLine, type LogIntegrationOptions } from './log-line'
import { newRequestState, type RequestState, RequestStates } from './request-state'
import { trackingErrorMapper } from './skill-builder'
import type {
  AlexaResponseLike,
  HandlerInputLike,
  LambdaContextLike,
  LambdaFunction,
  SkillBuilderLike,
  SkillConfigurationLike,
  TrackingRequestHandler,
  TrackingRequestInterceptor,
  TrackingResponseInterceptor,
} from './types'

/** Options of {@link alexaTracking}. */
export interface AlexaTrackingOptions {
  /**
   * Wait for delivery before the skill's answer is returned: `'lambda'` (default) when running
   * in AWS Lambda (a context with `getRemainingTimeInMillis`, or `AWS_LAMBDA_FUNCTION_NAME`
   * set), `true` always, `false` never (records go out in the background).
   */
  flush?: FlushPolicy
  /** Most ms an answer waits for delivery; also kept inside the Lambda's remaining time (core's `lambdaFlushBudget`). Default 800. */
  flushTimeoutMs?: number
}

/** Voice-skill tracking for one tracker: what {@link alexaTracking} returns. */
export interface AlexaTracking {
  /**
   * ask-sdk request interceptor: opens the request's tracking state and holds its incoming
   * record with the tracker until the request is answered. With the response interceptor it
   * also tracks a throwing handler: the incoming record always, and the error handler's answer
   * when it builds it through `handlerInput.responseBuilder.getResponse()`. No I/O.
   */
  readonly requestInterceptor: TrackingRequestInterceptor
  /**
   * ask-sdk response interceptor: tracks the incoming and the outgoing record of the request,
   * then (in Lambda) waits for delivery at most `flushTimeoutMs`. Never throws.
   */
  readonly responseInterceptor: TrackingResponseInterceptor
  /**
   * An ask-sdk request handler to add first: while an operator has paused the user
   * (`tracker.pauses`, key `session.user.userId`), it answers with an empty response instead
   * of the skill; the request is still tracked.
   */
  readonly pauseHandler: TrackingRequestHandler
  /**
   * Adds both interceptors to a skill builder (request interceptor first, response interceptor
   * last) and tracks requests whose handler throws: the incoming record, and the error
   * handler's answer as the outgoing record. Returns the same builder.
   */
  instrument<B extends SkillBuilderLike>(builder: B): B
  /**
   * Wraps a Lambda handler (async, callback or `context.succeed`/`fail` style): tracks the
   * request and the answer, and waits for delivery (at most `flushTimeoutMs`) before answering.
   */
  handler<E, R>(fn: LambdaFunction<E, R>): (event: E, context?: LambdaContextLike) => Promise<R>
  /** Attaches an intent to this request's outgoing record (inside `response`). Pass the handler input (or, inside `handler(fn)`, the event). */
  setOutgoingIntent(handlerInput: HandlerInputLike | object, intent: Intent): void
  /** Marks this request's incoming record NotHandled. */
  setNotHandled(handlerInput: HandlerInputLike | object): void
  /** User metadata for this request's records, sent as session attribute `serviceUser`. Merged over earlier calls. */
  setUserMetadata(handlerInput: HandlerInputLike | object, metadata: JsonObject): void
  /**
   * Writes every record of the tracker as one log line on stdout instead of posting it (no
   * network, no added latency); {@link createLogForwarder} delivers the lines from the log group.
   */
  logIntegration(options: LogIntegrationOptions): void
}

/**
 * Outside Lambda, the longest a request's incoming record waits for its answer before it is
 * tracked anyway (Alexa itself gives up on a skill after 8 s).
 */
const HELD_REQUEST_MS = 10_000

function isAlexaEvent(event: unknown): event is AlexaRequestEnvelope {
  const e = event as { version?: unknown; request?: { type?: unknown } } | null
  return typeof e === 'object' && e !== null && typeof e.version === 'string' && typeof e.request?.type === 'string'
}

function isHandlerInput(value: unknown): value is HandlerInputLike {
  const am = (value as HandlerInputLike | null)?.attributesManager
  return (
    typeof am?.getRequestAttributes === 'function' && typeof (value as HandlerInputLike).requestEnvelope === 'object'
  )
}

/** The response envelope ask-sdk will send, built the way `CustomSkill.invoke` builds it. */
function responseEnvelope(input: HandlerInputLike, response: AlexaResponseLike | undefined): AlexaResponseEnvelope {
  const envelope: AlexaResponseEnvelope = {
    version: '1.0',
    response: (response ?? {}) as AlexaResponseEnvelope['response'],
  }
  if ((input.requestEnvelope as { session?: unknown }).session) {
    const attributes = input.attributesManager.getSessionAttributes()
    if (attributes) envelope.sessionAttributes = attributes
  }
  return envelope
}

/**
 * Tracks an Alexa skill: ask-sdk-core interceptors, a Lambda handler wrapper, per-request
 * intent / NotHandled / user metadata, and the log-group integration.
 *
 * @example
 * const voice = alexaTracking(createTracker({ apiKey: process.env.CONVOTRACK_API_KEY }))
 */
export function alexaTracking(tracker: Tracker, options: AlexaTrackingOptions = {}): AlexaTracking {
  const policy = options.flush ?? 'lambda'
  const timeoutMs = options.flushTimeoutMs ?? DEFAULT_FLUSH_TIMEOUT_MS
  const states = new RequestStates()

  const userMetadataOf = (state: RequestState): JsonObject | undefined => {
    const turn = currentTurn(tracker)?.userMetadata
    return turn && state.userMetadata ? { ...turn, ...state.userMetadata } : state.userMetadata
  }

  /** Tracks the incoming record of a request, once. Never throws. */
  const trackIncoming = (state: RequestState): void => {
    if (state.incomingTracked) return
    state.incomingTracked = true
    clearTimeout(state.deadline)
    state.deadline = undefined
    if (!isAlexaEvent(state.event)) return
    try {
      tracker.alexa.logIncoming(state.event, state.context ?? undefined, {
        notHandled: state.notHandled || undefined,
        userMetadata: userMetadataOf(state),
      })
    } catch (error) {
      reportError(tracker, error)
    }
  }

  /** Tracks what is still untracked of a request: the incoming record, then the answer. Never throws. */
  const trackRequest = (state: RequestState, answer: AlexaResponseEnvelope | undefined): void => {
    if (answer !== undefined) state.answered = true
    // The held incoming record goes out through the tracker's buffer (flush() was waiting for it).
    if (state.held && !state.held.ended) state.held.end()
    else trackIncoming(state)
    // Not a skill request (a warm-up ping, a scheduled event): nothing more to track.
    if (!isAlexaEvent(state.event)) {
      state.outgoingTracked = true
      return
    }
    const userMetadata = userMetadataOf(state)
    if (answer === undefined || state.outgoingTracked || state.paused) return
    state.outgoingTracked = true
    try {
      tracker.alexa.logOutgoing(state.event, answer, { intent: state.intent, userMetadata })
    } catch (error) {
      reportError(tracker, error)
    }
  }

  /** In Lambda, waits for delivery, unless `handler(fn)` runs the request and will do it once. */
  const flushFor = (state: RequestState | undefined): Promise<void> =>
    state?.wrapped ? Promise.resolve() : flushBeforeAnswer(tracker, policy, timeoutMs, state?.context)

  /**
   * Holds the request's incoming record with the tracker, watches the answers the skill builds,
   * and sets the request's deadline: in Lambda, in time to send the incoming record before the
   * invocation times out; elsewhere {@link HELD_REQUEST_MS}.
   */
  const open = (state: RequestState, input: HandlerInputLike | undefined): void => {
    if (input)
      // ask-sdk skips response interceptors when a handler throws: if none saw the answer by the
      // next turn of the event loop, the request is tracked with the last answer it built.
      watchBuiltResponses(
        input,
        (response) => {
          state.built = response
        },
        () => {
          if (state.answered || state.outgoingTracked) return
          try {
            trackRequest(state, responseEnvelope(input, state.built))
          } catch (error) {
            reportError(tracker, error)
          }
          void flushFor(state)
        },
      )
    if (state.held || state.incomingTracked) return
    state.held = holdTurn(tracker)
    state.held.hold(() => trackIncoming(state))
    const remaining = remainingLambdaMs(state.context)
    const delay =
      remaining === undefined ? HELD_REQUEST_MS : Math.max(0, remaining - LAMBDA_SAFETY_MARGIN_MS - timeoutMs)
    state.deadline = setTimeout(() => {
      state.deadline = undefined
      trackRequest(state, undefined)
      void flushBeforeAnswer(tracker, policy, timeoutMs, state.context)
    }, delay)
    // In Lambda it must fire while the invocation runs; elsewhere it never keeps a process up.
    if (remaining === undefined) state.deadline.unref()
  }

  const stateOf = (input: HandlerInputLike): RequestState | undefined => {
    try {
      return states.of(input)
    } catch (error) {
      reportError(tracker, error)
      return undefined
    }
  }

  const requestInterceptor: TrackingRequestInterceptor = {
    async process(input) {
      const state = stateOf(input)
      if (!state) return
      try {
        open(state, input)
      } catch (error) {
        reportError(tracker, error)
      }
    },
  }

  const responseInterceptor: TrackingResponseInterceptor = {
    async process(input, response) {
      const state = stateOf(input)
      if (!state) return
      state.answered = true
      try {
        trackRequest(state, responseEnvelope(input, response))
      } catch (error) {
        reportError(tracker, error)
      }
      await flushFor(state)
    },
  }

  const pauseHandler: TrackingRequestHandler = {
    async canHandle(input) {
      const state = stateOf(input)
      const userId = alexaUserId(input.requestEnvelope as AlexaRequestEnvelope)
      if (!state || !userId) return false
      state.paused = await tracker.isPaused(userId)
      return state.paused
    },
    handle(input) {
      return input.responseBuilder.getResponse()
    },
  }

  /** The request state a setter writes to, or a reported error. */
  const stateForCall = (target: unknown, call: string): RequestState | undefined => {
    if (isHandlerInput(target)) return stateOf(target)
    const wrapped = states.current()
    if (wrapped) return wrapped
    reportError(
      tracker,
      new InvalidRecordError(
        'handlerInput',
        'must be the ask-sdk handler input of the request being handled (or the event, inside voice.handler(fn))',
        call,
      ),
    )
    return undefined
  }

  return {
    requestInterceptor,
    responseInterceptor,
    pauseHandler,

    instrument(builder) {
      const original = builder.getSkillConfiguration.bind(builder)
      ;(builder as SkillBuilderLike).getSkillConfiguration = () => {
        const config = original() as SkillConfigurationLike
        const request = (config.requestInterceptors ?? []).filter((i) => i !== requestInterceptor)
        const response = (config.responseInterceptors ?? []).filter((i) => i !== responseInterceptor)
        return {
          ...config,
          requestInterceptors: [requestInterceptor, ...request],
          responseInterceptors: [...response, responseInterceptor],
          errorMapper: trackingErrorMapper(config.errorMapper, {
            stateOf,
            track: (state, input, response) =>
              trackRequest(state, response === undefined ? undefined : responseEnvelope(input, response)),
            flush: flushFor,
          }),
        }
      }
      return builder
    },

    handler<E, R>(fn: LambdaFunction<E, R>) {
      return (event: E, context?: LambdaContextLike): Promise<R> =>
        tracker.withTurn(async () => {
          const state = newRequestState(event, context, true)
          try {
            open(state, undefined)
          } catch (error) {
            reportError(tracker, error)
          }
          let result: R | undefined
          let failure: unknown
          let failed = false
          try {
            result = await states.runWrapped(state, () => invokeLambdaFunction(fn, event, context))
          } catch (error) {
            failed = true
            failure = error
          }
          try {
            const answer =
              !failed && result !== null && typeof result === 'object'
                ? (result as unknown as AlexaResponseEnvelope)
                : undefined
            trackRequest(state, answer)
          } catch (error) {
            reportError(tracker, error)
          }
          await flushBeforeAnswer(tracker, policy, timeoutMs, context)
          if (failed) throw failure
          return result as R
        })
    },

    setOutgoingIntent(handlerInput, intent) {
      const state = stateForCall(handlerInput, 'setOutgoingIntent')
      if (!state) return
      try {
        state.intent = structuredClone(validateIntent(intent, 'intent', 'setOutgoingIntent'))
      } catch (error) {
        reportError(tracker, error)
      }
    },

    setNotHandled(handlerInput) {
      const state = stateForCall(handlerInput, 'setNotHandled')
      if (state) state.notHandled = true
    },

    setUserMetadata(handlerInput, metadata) {
      const state = stateForCall(handlerInput, 'setUserMetadata')
      if (!state) return
      if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
        reportError(tracker, new InvalidRecordError('metadata', 'must be an object of user fields', 'setUserMetadata'))
        return
      }
      try {
        state.userMetadata = { ...state.userMetadata, ...structuredClone(metadata) }
      } catch (error) {
        reportError(tracker, error)
      }
    },

    logIntegration(logOptions) {
      const logGroup = checkLogGroupName(logOptions)
      const write = logOptions.write ?? ((line: string) => void process.stdout.write(`${line}\n`))
      useSink(tracker, {
        send(record) {
          try {
            write(formatLogLine(record, logGroup))
          } catch (error) {
            reportError(tracker, error, { platform: record.platform, type: record.type, userId: record.userId })
          }
        },
      })
    },
  }
}
