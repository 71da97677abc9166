import {
  InvalidRecordError,
  serializeAlexaIncoming,
  serializeAlexaOutgoing,
  serializeEvent,
  serializeKik,
  serializeMessengerIncoming,
  serializeMessengerOutgoing,
  serializeSlack,
  serializeTwitterIncoming,
  serializeTwitterOutgoing,
  serializeUniversal,
} from '@convotrack/core'
import { describe, expect, it } from 'vitest'

// Each test shows the native input and the exact wire body (spec: shared/spec/tracking-service.md).

describe('universal (spec: Universal message)', () => {
  it('passes every field through, intent at the root', () => {
    const msg = {
      text: 'show me shoes',
      userId: 'u1',
      conversationId: 'c1',
      sessionId: 's1',
      images: [{ url: 'https://x/a.png' }, 'https://x/b.png'],
      buttons: [{ id: 'b1', label: 'Red', value: 'red' }],
      postback: { buttonClick: { buttonId: 'b1' } },
      platformJson: { raw: true },
      platformUserJson: { firstName: 'Ada', locale: 'en_GB' },
    }
    const { body, userId } = serializeUniversal(msg, {
      intent: { name: 'shop', inputs: [{ name: 'item', value: 'shoes' }], confidence: 0.9 },
    })
    expect(userId).toBe('u1')
    expect(body).toEqual({
      ...msg,
      intent: { name: 'shop', inputs: [{ name: 'item', value: 'shoes' }], confidence: 0.9 },
    })
  })

  it('platform secrets inside platformJson are blanked unless sendPlatformCredentials; the caller’s object is untouched', () => {
    const platformJson = {
      channelId: 'slack',
      channelData: { ApiToken: 'xoxb-SECRET', SlackMessage: { token: 'VERIF-SECRET', event: { text: 'hi' } } },
      list: [{ access_token: 'EAAG-SECRET' }, { keep: 'me' }],
    }
    const { body } = serializeUniversal({ text: 'hi', userId: 'u', platformJson })
    expect(body.platformJson).toEqual({
      channelId: 'slack',
      channelData: { ApiToken: '', SlackMessage: { token: '', event: { text: 'hi' } } },
      list: [{ access_token: '' }, { keep: 'me' }],
    })
    expect(platformJson.channelData.ApiToken).toBe('xoxb-SECRET')
    expect(
      serializeUniversal({ text: 'hi', userId: 'u', platformJson }, { sendPlatformCredentials: true }).body
        .platformJson,
    ).toBe(platformJson)
    const clean = { a: { b: [1, 2] } }
    expect(serializeUniversal({ text: 'hi', userId: 'u', platformJson: clean }).body.platformJson).toBe(clean)
  })

  it('merges per-turn user metadata under the message’s own', () => {
    const { body } = serializeUniversal(
      { text: 'x', userId: 'u', platformUserJson: { a: 1 } },
      { platformUserJson: { a: 0, b: 2 } },
    )
    expect(body.platformUserJson).toEqual({ a: 1, b: 2 })
  })

  it.each([
    [{ userId: 'u' }, 'text', 'is required and must be a string'],
    [{ text: 'x' }, 'userId', 'is required and must be a string'],
    [{ text: 'x', userId: '' }, 'userId', 'must be a non-empty string'],
    [{ text: 'x', userId: 'u', buttons: [{ id: 'a', label: 3, value: 'v' }] }, 'buttons[0].label', 'must be a string'],
    [{ text: 'x', userId: 'u', images: [{ href: 'x' }] }, 'images[0]', 'must be {url: string}'],
    [{ text: 'x', userId: 'u', intent: { name: 'a', confidence: 1.5 } }, 'intent.confidence', 'from 0.0 to 1.0'],
    [{ text: 'x', userId: 'u', intent: { inputs: [] } }, 'intent.name', 'is required'],
    [{ text: 'x', userId: 'u', postback: { buttonClick: {} } }, 'postback.buttonClick.buttonId', 'is required'],
    [{ text: 'x', userId: 'u', platformJson: 'no' }, 'platformJson', 'must be an object'],
  ])('rejects %j naming %s', (msg, path, rule) => {
    const err = (() => {
      try {
        serializeUniversal(msg as never)
      } catch (e) {
        return e as InvalidRecordError
      }
    })()
    expect(err).toBeInstanceOf(InvalidRecordError)
    expect(err?.path).toBe(path)
    expect(err?.rule).toContain(rule)
    expect(err?.message).toContain(`\`${path}\``)
  })
})

const dmEvent = (sender: string, recipient: string, data: { text: string; [key: string]: unknown }) => ({
  type: 'message_create',
  id: '1111',
  created_timestamp: '1700000000000',
  message_create: {
    target: { recipient_id: recipient },
    sender_id: sender,
    source_app_id: '268278',
    message_data: data,
  },
})

describe('twitter DM (spec: short-post DM platform)', () => {
  it('incoming: userId is the human sender, text pulled up, payload in platformJson, quick reply → postback', () => {
    const payload = {
      for_user_id: 'BOT',
      direct_message_events: [
        dmEvent('HUMAN', 'BOT', { text: 'Red', quick_reply_response: { type: 'options', metadata: 'color_red' } }),
      ],
      users: { HUMAN: { id: 'HUMAN', name: 'Ada' } },
      apps: { '268278': { id: '268278', name: 'Web' } },
    }
    const [rec, ...rest] = serializeTwitterIncoming(payload)
    expect(rest).toEqual([])
    expect(rec?.body).toEqual({
      text: 'Red',
      userId: 'HUMAN',
      postback: { buttonClick: { buttonId: 'color_red' } },
      platformJson: payload,
    })
  })

  it('incoming: the bot’s own DMs (sender = for_user_id) are not user messages', () => {
    expect(
      serializeTwitterIncoming({
        for_user_id: 'BOT',
        direct_message_events: [dmEvent('BOT', 'HUMAN', { text: 'hi' })],
      }),
    ).toEqual([])
  })

  it('outgoing: userId is the recipient, never the bot; quick-reply options become buttons', () => {
    const ev = dmEvent('BOT', 'HUMAN', {
      text: 'Pick a color',
      quick_reply: {
        type: 'options',
        options: [
          { label: 'Red', metadata: 'color_red' },
          { label: 'Blue', description: 'calm', metadata: 'color_blue' },
        ],
      },
    })
    const [rec] = serializeTwitterOutgoing({ event: ev }, { intent: { name: 'ask_color' } })
    expect(rec?.userId).toBe('HUMAN')
    expect(rec?.body).toEqual({
      text: 'Pick a color',
      userId: 'HUMAN',
      buttons: [
        { id: 'color_red', label: 'Red', value: 'color_red' },
        { id: 'color_blue', label: 'Blue', value: 'color_blue' },
      ],
      intent: { name: 'ask_color' },
      platformJson: { direct_message_events: [ev] },
    })
  })

  it('names the missing recipient', () => {
    expect(() =>
      serializeTwitterOutgoing({
        event: { type: 'message_create', message_create: { target: {}, message_data: { text: 'x' } } } as never,
      }),
    ).toThrow(/event\.message_create\.target\.recipient_id/)
  })
})

describe('messenger (spec: Social messenger)', () => {
  const webhook = {
    object: 'page',
    entry: [
      {
        id: 'PAGE',
        time: 1700000000000,
        messaging: [
          {
            sender: { id: 'USER' },
            recipient: { id: 'PAGE' },
            timestamp: 1700000000001,
            message: { mid: 'm1', seq: 1, text: 'hello' },
          },
          {
            sender: { id: 'PAGE' },
            recipient: { id: 'USER' },
            timestamp: 1700000000002,
            message: { mid: 'm2', is_echo: true, text: 'echo' },
          },
          {
            sender: { id: 'USER' },
            recipient: { id: 'PAGE' },
            timestamp: 1700000000003,
            delivery: { mids: ['m2'], watermark: 1 },
          },
        ],
      },
    ],
  }

  it('incoming: body as sent, intent and user metadata inside each messaging item; echoes and receipts left out', () => {
    const [rec] = serializeMessengerIncoming(webhook, {
      intent: { name: 'NotHandled' },
      platformUserJson: { locale: 'fr_FR' },
    })
    expect(rec?.userId).toBe('USER')
    expect(rec?.body).toEqual({
      object: 'page',
      entry: [
        {
          id: 'PAGE',
          time: 1700000000000,
          messaging: [
            {
              sender: { id: 'USER' },
              recipient: { id: 'PAGE' },
              timestamp: 1700000000001,
              message: { mid: 'm1', seq: 1, text: 'hello' },
              intent: { name: 'NotHandled' },
              platformUserJson: { locale: 'fr_FR' },
            },
          ],
        },
      ],
    })
    expect(rec?.body).not.toHaveProperty('intent')
  })

  it('incoming: messengerEvents "all" keeps echoes and receipts; ignored senders are removed', () => {
    const [all] = serializeMessengerIncoming(webhook, { messengerEvents: 'all' })
    const entries = all?.body.entry as Array<{ messaging: unknown[] }>
    expect(entries[0]?.messaging).toHaveLength(3)
    expect(serializeMessengerIncoming(webhook, { isIgnored: (id) => id === 'USER' })).toEqual([])
  })

  it('outgoing: send request + responseBody, access token blanked, intent at the root', () => {
    const request = {
      uri: 'https://graph.facebook.com/v21.0/me/messages',
      method: 'POST',
      qs: { access_token: 'EAAG-secret' },
      json: { recipient: { id: 'USER' }, message: { text: 'hi!' } },
    }
    const { body, userId } = serializeMessengerOutgoing(
      request,
      { recipient_id: 'USER', message_id: 'mid.1' },
      { intent: { name: 'greet' } },
    )
    expect(userId).toBe('USER')
    expect(body).toEqual({
      uri: 'https://graph.facebook.com/v21.0/me/messages',
      method: 'POST',
      qs: { access_token: '' },
      json: { recipient: { id: 'USER' }, message: { text: 'hi!' } },
      responseBody: { recipient_id: 'USER', message_id: 'mid.1' },
      intent: { name: 'greet' },
    })
    expect(serializeMessengerOutgoing(request, {}, { sendPlatformCredentials: true }).body.qs).toEqual({
      access_token: 'EAAG-secret',
    })
  })

  it('names a bad messaging item', () => {
    const bad = {
      object: 'page',
      entry: [{ id: 'P', time: 1, messaging: [{ sender: { id: 'U' }, recipient: { id: 'P' }, timestamp: 'now' }] }],
    }
    expect(() => serializeMessengerIncoming(bad as never)).toThrow(/entry\[0\]\.messaging\[0\]\.timestamp/)
  })
})

describe('slack (spec: Team chat)', () => {
  const incoming = {
    token: 'verif-token',
    team: { id: 'T1', name: 'Acme' },
    bot: { id: 'B1' },
    message: { type: 'message', channel: 'C1', user: 'U1', text: 'hi', ts: '1700000000.0001', team: 'T1' },
  }
  it('incoming: token left out unless sendPlatformCredentials, intent at the root', () => {
    const { body, userId } = serializeSlack(incoming, 'incoming', { intent: { name: 'NotHandled' } })
    expect(userId).toBe('U1')
    expect(body).toEqual({
      team: { id: 'T1', name: 'Acme' },
      bot: { id: 'B1' },
      message: { type: 'message', channel: 'C1', user: 'U1', text: 'hi', ts: '1700000000.0001', team: 'T1' },
      intent: { name: 'NotHandled' },
    })
    expect(serializeSlack(incoming, 'incoming', { sendPlatformCredentials: true }).body.token).toBe('verif-token')
  })
  it('outgoing: message type, text, channel', () => {
    const out = {
      team: { id: 'T1', name: 'Acme' },
      bot: { id: 'B1' },
      message: { type: 'message', text: 'hello', channel: 'C1' },
    }
    expect(serializeSlack(out, 'outgoing').body).toEqual(out)
    expect(() => serializeSlack({ ...out, message: { type: 'message', text: 'x' } } as never, 'outgoing')).toThrow(
      /message\.channel/,
    )
  })
})

describe('kik (spec: Mobile chat)', () => {
  it('incoming: apiKey blanked, every message field kept, intent at the root', () => {
    const message = {
      type: 'text',
      body: 'hi',
      from: 'alice',
      timestamp: 1700000000000,
      mention: null,
      participants: ['alice'],
      readReceiptRequested: true,
      id: 'msg-1',
      chatId: 'chat-1',
    }
    const { body, userId } = serializeKik({ apiKey: 'kik-secret', username: 'mybot', message }, 'incoming', {
      intent: { name: 'greet' },
    })
    expect(userId).toBe('alice')
    expect(body).toEqual({ apiKey: '', username: 'mybot', message, intent: { name: 'greet' } })
  })
  it('outgoing: userId is the recipient', () => {
    const message = { type: 'text', body: 'yo', to: 'alice', chatId: 'chat-1' }
    const { body, userId } = serializeKik({ apiKey: 'kik-secret', username: 'mybot', message }, 'outgoing', {
      sendPlatformCredentials: true,
    })
    expect(userId).toBe('alice')
    expect(body).toEqual({ apiKey: 'kik-secret', username: 'mybot', message })
  })
})

describe('alexa (spec: Voice assistant)', () => {
  const event = {
    version: '1.0',
    session: {
      new: true,
      sessionId: 'SessionId.1',
      application: { applicationId: 'amzn1.ask.skill.1' },
      attributes: {},
      user: { userId: 'amzn1.ask.account.U1', accessToken: 'linked-secret' },
    },
    context: { System: { apiAccessToken: 'alexa-api-secret', user: { userId: 'amzn1.ask.account.U1' } } },
    request: {
      type: 'IntentRequest',
      requestId: 'req-1',
      timestamp: '2026-11-21T10:00:00Z',
      intent: { name: 'OrderIntent', slots: { Item: { name: 'Item', value: 'pizza' } } },
    },
  }
  it('incoming: { event, context }, Lambda context cleaned, Alexa tokens blanked, serviceUser in session attributes', () => {
    const lambdaContext = {
      functionName: 'skill',
      awsRequestId: 'aws-1',
      getRemainingTimeInMillis: () => 1000,
      self: undefined as unknown,
    }
    lambdaContext.self = lambdaContext
    const { body, userId } = serializeAlexaIncoming(event, lambdaContext, { platformUserJson: { plan: 'pro' } })
    expect(userId).toBe('amzn1.ask.account.U1')
    expect(body).toEqual({
      event: {
        ...event,
        session: {
          ...event.session,
          attributes: { serviceUser: { plan: 'pro' } },
          user: { userId: 'amzn1.ask.account.U1', accessToken: '' },
        },
        context: { System: { apiAccessToken: '', user: { userId: 'amzn1.ask.account.U1' } } },
      },
      context: { functionName: 'skill', awsRequestId: 'aws-1' },
    })
    expect(event.session.user.accessToken).toBe('linked-secret') // the caller's object is untouched
  })

  it('outgoing: intent inside `response`, serviceUser in response.sessionAttributes, root service_timestamp', () => {
    const response = {
      version: '1.0',
      sessionAttributes: { step: 2 },
      response: { shouldEndSession: false, outputSpeech: { type: 'SSML', ssml: '<speak>Which size?</speak>' } },
    }
    const { body } = serializeAlexaOutgoing(event, response, {
      intent: { name: 'AskSize', confidence: 0.8 },
      platformUserJson: { plan: 'pro' },
      now: () => 42,
    })
    expect(body.service_timestamp).toBe(42)
    expect(body.response).toEqual({
      version: '1.0',
      sessionAttributes: { step: 2, serviceUser: { plan: 'pro' } },
      response: { shouldEndSession: false, outputSpeech: { type: 'SSML', ssml: '<speak>Which size?</speak>' } },
      intent: { name: 'AskSize', confidence: 0.8 },
    })
    expect(body).not.toHaveProperty('intent')
  })

  it('session-less requests take the user from context.System.user', () => {
    const { session: _s, ...noSession } = event
    expect(
      serializeAlexaIncoming({
        ...noSession,
        request: { type: 'AudioPlayer.PlaybackStarted', requestId: 'r', timestamp: 't' },
      }).userId,
    ).toBe('amzn1.ask.account.U1')
  })
})

describe('events (spec: Event record)', () => {
  it.each([
    [{ type: 'customEvent', name: 'signup', userId: 'u', extraInfo: { plan: 'pro' } }],
    [{ type: 'revenueEvent', name: 'buy', userId: 'u', amount: 9.99, referenceNumber: 'R1', metadata: { sku: 'x' } }],
    [{ type: 'shareEvent', name: 'share', userId: 'u', sharedMessage: { text: 'look' } }],
    [{ type: 'pageLaunchEvent', name: 'launch', userId: 'u', extraInfo: { url: 'https://x' } }],
    [
      {
        type: 'referralEvent',
        name: 'ref',
        userId: 'u',
        ref: 'tag',
        source: 'ADS',
        adid: 'ad1',
        refereruri: 'https://r',
      },
    ],
  ])('%j is sent as given', (event) => {
    expect(serializeEvent(event as never).body).toEqual(event)
  })

  it('referral aliases ad_id / referer_uri are sent as adid / refereruri', () => {
    expect(
      serializeEvent({ type: 'referralEvent', name: 'r', userId: 'u', ad_id: 'a', referer_uri: 'https://r' }).body,
    ).toEqual({
      type: 'referralEvent',
      name: 'r',
      userId: 'u',
      adid: 'a',
      refereruri: 'https://r',
    })
  })

  it.each([
    [{ type: 'revenueEvent', name: 'buy', userId: 'u' }, 'amount'],
    [{ type: 'revenueEvent', name: 'buy', userId: 'u', amount: Number.NaN }, 'amount'],
    [{ type: 'revenueEvent', name: 'buy', userId: 'u', amount: '3' }, 'amount'],
    [{ type: 'nope', name: 'x', userId: 'u' }, 'type'],
    [{ type: 'customEvent', userId: 'u' }, 'name'],
    [{ type: 'customEvent', name: 'x' }, 'userId'],
  ])('%j is rejected naming %s', (event, path) => {
    expect(() => serializeEvent(event as never)).toThrow(expect.objectContaining({ path }))
  })
})
