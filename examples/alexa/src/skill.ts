/**
 * "Space Facts": an ordinary ask-sdk-core custom skill, tracked with @convotrack/alexa.
 * This file is what a skill developer deploys to Lambda (`export const handler = …`).
 */
import { type AlexaTracking, alexaTracking } from '@convotrack/alexa'
import type { Tracker } from '@convotrack/core'
import {
  type ErrorHandler,
  getIntentName,
  getRequestType,
  getSlotValue,
  getUserId,
  type RequestHandler,
  SkillBuilders,
} from 'ask-sdk-core'
import type { RequestEnvelope, ResponseEnvelope } from 'ask-sdk-model'

const FACTS: Record<string, string> = {
  mercury: 'A year on Mercury is just 88 days long.',
  venus: 'Venus spins backwards compared to most planets.',
  mars: 'Mars has the tallest volcano in the solar system, Olympus Mons.',
  jupiter: 'Jupiter has more than ninety known moons.',
  saturn: 'Saturn would float in a bathtub big enough to hold it.',
}

const isIntent = (name: string) => (input: Parameters<RequestHandler['canHandle']>[0]) =>
  getRequestType(input.requestEnvelope) === 'IntentRequest' && getIntentName(input.requestEnvelope) === name

function requestHandlers(voice: AlexaTracking, tracker: Tracker): RequestHandler[] {
  return [
    {
      canHandle: (input) => getRequestType(input.requestEnvelope) === 'LaunchRequest',
      handle: (input) => {
        voice.setUserMetadata(input, { firstName: 'Ada', locale: 'en-GB', plan: 'free' })
        return input.responseBuilder
          .speak('Welcome to Space Facts. Which planet?')
          .reprompt('Which planet?')
          .getResponse()
      },
    },
    {
      canHandle: isIntent('GetFactIntent'),
      handle: (input) => {
        const planet = (getSlotValue(input.requestEnvelope, 'planet') ?? '').toLowerCase()
        const fact = FACTS[planet]
        if (!fact) {
          voice.setNotHandled(input)
          return input.responseBuilder
            .speak(`I have no fact about ${planet || 'that'} yet. Try Mars.`)
            .reprompt('Which planet?')
            .getResponse()
        }
        voice.setOutgoingIntent(input, {
          name: 'GetFactIntent',
          inputs: [{ name: 'planet', value: planet }],
          confidence: 1,
        })
        const attributes = input.attributesManager.getSessionAttributes() ?? {}
        input.attributesManager.setSessionAttributes({
          ...attributes,
          factsHeard: Number(attributes.factsHeard ?? 0) + 1,
        })
        tracker.logEvent(
          { type: 'customEvent', name: 'fact-told', userId: getUserId(input.requestEnvelope), extraInfo: { planet } },
          { platform: 'alexa' },
        )
        return input.responseBuilder
          .speak(fact)
          .reprompt('Another planet?')
          .withSimpleCard(`About ${planet}`, fact)
          .getResponse()
      },
    },
    {
      canHandle: (input) => isIntent('AMAZON.StopIntent')(input) || isIntent('AMAZON.CancelIntent')(input),
      handle: (input) => {
        voice.setOutgoingIntent(input, { name: 'Goodbye' })
        return input.responseBuilder.speak('Goodbye, space traveller.').withShouldEndSession(true).getResponse()
      },
    },
    {
      canHandle: isIntent('AMAZON.FallbackIntent'),
      handle: (input) => {
        voice.setNotHandled(input)
        return input.responseBuilder
          .speak("Sorry, I didn't get that. Ask for a fact about a planet.")
          .reprompt('Which planet?')
          .getResponse()
      },
    },
    {
      canHandle: (input) => getRequestType(input.requestEnvelope) === 'SessionEndedRequest',
      handle: (input) => input.responseBuilder.getResponse(),
    },
  ]
}

const errorHandler: ErrorHandler = {
  canHandle: () => true,
  handle: (input) => input.responseBuilder.speak('Sorry, something went wrong in space.').getResponse(),
}

/** The skill's Lambda handler, tracked. In a real deployment: `export const handler = createSkillHandler(tracker)`. */
export function createSkillHandler(tracker: Tracker): {
  voice: AlexaTracking
  handler: (event: RequestEnvelope, context?: Record<string, unknown>) => Promise<ResponseEnvelope>
} {
  const voice = alexaTracking(tracker)
  const skill = voice
    .instrument(SkillBuilders.custom())
    .addRequestHandlers(voice.pauseHandler, ...requestHandlers(voice, tracker))
    .addErrorHandlers(errorHandler)
    .create()
  // An async handler (what current Lambda runtimes require); voice.handler flushes before it returns.
  const handler = voice.handler((event: RequestEnvelope, context) => skill.invoke(event, context))
  return { voice, handler }
}
