import { MessengerMiddleware } from '@convotrack/messenger'
import { type Activity, ActivityTypes, type ResourceResponse, TestAdapter, type TurnContext } from 'botbuilder'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { byType, type Harness, harness, PAGE_ID } from './helpers'

let h: Harness
beforeEach(async () => {
  h = await harness({ concurrency: 1 })
})
afterEach(() => h.close())

/** What the Bot Framework Facebook channel delivers: Messenger's own event in channelData. */
function facebookActivity(userId: string, text: string, extra: Partial<Activity> = {}): Partial<Activity> {
  const channelData = {
    sender: { id: userId },
    recipient: { id: PAGE_ID },
    timestamp: 1_700_000_000_000,
    message: { mid: `m_${userId}`, seq: 0, text },
  }
  return {
    type: ActivityTypes.Message,
    channelId: 'facebook',
    id: `m_${userId}`,
    from: { id: userId, name: 'Ada' },
    recipient: { id: PAGE_ID, name: 'Shop Page' },
    conversation: { id: `${userId}-${PAGE_ID}`, isGroup: false, conversationType: 'personal', name: '' },
    serviceUrl: 'https://facebook.botframework.com/',
    text,
    channelData,
    ...extra,
  }
}

function webchatActivity(userId: string, conversationId: string, text: string): Partial<Activity> {
  return {
    type: ActivityTypes.Message,
    channelId: 'webchat',
    from: { id: userId, name: 'User' },
    recipient: { id: 'shop-bot', name: 'Shop Bot' },
    conversation: { id: conversationId, isGroup: false, conversationType: 'personal', name: '' },
    serviceUrl: 'https://webchat.botframework.com/',
    text,
  }
}

/** A small bot: greets with an intent, says sorry (NotHandled) otherwise. */
function shopBot(
  tracker: Harness['tracker'],
  log: { ran: number; activities: unknown[]; responses: (ResourceResponse | undefined)[] },
) {
  return async (context: TurnContext) => {
    log.ran++
    log.activities.push(JSON.parse(JSON.stringify(context.activity)))
    if (context.activity.type !== ActivityTypes.Message) return
    if (context.activity.text === 'hi') {
      tracker.setOutgoingIntent({ name: 'greet' })
      log.responses.push(await context.sendActivity('Hello! What are you looking for?'))
    } else {
      tracker.setNotHandled()
      log.responses.push(await context.sendActivity("Sorry, I didn't get that."))
    }
  }
}

function newBot(options?: ConstructorParameters<typeof MessengerMiddleware>[1]) {
  const log = { ran: 0, activities: [] as unknown[], responses: [] as (ResourceResponse | undefined)[] }
  const adapter = new TestAdapter(shopBot(h.tracker, log))
  adapter.use(new MessengerMiddleware(h.tracker, options))
  return { adapter, log }
}

describe('MessengerMiddleware on the facebook channel', () => {
  it('incoming from channelData in Messenger shape, the reply as a Send API record with the ResourceResponse id', async () => {
    const { adapter, log } = newBot()
    await adapter.processActivity(facebookActivity('PSID_1', 'hi'))

    const reply = adapter.activeQueue[0]
    expect(reply?.text).toBe('Hello! What are you looking for?')
    expect(log.responses[0]?.id).toBe(reply?.id)
    const records = await h.records()
    expect(records.map((r) => [r.platform, r.type, r.v, r.apiKey])).toEqual([
      ['facebook', 'incoming', '11.1.0-rest', 'test-key'],
      ['facebook', 'outgoing', '11.1.0-rest', 'test-key'],
    ])
    expect(records[0]?.body).toEqual({
      object: 'page',
      entry: [
        {
          id: PAGE_ID,
          time: 1_700_000_000_000,
          messaging: [
            {
              sender: { id: 'PSID_1' },
              recipient: { id: PAGE_ID },
              timestamp: 1_700_000_000_000,
              message: { mid: 'm_PSID_1', seq: 0, text: 'hi' },
            },
          ],
        },
      ],
    })
    expect(records[1]?.body).toEqual({
      uri: 'https://graph.facebook.com/v21.0/me/messages',
      method: 'POST',
      qs: { access_token: '' },
      json: { recipient: { id: 'PSID_1' }, message: { text: 'Hello! What are you looking for?' } },
      responseBody: { recipient_id: 'PSID_1', message_id: reply?.id },
      intent: { name: 'greet' },
    })
    expect(h.errors).toEqual([])
  })

  it('setNotHandled() in the turn lands inside the messaging item', async () => {
    const { adapter } = newBot()
    await adapter.processActivity(facebookActivity('PSID_2', 'qwzx'))
    const [incoming, outgoing] = await h.records()
    expect(incoming?.body.entry[0].messaging[0].intent).toEqual({ name: 'NotHandled' })
    expect(outgoing?.body.intent).toBeUndefined()
  })

  it('without channelData the Messenger item is rebuilt from the activity', async () => {
    const { adapter } = newBot()
    const activity = facebookActivity('PSID_3', 'hi', {
      channelData: undefined,
      id: 'act-9',
      timestamp: new Date(1_700_000_005_000),
    })
    await adapter.processActivity(activity)
    const [incoming] = await h.records()
    expect(incoming?.body).toEqual({
      object: 'page',
      entry: [
        {
          id: PAGE_ID,
          time: 1_700_000_005_000,
          messaging: [
            {
              sender: { id: 'PSID_3' },
              recipient: { id: PAGE_ID },
              timestamp: 1_700_000_005_000,
              message: { mid: 'act-9', text: 'hi' },
            },
          ],
        },
      ],
    })
  })

  it('native channelData of a reply (quick replies) goes into the Send API message', async () => {
    const adapter = new TestAdapter(async (context) => {
      await context.sendActivity({
        text: 'Pick a colour',
        channelData: {
          messaging_type: 'RESPONSE',
          quick_replies: [{ content_type: 'text', title: 'Red', payload: 'RED' }],
        },
      })
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    await adapter.processActivity(facebookActivity('PSID_4', 'colours?'))
    const outgoing = byType(await h.records(), 'outgoing')[0]
    expect(outgoing?.body.json).toEqual({
      recipient: { id: 'PSID_4' },
      messaging_type: 'RESPONSE',
      message: { text: 'Pick a colour', quick_replies: [{ content_type: 'text', title: 'Red', payload: 'RED' }] },
    })
  })
})

describe('MessengerMiddleware on other channels (universal shape)', () => {
  it('webchat: text, userId from from.id, conversationId, the activity in platformJson', async () => {
    const { adapter, log } = newBot()
    await adapter.processActivity(webchatActivity('web-user-1', 'conv-1', 'hi'))
    const incomingActivity = log.activities[0]
    const reply = JSON.parse(JSON.stringify(adapter.activeQueue[0]))
    const records = await h.records()
    expect(records.map((r) => [r.platform, r.type])).toEqual([
      ['universal', 'incoming'],
      ['universal', 'outgoing'],
    ])
    expect(records[0]?.body).toEqual({
      text: 'hi',
      userId: 'web-user-1',
      conversationId: 'conv-1',
      platformJson: incomingActivity,
    })
    expect(records[1]?.body).toEqual({
      text: 'Hello! What are you looking for?',
      userId: 'web-user-1',
      conversationId: 'conv-1',
      platformJson: reply,
      intent: { name: 'greet' },
    })
  })

  it('NotHandled goes at the root; a conversationUpdate is not an incoming record but the welcome it triggers is', async () => {
    const adapter = new TestAdapter(async (context) => {
      if (context.activity.type === ActivityTypes.ConversationUpdate) await context.sendActivity('Welcome!')
      else {
        h.tracker.setNotHandled()
        await context.sendActivity('Hm?')
      }
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    await adapter.processActivity({
      ...webchatActivity('web-user-2', 'conv-2', ''),
      type: ActivityTypes.ConversationUpdate,
      text: undefined,
    })
    await adapter.processActivity(webchatActivity('web-user-2', 'conv-2', 'zzz'))
    const records = await h.records()
    expect(records.map((r) => `${r.type}:${r.body.text}:${r.body.intent?.name ?? '-'}`)).toEqual([
      'outgoing:Welcome!:-',
      'incoming:zzz:NotHandled',
      'outgoing:Hm?:-',
    ])
  })
})

describe('MessengerMiddleware leaves the pipeline as it was', () => {
  it('trace and typing activities are not tracked', async () => {
    const adapter = new TestAdapter(async (context) => {
      await context.sendActivity({ type: ActivityTypes.Typing })
      await context.sendTraceActivity('dialog', { step: 1 }, 'state', 'trace')
      await context.sendActivity('done')
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    await adapter.processActivity(facebookActivity('PSID_5', 'go'))
    const outgoing = byType(await h.records(), 'outgoing')
    expect(outgoing.map((r) => r.body.json.message)).toEqual([{ text: 'done' }])
  })

  it("returns the send pipeline's results unchanged", async () => {
    let got: ResourceResponse[] = []
    const adapter = new TestAdapter(async (context) => {
      // An inner handler (registered after the middleware's) that answers its own ids.
      context.onSendActivities(async (_ctx, activities, next) => {
        await next()
        return activities.map((_a, i) => ({ id: `custom-${i}` }))
      })
      got = await context.sendActivities([{ text: 'one' }, { type: ActivityTypes.Typing }, { text: 'two' }])
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    await adapter.processActivity(facebookActivity('PSID_6', 'x'))
    expect(got).toEqual([{ id: 'custom-0' }, { id: 'custom-1' }, { id: 'custom-2' }])
    const outgoing = byType(await h.records(), 'outgoing')
    expect(outgoing.map((r) => [r.body.json.message.text, r.body.responseBody.message_id])).toEqual([
      ['one', 'custom-0'],
      ['two', 'custom-2'],
    ])
  })

  it("the bot's error reaches onTurnError unchanged; what happened before is tracked", async () => {
    const boom = new Error('dialog state corrupted')
    const caught: unknown[] = []
    const adapter = new TestAdapter(async (context) => {
      await context.sendActivity('working on it')
      throw boom
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    adapter.onTurnError = async (_context, error) => {
      caught.push(error)
    }
    await adapter.processActivity(facebookActivity('PSID_7', 'x'))
    expect(caught).toEqual([boom])
    expect(caught[0]).toBe(boom)
    expect((await h.records()).map((r) => r.type)).toEqual(['incoming', 'outgoing'])
  })

  it('without onTurnError the error rejects processActivity, unchanged', async () => {
    const boom = new Error('no handler')
    const adapter = new TestAdapter(async () => {
      throw boom
    })
    adapter.use(new MessengerMiddleware(h.tracker))
    await expect(adapter.processActivity(facebookActivity('PSID_8', 'x'))).rejects.toBe(boom)
    expect((await h.records()).map((r) => r.type)).toEqual(['incoming'])
  })
})

describe('MessengerMiddleware: pause', () => {
  it('facebook: keyed by the Messenger user id; tracked, next() not called; unpaused, the bot answers', async () => {
    const { adapter, log } = newBot()
    await h.tracker.pauses.setPaused('PSID_P', true)
    await adapter.processActivity(facebookActivity('PSID_P', 'hi'))
    await adapter.processActivity(facebookActivity('PSID_OTHER', 'hi'))
    expect(log.ran).toBe(1)
    expect(adapter.activeQueue.map((a) => a.recipient?.id)).toEqual(['PSID_OTHER'])

    await h.tracker.pauses.setPaused('PSID_P', false)
    await adapter.processActivity(facebookActivity('PSID_P', 'hi'))
    expect(log.ran).toBe(2)
    const records = (await h.records()).map(
      (r) => `${r.type}:${r.type === 'incoming' ? r.body.entry[0].messaging[0].sender.id : r.body.json.recipient.id}`,
    )
    // Order is kept within each conversation (different users' records may interleave).
    expect(records.filter((r) => r.endsWith(':PSID_P'))).toEqual([
      'incoming:PSID_P',
      'incoming:PSID_P',
      'outgoing:PSID_P',
    ])
    expect(records.filter((r) => r.endsWith(':PSID_OTHER'))).toEqual(['incoming:PSID_OTHER', 'outgoing:PSID_OTHER'])
  })

  it('webchat: keyed by the conversation id (the universal pause key)', async () => {
    const { adapter, log } = newBot()
    await h.tracker.pauses.setPaused('conv-paused', true)
    await adapter.processActivity(webchatActivity('web-user-3', 'conv-paused', 'hi'))
    expect(log.ran).toBe(0)
    expect(adapter.activeQueue).toEqual([])
    expect((await h.records()).map((r) => [r.type, r.body.conversationId])).toEqual([['incoming', 'conv-paused']])
  })

  it('pause: false runs the bot regardless', async () => {
    const { adapter, log } = newBot({ pause: false })
    await h.tracker.pauses.setPaused('PSID_P', true)
    await adapter.processActivity(facebookActivity('PSID_P', 'hi'))
    expect(log.ran).toBe(1)
  })
})
