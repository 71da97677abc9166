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

describe('examples/messenger', () => {
  it('converse() delivers incoming and outgoing Messenger records, intents, NotHandled, an event and user metadata', async () => {
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key' })
    await bot.converse()
    await bot.close()
    const records = sink.records
    expect(records.every((r) => r.apiKey === 'demo-key' && r.v === '11.1.0-rest')).toBe(true)
    const incoming = records.filter((r) => r.type === 'incoming')
    const outgoing = records.filter((r) => r.type === 'outgoing')
    expect(incoming).toHaveLength(5)
    expect(outgoing).toHaveLength(5)
    const intents = incoming.map((r) => r.body.entry[0].messaging[0].intent?.name)
    expect(intents.sort()).toEqual(['NotHandled', 'greet', 'greet', 'order_status', 'thanks'])
    const order = incoming.find((r) => r.body.entry[0].messaging[0].intent?.name === 'order_status')
    expect(order?.body.entry[0].messaging[0]).toMatchObject({
      sender: { id: 'PSID_ADA' },
      message: { text: 'where is order 1234?' },
      intent: { name: 'order_status', inputs: [{ name: 'order', value: '1234' }], confidence: 0.92 },
      platformUserJson: { firstName: 'Ada', locale: 'en_GB' },
    })
    for (const r of outgoing) {
      expect(r.body.qs).toEqual({ access_token: '' })
      expect(r.body.responseBody.message_id).toMatch(/^m_example_/)
    }
    expect(records.filter((r) => r.type === 'event').map((r) => [r.platform, r.body])).toEqual([
      ['facebook', { type: 'customEvent', name: 'order_lookup', userId: 'PSID_ADA', extraInfo: { order: '1234' } }],
    ])
    expect(records.some((r) => r.raw.includes('EAAexample-page-token'))).toBe(false)
  })

  it('the signed pause webhook stops the bot for that user; the message is still tracked', async () => {
    const secret = generateWebhookSecret()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key', webhookSecret: secret })
    expect(bot.pauseWebhookUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/convotrack\/pause$/)
    const pause = async (paused: boolean) => {
      const res = await postSignedWebhook(bot.pauseWebhookUrl as string, secret, { userId: 'PSID_ADA', paused })
      expect(res.status).toBe(200)
    }
    await pause(true)
    expect(await bot.say('PSID_ADA', 'hi')).toEqual([])
    expect(await bot.say('PSID_GRACE', 'hi')).toHaveLength(1)
    await pause(false)
    expect(await bot.say('PSID_ADA', 'hi')).toHaveLength(1)
    await bot.close()
    expect(sink.records.filter((r) => r.type === 'incoming')).toHaveLength(3)
    expect(sink.records.filter((r) => r.type === 'outgoing').map((r) => r.body.json.recipient.id)).toEqual(
      expect.arrayContaining(['PSID_GRACE', 'PSID_ADA']),
    )
    expect(sink.records.filter((r) => r.type === 'outgoing')).toHaveLength(2)
  })
})
