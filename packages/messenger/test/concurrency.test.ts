import { type MessengerWebhookBody, NOT_HANDLED } from '@convotrack/core'
import { MessengerMiddleware, messengerWebhook, trackedSendApi } from '@convotrack/messenger'
import { ActivityTypes, TestAdapter } from 'botbuilder'
import express from 'express'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  byType,
  GRAPH,
  type Harness,
  harness,
  listen,
  PAGE_ID,
  post,
  SEND_PATH,
  sleep,
  TOKEN,
  textItem,
  webhookBody,
} from './helpers'

const USERS = Array.from({ length: 200 }, (_, i) => `USER_${String(i).padStart(3, '0')}`)
const isOdd = (userId: string) => Number(userId.slice(-3)) % 2 === 1
const jitter = () => sleep(Math.floor(Math.random() * 15))

beforeAll(() => {
  nock.disableNetConnect()
  nock.enableNetConnect('127.0.0.1')
})
afterAll(() => nock.enableNetConnect())

let h: Harness
beforeEach(async () => {
  h = await harness()
})
afterEach(async () => {
  nock.cleanAll()
  await h.close()
})

describe('200 users at once: per-turn intents never cross', () => {
  it('raw webhook + tracked Send API', async () => {
    nock(GRAPH)
      .post(SEND_PATH)
      .query({ access_token: TOKEN })
      .times(USERS.length)
      .delay(5)
      .reply(200, (_uri, body) => {
        const id = (body as { recipient: { id: string } }).recipient.id
        return { recipient_id: id, message_id: `m_out_${id}` }
      })
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })
    const app = express()
    app.post('/webhook', express.json(), messengerWebhook(h.tracker), async (req, res) => {
      const item = (req.body as MessengerWebhookBody).entry[0]!.messaging[0]!
      const userId = item.sender.id
      await jitter()
      if (isOdd(userId)) h.tracker.setNotHandled()
      h.tracker.setOutgoingIntent({ name: `reply_to_${userId}` })
      h.tracker.setUserMetadata({ who: userId })
      await jitter()
      await send({ recipient: { id: userId }, message: { text: `hello ${userId}` } })
      res.sendStatus(200)
    })
    const server = await listen(app)
    const answers = await Promise.all(
      USERS.map((u) => post(`${server.url}/webhook`, webhookBody(textItem(u, `I am ${u}`)))),
    )
    await server.close()
    expect(answers.every((a) => a.status === 200)).toBe(true)

    const records = await h.records()
    const incoming = byType(records, 'incoming')
    const outgoing = byType(records, 'outgoing')
    expect(incoming).toHaveLength(USERS.length)
    expect(outgoing).toHaveLength(USERS.length)
    for (const r of incoming) {
      const item = r.body.entry[0].messaging[0]
      const userId = item.sender.id as string
      expect(item.message.text).toBe(`I am ${userId}`)
      expect(item.intent).toEqual(isOdd(userId) ? NOT_HANDLED : undefined)
      expect(item.platformUserJson).toEqual({ who: userId })
    }
    for (const r of outgoing) {
      const userId = r.body.json.recipient.id as string
      expect(r.body.intent).toEqual({ name: `reply_to_${userId}` })
      expect(r.body.platformUserJson).toEqual({ who: userId })
      expect(r.body.responseBody).toEqual({ recipient_id: userId, message_id: `m_out_${userId}` })
    }
    expect(new Set(incoming.map((r) => r.body.entry[0].messaging[0].sender.id))).toEqual(new Set(USERS))
    expect(h.errors).toEqual([])
  })

  it('botbuilder TestAdapter, facebook and webchat turns interleaved', async () => {
    const adapter = new TestAdapter(async (context) => {
      const userId = context.activity.from.id
      await jitter()
      if (isOdd(userId)) h.tracker.setNotHandled()
      h.tracker.setOutgoingIntent({ name: `reply_to_${userId}` })
      await jitter()
      await context.sendActivity(`hello ${userId}`)
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    const channelOf = (userId: string) => (Number(userId.slice(-3)) % 4 < 2 ? 'facebook' : 'webchat')
    await Promise.all(
      USERS.map((userId) =>
        adapter.processActivity({
          type: ActivityTypes.Message,
          channelId: channelOf(userId),
          from: { id: userId, name: userId },
          recipient: { id: PAGE_ID, name: 'Page' },
          conversation: { id: `conv_${userId}`, isGroup: false, conversationType: 'personal', name: '' },
          text: `I am ${userId}`,
          channelData: channelOf(userId) === 'facebook' ? textItem(userId, `I am ${userId}`) : undefined,
        }),
      ),
    )
    expect(adapter.activeQueue).toHaveLength(USERS.length)

    const records = await h.records()
    expect(records).toHaveLength(USERS.length * 2)
    for (const r of records) {
      if (r.platform === 'facebook' && r.type === 'incoming') {
        const item = r.body.entry[0].messaging[0]
        expect(channelOf(item.sender.id)).toBe('facebook')
        expect(item.message.text).toBe(`I am ${item.sender.id}`)
        expect(item.intent).toEqual(isOdd(item.sender.id) ? NOT_HANDLED : undefined)
      } else if (r.platform === 'facebook') {
        const userId = r.body.json.recipient.id
        expect(r.body.json.message.text).toBe(`hello ${userId}`)
        expect(r.body.intent).toEqual({ name: `reply_to_${userId}` })
      } else if (r.type === 'incoming') {
        expect(channelOf(r.body.userId)).toBe('webchat')
        expect(r.body.text).toBe(`I am ${r.body.userId}`)
        expect(r.body.intent).toEqual(isOdd(r.body.userId) ? NOT_HANDLED : undefined)
      } else {
        expect(r.body.text).toBe(`hello ${r.body.userId}`)
        expect(r.body.conversationId).toBe(`conv_${r.body.userId}`)
        expect(r.body.intent).toEqual({ name: `reply_to_${r.body.userId}` })
      }
    }
    expect(records.filter((r) => r.platform === 'facebook')).toHaveLength(200)
    expect(h.errors).toEqual([])
  })
})
