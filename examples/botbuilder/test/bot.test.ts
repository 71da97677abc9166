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

const summary = (r: Sink['records'][number]) =>
  r.platform === 'facebook' && r.type === 'incoming'
    ? `fb in ${r.body.entry[0].messaging[0].message.text} [${r.body.entry[0].messaging[0].intent?.name ?? '-'}]`
    : r.platform === 'facebook' && r.type === 'outgoing'
      ? `fb out ${r.body.json.message.text} [${r.body.intent?.name ?? '-'}]`
      : `${r.platform} ${r.type} ${r.body.text ?? r.body.name} [${r.body.intent?.name ?? '-'}]`

describe('examples/botbuilder (CloudAdapter over HTTP)', () => {
  it('converse() delivers Messenger records for facebook, universal ones for webchat', async () => {
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key' })
    await bot.converse()
    await bot.close()
    expect(sink.records.every((r) => r.apiKey === 'demo-key')).toBe(true)
    expect(sink.records.map(summary).sort()).toEqual(
      [
        'fb in hi [-]',
        'fb out Hi Ada! Ask me where an order is. [greet]',
        'fb in where is order 1234? [-]',
        'facebook event order_lookup [-]',
        'fb out Order 1234 ships tomorrow. [order_status]',
        'fb in sing me a song [NotHandled]',
        "fb out Sorry, I didn't get that. [-]",
        'universal incoming hello [-]',
        'universal outgoing Hi web-user-7! Ask me where an order is. [greet]',
        'universal incoming what is the meaning of life [NotHandled]',
        "universal outgoing Sorry, I didn't get that. [-]",
      ].sort(),
    )
    // The channel's ResourceResponse id becomes message_id.
    const out = sink.records.filter((r) => r.platform === 'facebook' && r.type === 'outgoing')
    expect(out.map((r) => r.body.responseBody.message_id)).toEqual(
      out.map(() => expect.stringMatching(/^bf-activity-\d+$/)),
    )
    const greetIn = sink.records.find((r) => r.platform === 'universal' && r.body.text === 'hello')
    expect(greetIn?.body).toMatchObject({
      userId: 'web-user-7',
      conversationId: 'webchat-web-user-7',
      platformUserJson: { firstName: 'web-user-7' },
    })
  })

  it('pause through the signed webhook: tracked, not answered; unpause: answered', async () => {
    const secret = generateWebhookSecret()
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key', webhookSecret: secret })
    const pause = async (paused: boolean) => {
      const res = await postSignedWebhook(bot.pauseWebhookUrl as string, secret, { userId: 'PSID_ADA', paused })
      expect(res.status).toBe(200)
    }
    await pause(true)
    expect(await bot.say('PSID_ADA', 'hi')).toEqual([])
    await pause(false)
    expect(await bot.say('PSID_ADA', 'hi')).toEqual(['Hi Ada! Ask me where an order is.'])
    await bot.close()
    expect(sink.records.map((r) => r.type)).toEqual(expect.arrayContaining(['incoming', 'incoming', 'outgoing']))
    expect(sink.records).toHaveLength(3)
  })
})
