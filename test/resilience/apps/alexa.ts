/**
 * An ask-sdk-core custom skill tracked with `@convotrack/alexa` (`instrument` + the pause
 * handler), served over HTTP the way a self-hosted skill is (request envelope in, response
 * envelope out; Alexa's request signature check left out). Not in Lambda, so the skill does
 * not wait for delivery (the adapter's default `flush: 'lambda'`).
 */
import http from 'node:http'
import { alexaTracking } from '@convotrack/alexa'
import type * as AskSdk from '../../../packages/alexa/node_modules/ask-sdk-core'
import { type AppFactory, listen, post, readBody, requireFrom } from './app'

const SKILL_ID = 'amzn1.ask.skill.resilience'

export const alexaApp: AppFactory = async ({ tracker, client }) => {
  const Ask = requireFrom('alexa')('ask-sdk-core') as typeof AskSdk
  const echo: AskSdk.RequestHandler = {
    canHandle: (input) => Ask.getRequestType(input.requestEnvelope) === 'IntentRequest',
    handle: (input) => {
      const id = Ask.getSlotValue(input.requestEnvelope, 'message') ?? 'none'
      return input.responseBuilder.speak(`echo ${id}`).reprompt('Anything else?').getResponse()
    },
  }
  const failed: AskSdk.ErrorHandler = {
    canHandle: () => true,
    handle: (input) => input.responseBuilder.speak('Sorry, something went wrong.').getResponse(),
  }
  const builder = Ask.SkillBuilders.custom()
  if (tracker) {
    const voice = alexaTracking(tracker)
    voice.instrument(builder).addRequestHandlers(voice.pauseHandler)
  }
  const skill = builder.addRequestHandlers(echo).addErrorHandlers(failed).create()

  const server = await listen(
    http.createServer(async (req, res) => {
      const envelope = JSON.parse(await readBody(req))
      const answer = await skill.invoke(envelope)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
    }),
  )
  let seq = 0
  return {
    async send(user, id) {
      const userId = `amzn1.ask.account.${user}`
      const envelope = {
        version: '1.0',
        session: {
          new: false,
          sessionId: `amzn1.echo-api.session.${user}`,
          application: { applicationId: SKILL_ID },
          attributes: {},
          user: { userId },
        },
        context: {
          System: {
            application: { applicationId: SKILL_ID },
            user: { userId },
            device: { deviceId: 'amzn1.ask.device.RZ', supportedInterfaces: {} },
            apiEndpoint: 'https://api.amazonalexa.com',
          },
        },
        request: {
          type: 'IntentRequest',
          requestId: `amzn1.echo-api.request.${++seq}`,
          timestamp: new Date().toISOString(),
          locale: 'en-GB',
          dialogState: 'COMPLETED',
          intent: {
            name: 'EchoIntent',
            confirmationStatus: 'NONE',
            slots: { message: { name: 'message', value: id, confirmationStatus: 'NONE' } },
          },
        },
      }
      const answer = await post(client, `${server.url}/skill`, JSON.stringify(envelope))
      if (!answer.includes(`echo ${id}`)) throw new Error(`no answer to ${id}: ${answer}`)
    },
    close: () => server.close(),
  }
}
