import { generateWebhookSecret } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { postSignedWebhook } from '../../test-support'
import { dmChannel, startExampleBot } from '../src/bot'

let sink: Sink
beforeAll(async () => {
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
})

describe('examples/slack', () => {
  it('converse() delivers the conversation through the real Bolt app', async () => {
    sink.clear()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key' })
    try {
      await bot.converse()
    } finally {
      await bot.close()
    }
    const slack = sink.records.filter((r) => r.platform === 'slack')
    expect(slack.every((r) => r.apiKey === 'demo-key' && r.v === '11.1.0-rest')).toBe(true)
    const incoming = slack.filter((r) => r.type === 'incoming').map((r) => r.body.message.text)
    expect(incoming).toEqual([
      'hello',
      '👍 Good bot',
      'what is the weather in Paris?',
      'sing me a song about turnips',
      'hey there',
      'weather',
    ])
    const outgoing = slack.filter((r) => r.type === 'outgoing')
    expect(outgoing.map((r) => r.body.message.text)).toEqual([
      'Hello! Ask me about the weather, or rate me.',
      'Thanks, glad to help!',
      'It is sunny in Paris, 21°C.',
      "Sorry, I didn't get that. Try 'weather in Paris'.",
      'Hello! Ask me about the weather, or rate me.',
      'It is sunny in London, 21°C.',
    ])
    expect(outgoing[2]?.body.intent).toEqual({
      name: 'weather.report',
      inputs: [{ name: 'city', value: 'Paris' }],
      confidence: 0.92,
    })
    expect(slack.find((r) => r.body.message.text === 'sing me a song about turnips')?.body.intent).toEqual({
      name: 'NotHandled',
    })
    expect(slack[0]?.body.platformUserJson).toEqual({ firstName: 'Ann', locale: 'en_GB', plan: 'trial' })
    expect(slack[0]?.body.team).toEqual({ id: 'T0EXAMPLE', name: 'Example Workspace' })
    expect(sink.records.filter((r) => r.type === 'event').map((r) => r.body.name)).toEqual([
      'weather-asked',
      'weather-asked',
    ])
  })

  it('its signed pause webhook stops the bot answering in that conversation', async () => {
    const secret = generateWebhookSecret()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key', webhookSecret: secret })
    try {
      expect(bot.pauseWebhookUrl).toBeDefined()
      const pause = async (paused: boolean) => {
        const res = await postSignedWebhook(bot.pauseWebhookUrl as string, secret, {
          userId: dmChannel('carol'),
          paused,
        })
        expect(res.status).toBe(200)
      }
      await pause(true)
      expect(await bot.say('carol', 'hello')).toEqual([])
      await pause(false)
      expect(await bot.say('carol', 'hello')).toEqual(['Hello! Ask me about the weather, or rate me.'])
    } finally {
      await bot.close()
    }
  })
})
