import { generateWebhookSecret } from '@convotrack/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { postSignedWebhook } from '../../test-support'
import { startExampleBot } from '../src/bot'

let sink: Sink
beforeEach(async () => {
  sink = await startSink()
})
afterEach(() => sink.close())

describe('examples/universal', () => {
  it('converse() delivers universal records: intents, NotHandled, user metadata, events', async () => {
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key' })
    await bot.converse()
    await bot.close()
    const records = sink.records
    expect(records.every((r) => r.apiKey === 'demo-key' && r.v === '11.1.0-rest')).toBe(true)
    const incoming = records.filter((r) => r.type === 'incoming')
    const outgoing = records.filter((r) => r.type === 'outgoing')
    expect(incoming.map((r) => r.platform)).toEqual(['universal', 'universal', 'universal', 'universal', 'universal'])
    expect(incoming[0]?.body).toEqual({
      userId: 'web-ada',
      text: 'opened the chat widget',
      sessionId: 'sess-1',
      platformUserJson: { firstName: 'Ada', locale: 'en-GB', plan: 'pro' },
    })
    expect(incoming.find((r) => r.body.text === 'where is my order #1234?')?.body).toEqual({
      userId: 'web-ada',
      conversationId: 'conv-ada-1',
      text: 'where is my order #1234?',
      intent: { name: 'order_status', inputs: [{ name: 'order', value: '1234' }], confidence: 0.93 },
    })
    expect(incoming.find((r) => r.body.text === 'can you sing?')?.body.intent).toEqual({ name: 'NotHandled' })
    expect(outgoing.map((r) => r.body)).toEqual([
      { userId: 'web-ada', conversationId: 'conv-ada-1', text: 'Hello! How can I help?' },
      { userId: 'web-ada', conversationId: 'conv-ada-1', text: 'Order 1234 ships tomorrow.' },
      { userId: 'web-ada', conversationId: 'conv-ada-1', text: "Sorry, I didn't get that." },
      { userId: 'web-ada', conversationId: 'conv-ada-1', text: 'You are welcome.' },
    ])
    expect(records.filter((r) => r.type === 'event').map((r) => [r.platform, r.body])).toEqual([
      [
        'generic',
        {
          type: 'customEvent',
          name: 'order_lookup',
          userId: 'web-ada',
          conversationId: 'conv-ada-1',
          extraInfo: { order: '1234' },
        },
      ],
      [
        'generic',
        { type: 'revenueEvent', name: 'upgrade', userId: 'web-ada', amount: 9.99, referenceNumber: 'inv-77' },
      ],
    ])
  })

  it('the signed pause webhook stops the bot for that user (still tracked); the operator message is sent as the bot', async () => {
    const secret = generateWebhookSecret()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key', webhookSecret: secret })
    expect(bot.pauseWebhookUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/convotrack\/pause$/)
    const url = bot.pauseWebhookUrl as string
    expect((await postSignedWebhook(url, secret, { userId: 'web-ada', paused: true })).status).toBe(200)
    expect(await bot.say('web-ada', 'hello?')).toEqual([])
    expect(await bot.say('web-grace', 'hello')).toEqual(['Hello! How can I help?'])
    // forged: refused, still paused
    const forged = await postSignedWebhook(url, generateWebhookSecret(), { userId: 'web-ada', paused: false })
    expect(forged.status).toBe(401)
    expect(await bot.say('web-ada', 'hello?')).toEqual([])

    const messageUrl = url.replace('/convotrack/pause', '/convotrack/message')
    expect((await postSignedWebhook(messageUrl, secret, { userId: 'web-ada', text: 'Hi Ada, Sam here.' })).status).toBe(
      200,
    )
    const inbox = await fetch(url.replace('/convotrack/pause', '/chat/web-ada/inbox'))
    expect(await inbox.json()).toEqual({ messages: ['Hi Ada, Sam here.'] })

    expect((await postSignedWebhook(url, secret, { userId: 'web-ada', paused: false })).status).toBe(200)
    expect(await bot.say('web-ada', 'hello again')).toEqual(['Hello! How can I help?'])
    await bot.close()

    const ada = sink.records.filter((r) => r.body?.userId === 'web-ada')
    expect(ada.map((r) => [r.type, r.body.text])).toEqual([
      ['incoming', 'hello?'],
      ['incoming', 'hello?'],
      ['outgoing', 'Hi Ada, Sam here.'],
      ['incoming', 'hello again'],
      ['outgoing', 'Hello! How can I help?'],
    ])
  })
})
