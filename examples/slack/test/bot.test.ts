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
    // Delivery keeps order within each channel; different channels' records may interleave.
    const byChannel = new Map<string, string[]>()
    for (const r of slack) {
      const key = `${r.body.message.channel}`
      byChannel.set(key, [...(byChannel.get(key) ?? []), `${r.type}: ${r.body.message.text}`])
    }
    const flat = [...byChannel.values()].flat()
    expect(flat.filter((l) => l.startsWith('incoming')).sort()).toEqual(
      ['hello', '👍 Good bot', 'what is the weather in Paris?', 'sing me a song about turnips', 'hey there', 'weather']
        .map((t) => `incoming: ${t}`)
        .sort(),
    )
    // Each conversation reads in order: every reply follows the message it answers.
    for (const lines of byChannel.values()) {
      lines.forEach((line, i) => {
        if (line.startsWith('outgoing')) expect(lines[i - 1]).toMatch(/^incoming/)
      })
    }
    const outgoing = slack.filter((r) => r.type === 'outgoing')
    expect(outgoing.map((r) => r.body.message.text).sort()).toEqual(
      [
        'Hello! Ask me about the weather, or rate me.',
        'Thanks, glad to help!',
        'It is sunny in Paris, 21°C.',
        "Sorry, I didn't get that. Try 'weather in Paris'.",
        'Hello! Ask me about the weather, or rate me.',
        'It is sunny in London, 21°C.',
      ].sort(),
    )
    expect(outgoing.find((r) => r.body.message.text === 'It is sunny in Paris, 21°C.')?.body.intent).toEqual({
      name: 'weather.report',
      inputs: [{ name: 'city', value: 'Paris' }],
      confidence: 0.92,
    })
    expect(slack.find((r) => r.body.message.text === 'sing me a song about turnips')?.body.intent).toEqual({
      name: 'NotHandled',
    })
    const first = slack.find((r) => r.body.message.text === 'hello')
    expect(first?.body.platformUserJson).toEqual({ firstName: 'Ann', locale: 'en_GB', plan: 'trial' })
    expect(first?.body.team).toEqual({ id: 'T0EXAMPLE', name: 'Example Workspace' })
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
