/**
 * Request envelopes as Alexa sends them, a real ask-sdk-core skill, and a Lambda context
 * shaped like the Node runtime's (functions, a circular field, a secret-free identity).
 */
import type { AlexaTracking } from '@convotrack/alexa'
import type { CustomSkillBuilder, ErrorHandler, HandlerInput, RequestHandler } from 'ask-sdk-core'
import { getIntentName, getRequestType, getSlotValue, SkillBuilders } from 'ask-sdk-core'
import type { RequestEnvelope } from 'ask-sdk-model'

export const SKILL_ID = 'amzn1.ask.skill.0000-space-facts'
export const USER = 'amzn1.ask.account.USER-ONE'

let seq = 0

interface EnvelopeOptions {
  userId?: string
  sessionId?: string
  attributes?: Record<string, unknown>
  isNew?: boolean
}

function base(request: Record<string, unknown>, o: EnvelopeOptions = {}): RequestEnvelope {
  const userId = o.userId ?? USER
  seq++
  return {
    version: '1.0',
    session: {
      new: o.isNew ?? true,
      sessionId: o.sessionId ?? `amzn1.echo-api.session.S${seq}`,
      application: { applicationId: SKILL_ID },
      attributes: o.attributes ?? {},
      user: { userId },
    },
    context: {
      System: {
        application: { applicationId: SKILL_ID },
        user: { userId },
        device: { deviceId: 'amzn1.ask.device.KITCHEN', supportedInterfaces: {} },
        apiEndpoint: 'https://api.amazonalexa.com',
        apiAccessToken: 'SECRET-API-ACCESS-TOKEN',
      },
    },
    request: {
      requestId: `amzn1.echo-api.request.R${seq}`,
      timestamp: '2024-05-01T10:00:00Z',
      locale: 'en-US',
      ...request,
    },
  } as unknown as RequestEnvelope
}

export const launchRequest = (o?: EnvelopeOptions) => base({ type: 'LaunchRequest' }, o)

export const intentRequest = (name: string, slots: Record<string, string> = {}, o?: EnvelopeOptions) =>
  base(
    {
      type: 'IntentRequest',
      dialogState: 'COMPLETED',
      intent: {
        name,
        confirmationStatus: 'NONE',
        slots: Object.fromEntries(
          Object.entries(slots).map(([k, v]) => [k, { name: k, value: v, confirmationStatus: 'NONE' }]),
        ),
      },
    },
    { isNew: false, ...o },
  )

export const sessionEndedRequest = (o?: EnvelopeOptions) =>
  base({ type: 'SessionEndedRequest', reason: 'USER_INITIATED' }, { isNew: false, ...o })

/** A session-less request (AudioPlayer): the user is only in `context.System.user`. */
export function audioPlayerRequest(userId = USER): RequestEnvelope {
  const e = base(
    { type: 'AudioPlayer.PlaybackStarted', token: 'track-1', offsetInMilliseconds: 0 },
    { userId },
  ) as unknown as Record<string, unknown>
  delete e.session
  return e as unknown as RequestEnvelope
}

/**
 * A Lambda context like the Node runtime's: data, functions, and a circular field. Its remaining
 * time stands still at `remainingMs`, so the deadlines a skill derives from it are exact whatever
 * the machine's speed.
 */
export function lambdaContext(remainingMs = 7_000): Record<string, unknown> & { getRemainingTimeInMillis(): number } {
  const ctx: Record<string, unknown> & { getRemainingTimeInMillis(): number } = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'space-facts',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:space-facts',
    memoryLimitInMB: '128',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
    logGroupName: '/aws/lambda/space-facts',
    logStreamName: '2024/05/01/[$LATEST]abcdef',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => {},
    succeed: () => {},
    fail: () => {},
  }
  ctx.self = ctx
  return ctx
}

/** The Lambda context as it must appear on the wire: functions and the circular field gone. */
export const lambdaContextOnWire = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'space-facts',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:space-facts',
  memoryLimitInMB: '128',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  logGroupName: '/aws/lambda/space-facts',
  logStreamName: '2024/05/01/[$LATEST]abcdef',
}

/** The event as the wire carries it: Alexa's API token blanked (core's default). */
export function onWire(envelope: RequestEnvelope, serviceUser?: Record<string, unknown>): Record<string, unknown> {
  const e = structuredClone(envelope) as unknown as {
    context: { System: Record<string, unknown> }
    session?: { attributes: Record<string, unknown> }
  }
  e.context.System.apiAccessToken = ''
  if (serviceUser && e.session) e.session.attributes = { ...e.session.attributes, serviceUser }
  return e as unknown as Record<string, unknown>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The skill's handlers. `voice` is undefined for the untracked twin used as a reference. */
export function handlers(voice: AlexaTracking | undefined): { request: RequestHandler[]; error: ErrorHandler } {
  const Launch: RequestHandler = {
    canHandle: (input) => getRequestType(input.requestEnvelope) === 'LaunchRequest',
    handle: (input) => {
      voice?.setUserMetadata(input, { firstName: 'Ada', plan: 'free' })
      return input.responseBuilder
        .speak('Welcome to Space Facts. Ask for a fact.')
        .reprompt('Ask for a fact.')
        .getResponse()
    },
  }
  const GetFact: RequestHandler = {
    canHandle: (input) =>
      getRequestType(input.requestEnvelope) === 'IntentRequest' &&
      getIntentName(input.requestEnvelope) === 'GetFactIntent',
    handle: async (input: HandlerInput) => {
      const planet = getSlotValue(input.requestEnvelope, 'planet') ?? 'space'
      // Let concurrent requests interleave between setting the intent and answering.
      await sleep(Math.floor(Math.random() * 15))
      voice?.setOutgoingIntent(input, {
        name: 'GetFactIntent',
        inputs: [{ name: 'planet', value: planet }],
        confidence: 1,
      })
      await sleep(Math.floor(Math.random() * 15))
      input.attributesManager.setSessionAttributes({
        ...input.attributesManager.getSessionAttributes(),
        lastPlanet: planet,
      })
      return input.responseBuilder
        .speak(`A day on ${planet} is long.`)
        .withSimpleCard('Space fact', `A day on ${planet} is long.`)
        .getResponse()
    },
  }
  const Fallback: RequestHandler = {
    canHandle: (input) =>
      getRequestType(input.requestEnvelope) === 'IntentRequest' &&
      getIntentName(input.requestEnvelope) === 'AMAZON.FallbackIntent',
    handle: async (input) => {
      await sleep(Math.floor(Math.random() * 10))
      voice?.setNotHandled(input)
      return input.responseBuilder.speak('Sorry, I did not get that.').reprompt('Ask for a fact.').getResponse()
    },
  }
  const Boom: RequestHandler = {
    canHandle: (input) =>
      getRequestType(input.requestEnvelope) === 'IntentRequest' &&
      getIntentName(input.requestEnvelope) === 'BoomIntent',
    handle: async (input) => {
      voice?.setOutgoingIntent(input, { name: 'BoomIntent' })
      throw new Error('the fact database is down')
    },
  }
  const SessionEnded: RequestHandler = {
    canHandle: (input) => getRequestType(input.requestEnvelope) === 'SessionEndedRequest',
    handle: (input) => input.responseBuilder.getResponse(),
  }
  const Audio: RequestHandler = {
    canHandle: (input) => getRequestType(input.requestEnvelope).startsWith('AudioPlayer.'),
    handle: (input) => input.responseBuilder.getResponse(),
  }
  const error: ErrorHandler = {
    canHandle: () => true,
    handle: (input) => input.responseBuilder.speak('Sorry, something went wrong.').getResponse(),
  }
  return { request: [Launch, GetFact, Fallback, Boom, SessionEnded, Audio], error }
}

/** The skill wired the way the README says: `voice.instrument(builder)`. */
export function instrumentedSkill(voice: AlexaTracking, withErrorHandler = true): CustomSkillBuilder {
  const h = handlers(voice)
  const b = voice.instrument(SkillBuilders.custom()).addRequestHandlers(...h.request)
  return withErrorHandler ? b.addErrorHandlers(h.error) : b
}

/** The skill wired with the two interceptors only (the snippet). */
export function interceptorSkill(voice: AlexaTracking): CustomSkillBuilder {
  const h = handlers(voice)
  return SkillBuilders.custom()
    .addRequestHandlers(...h.request)
    .addRequestInterceptors(voice.requestInterceptor)
    .addResponseInterceptors(voice.responseInterceptor)
    .addErrorHandlers(h.error)
}

/** The same skill with no tracking at all: the reference answer. */
export function untrackedSkill(): CustomSkillBuilder {
  const h = handlers(undefined)
  return SkillBuilders.custom()
    .addRequestHandlers(...h.request)
    .addErrorHandlers(h.error)
}

export const query = (r: { query: URLSearchParams }) => Object.fromEntries(r.query)
