/**
 * The example Alexa skill, run locally. The skill, ask-sdk-core and the tracking are real;
 * what Alexa and Lambda would do is played here: the user's words become a request envelope
 * (the part Alexa's speech recognition does, with a tiny keyword matcher), and the skill's
 * Lambda handler is invoked with a Lambda-shaped context, so the handler flushes tracking
 * before it answers, exactly as it would in AWS.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTracker } from '@convotrack/core'
import { pauseReceiver } from '@convotrack/express'
import type { RequestEnvelope } from 'ask-sdk-model'
import type { ExampleBot, ExampleBotOptions } from '../../contract'
import { createSkillHandler } from './skill'

const SKILL_ID = 'amzn1.ask.skill.example-space-facts'

/** Alexa's user id for a user of the example (the pause key of the skill). */
export function alexaUserIdFor(userId: string): string {
  return userId.startsWith('amzn1.ask.account.') ? userId : `amzn1.ask.account.${userId}`
}

interface Session {
  id: string
  attributes: Record<string, unknown>
  started: boolean
}

/** What Alexa's language understanding would make of the words, for this skill's model. */
function understand(
  text: string,
): { type: 'LaunchRequest' } | { type: 'IntentRequest'; intent: string; slots: Record<string, string> } {
  const t = text.toLowerCase()
  if (/^(hi|hello|open|start|launch)\b/.test(t)) return { type: 'LaunchRequest' }
  if (/\b(stop|bye|goodbye|cancel)\b/.test(t)) return { type: 'IntentRequest', intent: 'AMAZON.StopIntent', slots: {} }
  const planet = /\b(?:about|on)\s+([a-z]+)/.exec(t)
  if (planet) return { type: 'IntentRequest', intent: 'GetFactIntent', slots: { planet: planet[1] as string } }
  return { type: 'IntentRequest', intent: 'AMAZON.FallbackIntent', slots: {} }
}

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const log = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })
  const { handler } = createSkillHandler(tracker)

  let pauseServer: http.Server | undefined
  let pauseWebhookUrl: string | undefined
  if (options.webhookSecret) {
    const handle = pauseReceiver({ store: tracker.pauses, secret: options.webhookSecret })
    pauseServer = http.createServer((req, res) => void handle(req, res))
    await new Promise<void>((resolve) => pauseServer?.listen(0, '127.0.0.1', resolve))
    pauseWebhookUrl = `http://127.0.0.1:${(pauseServer.address() as AddressInfo).port}/convotrack/pause`
  }

  const sessions = new Map<string, Session>()
  let seq = 0

  const envelope = (userId: string, session: Session, request: Record<string, unknown>): RequestEnvelope => {
    seq++
    return {
      version: '1.0',
      session: {
        new: !session.started,
        sessionId: session.id,
        application: { applicationId: SKILL_ID },
        attributes: session.attributes,
        user: { userId },
      },
      context: {
        System: {
          application: { applicationId: SKILL_ID },
          user: { userId },
          device: { deviceId: 'amzn1.ask.device.EXAMPLE-ECHO', supportedInterfaces: {} },
          apiEndpoint: 'https://api.amazonalexa.com',
          apiAccessToken: 'example-api-access-token',
        },
      },
      request: {
        requestId: `amzn1.echo-api.request.${seq}`,
        timestamp: new Date().toISOString(),
        locale: 'en-GB',
        ...request,
      },
    } as unknown as RequestEnvelope
  }

  const lambdaContext = () => {
    const deadline = Date.now() + 8_000
    return {
      functionName: 'space-facts',
      awsRequestId: `example-${seq}`,
      logGroupName: '/aws/lambda/space-facts',
      getRemainingTimeInMillis: () => deadline - Date.now(),
    }
  }

  const say = async (user: string, text: string): Promise<string[]> => {
    const userId = alexaUserIdFor(user)
    let session = sessions.get(userId)
    if (!session) {
      session = { id: `amzn1.echo-api.session.${userId}.${Date.now()}`, attributes: {}, started: false }
      sessions.set(userId, session)
    }
    const meant = understand(text)
    const request =
      meant.type === 'LaunchRequest'
        ? { type: 'LaunchRequest' }
        : {
            type: 'IntentRequest',
            dialogState: 'COMPLETED',
            intent: {
              name: meant.intent,
              confirmationStatus: 'NONE',
              slots: Object.fromEntries(
                Object.entries(meant.slots).map(([k, v]) => [k, { name: k, value: v, confirmationStatus: 'NONE' }]),
              ),
            },
          }
    log(`  ${user} → skill: ${text}`)
    const answer = await handler(envelope(userId, session, request), lambdaContext())
    session.started = true
    session.attributes = (answer.sessionAttributes as Record<string, unknown> | undefined) ?? {}
    const speech = answer.response.outputSpeech
    const spoken = speech ? [speech.type === 'SSML' ? speech.ssml.replace(/<\/?speak>/g, '') : speech.text] : []
    for (const s of spoken) log(`  skill → ${user}: ${s}`)
    if (spoken.length === 0) log('  (no answer: paused)')
    if (answer.response.shouldEndSession) {
      // Alexa closes the session; the next utterance opens a new one.
      sessions.delete(userId)
    }
    return spoken
  }

  return {
    name: 'alexa',
    tracker,
    say,
    pauseWebhookUrl,
    async converse() {
      await say('ada', 'open space facts')
      await say('ada', 'tell me about mars')
      await say('ada', 'what is the meaning of life')
      await say('ada', 'tell me about pluto')
      await say('ada', 'stop')
      // Alexa ends a session the user walks away from with a SessionEndedRequest.
      const userId = alexaUserIdFor('grace')
      await say('grace', 'hello')
      const session = sessions.get(userId)
      if (session) {
        await handler(
          envelope(userId, session, { type: 'SessionEndedRequest', reason: 'USER_INITIATED' }),
          lambdaContext(),
        )
        sessions.delete(userId)
        log('  (grace walked away: SessionEndedRequest)')
      }
    },
    async close() {
      await tracker.close(5_000)
      if (pauseServer) await new Promise<void>((resolve) => pauseServer?.close(() => resolve()))
    },
  }
}
