import { ANONYMOUS_USER, normalizeRecord, parseTrackQuery, RequestError, validateRecord } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { messengerIncoming, messengerOutgoing, slackOutgoing } from './fixtures'

/** The legacy layer, case by case (the README's table): strict with the spec's `v`, lenient with the SDK's. */

const SPEC = '11.1.0-rest'
const SDK = '12.1.0-npm'

function refusal(fn: () => void): { code: string; path: string } {
  try {
    fn()
  } catch (e) {
    if (e instanceof RequestError) return { code: e.code, path: e.path }
    throw e
  }
  throw new Error('accepted')
}

describe('query: v recorded, not whitelisted; SDK platforms and types only with an SDK v', () => {
  it.each(['12.1.0-npm', '12.1.0-botkit', '12.1.0-kiknpm', '12.1.0-rest', '9.0.0-custom'])('v=%s accepted', (v) => {
    expect(parseTrackQuery(new URLSearchParams(`platform=universal&type=incoming&v=${v}&apiKey=k`)).v).toBe(v)
  })
  it.each(['12.1.0', 'latest', '12.1-npm', ''])('v=%s refused (invalid_version)', (v) => {
    expect(
      refusal(() => parseTrackQuery(new URLSearchParams(`platform=universal&type=incoming&v=${v}&apiKey=k`))),
    ).toEqual({
      code: 'invalid_version',
      path: 'v',
    })
  })
  it.each(['microsoft', 'webchat', 'botcopy', 'recast', 'skype', 'viber', 'wechat'])(
    'platform=%s with an SDK v',
    (p) => {
      expect(parseTrackQuery(new URLSearchParams(`platform=${p}&type=incoming&v=${SDK}&apiKey=k`)).platform).toBe(p)
      expect(
        refusal(() => parseTrackQuery(new URLSearchParams(`platform=${p}&type=incoming&v=${SPEC}&apiKey=k`))).code,
      ).toBe('invalid_platform')
    },
  )
  it('type=all and type=connect with an SDK v', () => {
    for (const type of ['all', 'connect'])
      expect(parseTrackQuery(new URLSearchParams(`platform=facebook&type=${type}&v=${SDK}&apiKey=k`)).type).toBe(type)
  })
})

describe('bodies the spec refuses, accepted from the SDK (and still refused with the spec’s v)', () => {
  const botkitIncoming = {
    object: 'page',
    entry: [
      { time: 1, messaging: [{ sender: { id: 'u1' }, timestamp: 1, message: { text: 'hi', seq: 1, mid: 'm' } }] },
    ],
  }
  const botkitOutgoing = {
    qs: { access_token: 't' },
    json: { recipient: { id: 'u1' }, message: { text: 'yo' } },
    responseBody: null,
  }
  const postMessage = { ...slackOutgoing(), message: { text: 'reply', as_user: true, channel: 'D1' } }
  const lineImage = {
    text: '[image: https://x/cat.png]',
    userId: 'U1',
    images: [{ image: { url: 'https://x/cat.png' } }],
  }
  const pageLaunch = { type: 'pageLaunchEvent', userId: 'u1' }
  const alexaNoVersion = {
    event: {
      version: '1.0',
      session: { sessionId: 's', application: { applicationId: 'a' }, user: { userId: 'u' } },
      request: { type: 'IntentRequest', requestId: 'r', timestamp: '2019-10-10T10:10:10Z' },
    },
    response: { response: {} },
  }

  it.each([
    ['Botkit Messenger receive', 'facebook', 'incoming', botkitIncoming, 'entry[0].id'],
    ['Botkit Messenger send', 'facebook', 'outgoing', botkitOutgoing, 'uri'],
    ['Slack chat.postMessage reply', 'slack', 'outgoing', postMessage, 'message.type'],
    ['LINE image reply', 'generic', 'outgoing', lineImage, 'images[0]'],
    ['page-launch helper without name', 'facebook', 'event', pageLaunch, 'name'],
    ['alexa response without version', 'alexa', 'outgoing', alexaNoVersion, 'response.version'],
  ] as const)('%s', (_label, platform, type, body, strictPath) => {
    expect(() => validateRecord(platform, type, body, SDK)).not.toThrow()
    expect(refusal(() => validateRecord(platform, type, body, SPEC)).path).toBe(strictPath)
  })

  it('what no legacy rule covers keeps the spec’s error', () => {
    expect(refusal(() => validateRecord('facebook', 'outgoing', messengerIncoming(), SDK))).toEqual({
      code: 'missing_field',
      path: 'uri',
    })
    expect(refusal(() => validateRecord('facebook', 'event', { type: 'customEvent', userId: 'u' }, SDK)).path).toBe(
      'name',
    )
    expect(refusal(() => validateRecord('google', 'incoming', { text: 'hi', userId: 'u' }, SDK)).code).toBe(
      'unsupported_record',
    )
    expect(() => validateRecord('facebook', 'outgoing', messengerOutgoing(), SDK)).not.toThrow()
  })
})

describe('a universal message without userId (the SDK’s own generic-with-intent-params.json)', () => {
  const body = {
    text: 'this is some text and a PHONE_NUMBER',
    intent: { name: 'GOOD', inputs: [{ name: 'zip', value: '94114' }] },
  }

  it.each(['universal', 'generic', 'sms'] as const)(
    '%s: stored under the labelled anonymous user with an SDK v',
    (platform) => {
      for (const type of ['incoming', 'outgoing'] as const) {
        expect(() => validateRecord(platform, type, body, SDK)).not.toThrow()
        expect(normalizeRecord(platform, type, body)[0]).toMatchObject({
          userId: ANONYMOUS_USER,
          thread: ANONYMOUS_USER,
          text: body.text,
          intent: 'GOOD',
        })
      }
      expect(ANONYMOUS_USER).toBe('anonymous (no userId sent)')
    },
  )

  it('the spec’s versions still refuse it, naming userId; a wrong-typed userId stays refused with an SDK v', () => {
    expect(refusal(() => validateRecord('universal', 'incoming', body, SPEC))).toEqual({
      code: 'missing_field',
      path: 'userId',
    })
    expect(refusal(() => validateRecord('universal', 'incoming', { ...body, userId: 7 }, SDK)).path).toBe('userId')
    expect(refusal(() => validateRecord('universal', 'event', { type: 'customEvent', name: 'x' }, SDK)).path).toBe(
      'userId',
    )
  })
})

describe('normalization of the SDK shapes', () => {
  it('connect is no message; event helpers get a name from their type', () => {
    expect(normalizeRecord('slack', 'connect', { self: { id: 'B' } })).toEqual([])
    expect(
      normalizeRecord('facebook', 'event', { type: 'revenueEvent', userId: 'u', amount: 2 })[0]?.event,
    ).toMatchObject({
      name: 'revenue',
      amount: 2,
    })
  })
  it('a Bot Framework Activity is a universal message of the human side; other activities are kept raw', () => {
    const activity = {
      type: 'message',
      text: 'hi',
      from: { id: 'user1', name: 'User1' },
      recipient: { id: 'bot' },
      conversation: { id: 'conv1' },
      luisResults: { intents: { Greeting: { score: 0.9 }, None: { score: 0.1 } } },
    }
    expect(normalizeRecord('microsoft', 'incoming', activity)[0]).toMatchObject({
      direction: 'incoming',
      userId: 'user1',
      thread: 'conv1',
      text: 'hi',
      intent: 'Greeting',
      confidence: 0.9,
    })
    expect(normalizeRecord('microsoft', 'incoming', { ...activity, type: 'conversationUpdate' })).toEqual([])
  })
  it('a google record with nothing readable is kept raw (no message)', () => {
    expect(normalizeRecord('google', 'incoming', { dashbot_timestamp: 1, request_body: { foo: 1 } })).toEqual([])
  })
})
