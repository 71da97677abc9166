import { generateWebhookSecret } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { postSignedWebhook } from '../../test-support'
import { alexaUserIdFor, startExampleBot } from '../src/bot'

let sink: Sink
beforeAll(async () => {
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
})

describe('examples/alexa', () => {
  it('converse() delivers the conversation through the real ask-sdk skill', async () => {
    sink.clear()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key' })
    try {
      await bot.converse()
    } finally {
      await bot.close()
    }
    const alexa = sink.records.filter((r) => r.platform === 'alexa' && r.type !== 'event')
    expect(alexa.every((r) => r.apiKey === 'demo-key' && r.v === '11.1.0-rest')).toBe(true)
    // Each turn was flushed before the Lambda handler answered, so the order is the conversation's.
    const incoming = alexa.filter((r) => r.type === 'incoming')
    expect(
      incoming.map((r) => [r.body.event.request.type, r.body.event.request.intent?.name, r.body.intent?.name]),
    ).toEqual([
      ['LaunchRequest', undefined, undefined],
      ['IntentRequest', 'GetFactIntent', undefined],
      ['IntentRequest', 'AMAZON.FallbackIntent', 'NotHandled'],
      ['IntentRequest', 'GetFactIntent', 'NotHandled'],
      ['IntentRequest', 'AMAZON.StopIntent', undefined],
      ['LaunchRequest', undefined, undefined],
      ['SessionEndedRequest', undefined, undefined],
    ])
    expect(incoming[0]?.body.event.session.attributes.serviceUser).toEqual({
      firstName: 'Ada',
      locale: 'en-GB',
      plan: 'free',
    })
    expect(incoming[0]?.body.context).toEqual({
      functionName: 'space-facts',
      awsRequestId: 'example-1',
      logGroupName: '/aws/lambda/space-facts',
    })
    expect(incoming[0]?.body.event.context.System.apiAccessToken).toBe('')

    const outgoing = alexa.filter((r) => r.type === 'outgoing')
    expect(outgoing.map((r) => r.body.response.response.outputSpeech?.ssml)).toEqual([
      '<speak>Welcome to Space Facts. Which planet?</speak>',
      '<speak>Mars has the tallest volcano in the solar system, Olympus Mons.</speak>',
      "<speak>Sorry, I didn't get that. Ask for a fact about a planet.</speak>",
      '<speak>I have no fact about pluto yet. Try Mars.</speak>',
      '<speak>Goodbye, space traveller.</speak>',
      '<speak>Welcome to Space Facts. Which planet?</speak>',
      undefined,
    ])
    expect(outgoing[1]?.body.response.intent).toEqual({
      name: 'GetFactIntent',
      inputs: [{ name: 'planet', value: 'mars' }],
      confidence: 1,
    })
    expect(outgoing[1]?.body.response.sessionAttributes).toEqual({ factsHeard: 1 })
    expect(outgoing[0]?.body.response.sessionAttributes.serviceUser).toEqual({
      firstName: 'Ada',
      locale: 'en-GB',
      plan: 'free',
    })
    expect(typeof outgoing[0]?.body.service_timestamp).toBe('number')
    expect(sink.records.filter((r) => r.type === 'event').map((r) => [r.platform, r.body])).toEqual([
      [
        'alexa',
        { type: 'customEvent', name: 'fact-told', userId: alexaUserIdFor('ada'), extraInfo: { planet: 'mars' } },
      ],
    ])
  })

  it('its signed pause webhook silences the skill for that user; the request is still tracked', async () => {
    sink.clear()
    const secret = generateWebhookSecret()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key', webhookSecret: secret })
    try {
      expect(bot.pauseWebhookUrl).toBeDefined()
      const pause = async (paused: boolean) => {
        const res = await postSignedWebhook(bot.pauseWebhookUrl as string, secret, {
          userId: alexaUserIdFor('carol'),
          paused,
        })
        expect(res.status).toBe(200)
      }
      await pause(true)
      expect(await bot.say('carol', 'hello')).toEqual([])
      await pause(false)
      expect(await bot.say('carol', 'hello')).toEqual(['Welcome to Space Facts. Which planet?'])
    } finally {
      await bot.close()
    }
    expect(sink.records.map((r) => r.type)).toEqual(['incoming', 'incoming', 'outgoing'])
  })
})
