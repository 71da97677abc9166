import { type Collector, startCollector } from '@convotrack/collector'
import { createTracker } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  alexaEnvelope,
  alexaIncoming,
  alexaOutgoing,
  events,
  GOOD,
  kikIncoming,
  kikOutgoing,
  messengerIncoming,
  messengerOutgoing,
  slackIncoming,
  slackOutgoing,
  twitterIncoming,
  twitterOutgoing,
  universalIncoming,
  universalOutgoing,
} from './fixtures'

type Obj = Record<string, unknown>

let collector: Collector

beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    maxBodyBytes: 8192,
    bots: [{ name: 'shop', apiKey: 'shop-key' }],
  })
})
afterAll(async () => {
  await collector.close()
})

async function post(query: string, body: string, contentType: string | null = 'application/json') {
  const headers: Record<string, string> = {}
  if (contentType !== null) headers['content-type'] = contentType
  const res = await fetch(`${collector.url}/track?${query}`, { method: 'POST', headers, body })
  return { status: res.status, body: (await res.json()) as Obj }
}

const track = (platform: string, type: string, body: unknown, v = '11.1.0-rest', apiKey = 'shop-key') =>
  post(`platform=${platform}&type=${type}&v=${v}&apiKey=${apiKey}`, JSON.stringify(body))

/** A copy of `body` with `path` set to `value` (`undefined` deletes it). */
function change(body: Obj, path: string, value: unknown): Obj {
  const copy = structuredClone(body)
  const parts = path.replace(/\[(\d+)\]/g, '.$1').split('.')
  let cur = copy as Record<string, unknown>
  for (const p of parts.slice(0, -1)) cur = cur[p] as Record<string, unknown>
  const last = parts.at(-1) as string
  if (value === undefined) delete cur[last]
  else cur[last] = value
  return copy
}

describe('POST /track: good records of every platform and type → 201 { id }', () => {
  it.each(GOOD)('%s %s', async (platform, type, body) => {
    const res = await track(platform, type, body())
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id: expect.any(Number) })
    // Stored with the raw JSON exactly as posted.
    const stored = await (await fetch(`${collector.url}/api/records/${res.body.id}`)).json()
    expect(stored).toMatchObject({ bot: 'shop', platform, type, v: '11.1.0-rest', raw: body() })
  })

  it.each([
    ['v=10.1.1-rest', 'universal', 'incoming', universalIncoming(), '10.1.1-rest'],
    ['a session-less voice request (user in context.System)', 'alexa', 'incoming', sessionless(), '11.1.0-rest'],
    ['a messenger postback (no message)', 'facebook', 'incoming', postback(), '11.1.0-rest'],
    ['a kik picture without body', 'kik', 'incoming', change(kikIncoming(), 'message.body', undefined), '11.1.0-rest'],
    [
      'a slack bot message without user',
      'slack',
      'incoming',
      change(slackIncoming(), 'message.user', undefined),
      '11.1.0-rest',
    ],
    [
      'referral aliases ad_id / referer_uri',
      'facebook',
      'event',
      { ...events.referralEvent(), ad_id: 'a', referer_uri: 'https://x' },
      '11.1.0-rest',
    ],
  ])('accepts %s', async (_label, platform, type, body, v) => {
    expect((await track(platform, type, body, v)).status).toBe(201)
  })

  it('accepts application/json with a charset', async () => {
    const res = await post(
      'platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key',
      JSON.stringify(universalIncoming()),
      'application/json; charset=utf-8',
    )
    expect(res.status).toBe(201)
  })
})

function sessionless(): Obj {
  const { session: _s, ...event } = alexaEnvelope()
  return { event: { ...event, context: { System: { user: { userId: 'amzn1.ask.account.X' } } } } }
}

function postback(): Obj {
  const body = messengerIncoming()
  return change(change(body, 'entry[0].messaging[0].message', undefined), 'entry[0].messaging[0].postback', {
    title: 'Start',
    payload: 'START',
  })
}

const Q = 'platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key'
const GOOD_BODY = JSON.stringify(universalIncoming())

describe('POST /track: query, key, media type, size, JSON', () => {
  it.each([
    [
      'no platform',
      'type=incoming&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_platform',
      'platform',
    ],
    [
      'unknown platform',
      'platform=whatsapp&type=incoming&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_platform',
      'platform',
    ],
    [
      'platform in the wrong case',
      'platform=Slack&type=incoming&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_platform',
      'platform',
    ],
    [
      'no type',
      'platform=universal&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_type',
      'type',
    ],
    [
      'unknown type',
      'platform=universal&type=message&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_type',
      'type',
    ],
    [
      'no v',
      'platform=universal&type=incoming&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_version',
      'v',
    ],
    [
      'v not a MAJOR.MINOR.PATCH-suffix version',
      'platform=universal&type=incoming&v=latest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_version',
      'v',
    ],
    [
      'a dashbot SDK platform with a spec version (convotrack trackers stay strict)',
      'platform=webchat&type=incoming&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_platform',
      'platform',
    ],
    [
      'a dashbot SDK type with a spec version',
      'platform=facebook&type=all&v=11.1.0-rest&apiKey=shop-key',
      GOOD_BODY,
      'application/json',
      400,
      'invalid_type',
      'type',
    ],
    [
      'no apiKey',
      'platform=universal&type=incoming&v=11.1.0-rest',
      GOOD_BODY,
      'application/json',
      401,
      'missing_api_key',
      'apiKey',
    ],
    [
      'unknown apiKey',
      'platform=universal&type=incoming&v=11.1.0-rest&apiKey=nope',
      GOOD_BODY,
      'application/json',
      401,
      'invalid_api_key',
      'apiKey',
    ],
    ['text/plain', Q, GOOD_BODY, 'text/plain', 415, 'unsupported_media_type', 'content-type'],
    ['form encoded', Q, 'text=hi', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type', 'content-type'],
    [
      'over the size limit',
      Q,
      JSON.stringify({ ...universalIncoming(), text: 'x'.repeat(9000) }),
      'application/json',
      413,
      'payload_too_large',
      '',
    ],
    ['broken JSON', Q, '{"text": "hi", ', 'application/json', 400, 'invalid_json', ''],
    ['an array body', Q, '[]', 'application/json', 400, 'invalid_field', ''],
    ['a null body', Q, 'null', 'application/json', 400, 'invalid_field', ''],
  ])('%s → %i', async (_label, query, body, contentType, status, code, path) => {
    const res = await post(query, body, contentType)
    expect(res.status).toBe(status)
    expect(res.body).toEqual({ error: { code, message: expect.any(String), path } })
  })

  it('no Content-Type → 415', async () => {
    const res = await post(Q, GOOD_BODY, null)
    expect(res.status).toBe(415)
    expect((res.body.error as Obj).code).toBe('unsupported_media_type')
  })

  it('the tracking key never appears in an error', async () => {
    const res = await post('platform=universal&type=incoming&v=11.1.0-rest&apiKey=sekrit-key-123', GOOD_BODY)
    expect(JSON.stringify(res.body)).not.toContain('sekrit-key-123')
  })

  it('refused records are not stored', async () => {
    const before = await collector.store.counts()
    await track('universal', 'incoming', { text: 'no user' })
    await post('platform=universal&type=incoming&v=11.1.0-rest&apiKey=nope', GOOD_BODY)
    expect(await collector.store.counts()).toEqual(before)
  })
})

type Bad = [label: string, platform: string, type: string, body: unknown, code: string, path: string]

const BAD: Bad[] = [
  // universal / generic / sms (spec: Universal message, rule 4.2.1)
  ['text missing', 'universal', 'incoming', change(universalIncoming(), 'text', undefined), 'missing_field', 'text'],
  ['text a number', 'universal', 'outgoing', change(universalOutgoing(), 'text', 5), 'invalid_field', 'text'],
  [
    'userId missing',
    'generic',
    'incoming',
    change(universalIncoming(), 'userId', undefined),
    'missing_field',
    'userId',
  ],
  ['userId empty', 'sms', 'incoming', change(universalIncoming(), 'userId', ''), 'invalid_field', 'userId'],
  [
    'conversationId a number',
    'universal',
    'incoming',
    change(universalIncoming(), 'conversationId', 5),
    'invalid_field',
    'conversationId',
  ],
  [
    'intent without name',
    'universal',
    'incoming',
    change(universalIncoming(), 'intent.name', undefined),
    'missing_field',
    'intent.name',
  ],
  [
    'intent confidence 1.5',
    'sms',
    'outgoing',
    { ...universalOutgoing(), intent: { name: 'x', confidence: 1.5 } },
    'invalid_field',
    'intent.confidence',
  ],
  [
    'intent input value a number',
    'universal',
    'incoming',
    change(universalIncoming(), 'intent.inputs[0].value', 3),
    'invalid_field',
    'intent.inputs[0].value',
  ],
  [
    'button label missing',
    'universal',
    'outgoing',
    change(universalOutgoing(), 'buttons[0].label', undefined),
    'missing_field',
    'buttons[0].label',
  ],
  [
    'image without url',
    'universal',
    'outgoing',
    change(universalOutgoing(), 'images[0]', { href: 'x' }),
    'invalid_field',
    'images[0]',
  ],
  [
    'postback without buttonClick',
    'universal',
    'incoming',
    { ...universalIncoming(), postback: {} },
    'missing_field',
    'postback.buttonClick',
  ],
  [
    'platformUserJson a string',
    'generic',
    'outgoing',
    { ...universalOutgoing(), platformUserJson: 'Ada' },
    'invalid_field',
    'platformUserJson',
  ],
  [
    'platformJson an array',
    'sms',
    'incoming',
    { ...universalIncoming(), platformJson: [] },
    'invalid_field',
    'platformJson',
  ],
  // twitter (universal shape with the DM payload in platformJson)
  [
    'twitter userId missing',
    'twitter',
    'incoming',
    change(twitterIncoming(), 'userId', undefined),
    'missing_field',
    'userId',
  ],
  [
    'twitter text missing',
    'twitter',
    'outgoing',
    change(twitterOutgoing(), 'text', undefined),
    'missing_field',
    'text',
  ],
  [
    'twitter DM events not an array',
    'twitter',
    'incoming',
    change(twitterIncoming(), 'platformJson.direct_message_events', {}),
    'invalid_field',
    'platformJson.direct_message_events',
  ],
  // messenger incoming (spec: Social messenger, incoming; intent inside each messaging item)
  [
    'intent at the root',
    'facebook',
    'incoming',
    { ...messengerIncoming(), intent: { name: 'x' } },
    'misplaced_intent',
    'intent',
  ],
  [
    'object missing',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'object', undefined),
    'missing_field',
    'object',
  ],
  ['entry missing', 'facebook', 'incoming', change(messengerIncoming(), 'entry', undefined), 'missing_field', 'entry'],
  ['entry empty', 'facebook', 'incoming', change(messengerIncoming(), 'entry', []), 'invalid_field', 'entry'],
  [
    'entry id missing',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].id', undefined),
    'missing_field',
    'entry[0].id',
  ],
  [
    'entry time a string',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].time', 'now'),
    'invalid_field',
    'entry[0].time',
  ],
  [
    'messaging missing',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging', undefined),
    'missing_field',
    'entry[0].messaging',
  ],
  [
    'sender id missing',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging[0].sender.id', undefined),
    'missing_field',
    'entry[0].messaging[0].sender.id',
  ],
  [
    'recipient missing',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging[0].recipient', undefined),
    'missing_field',
    'entry[0].messaging[0].recipient',
  ],
  [
    'timestamp missing',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging[0].timestamp', undefined),
    'missing_field',
    'entry[0].messaging[0].timestamp',
  ],
  [
    'message text a number',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging[0].message.text', 1),
    'invalid_field',
    'entry[0].messaging[0].message.text',
  ],
  [
    'item intent without name',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging[0].intent', {}),
    'missing_field',
    'entry[0].messaging[0].intent.name',
  ],
  [
    'item platformUserJson an array',
    'facebook',
    'incoming',
    change(messengerIncoming(), 'entry[0].messaging[0].platformUserJson', []),
    'invalid_field',
    'entry[0].messaging[0].platformUserJson',
  ],
  // messenger outgoing (spec: Social messenger, outgoing)
  [
    'uri and url missing',
    'facebook',
    'outgoing',
    change(messengerOutgoing(), 'uri', undefined),
    'missing_field',
    'uri',
  ],
  ['json missing', 'facebook', 'outgoing', change(messengerOutgoing(), 'json', undefined), 'missing_field', 'json'],
  [
    'recipient id missing',
    'facebook',
    'outgoing',
    change(messengerOutgoing(), 'json.recipient.id', undefined),
    'missing_field',
    'json.recipient.id',
  ],
  [
    'responseBody missing',
    'facebook',
    'outgoing',
    change(messengerOutgoing(), 'responseBody', undefined),
    'missing_field',
    'responseBody',
  ],
  [
    'outgoing intent confidence −1',
    'facebook',
    'outgoing',
    change(messengerOutgoing(), 'intent', { name: 'x', confidence: -1 }),
    'invalid_field',
    'intent.confidence',
  ],
  ['a webhook body posted as outgoing', 'facebook', 'outgoing', messengerIncoming(), 'missing_field', 'uri'],
  // slack (spec: Team chat)
  ['team missing', 'slack', 'incoming', change(slackIncoming(), 'team', undefined), 'missing_field', 'team'],
  ['team id empty', 'slack', 'incoming', change(slackIncoming(), 'team.id', ''), 'invalid_field', 'team.id'],
  ['bot id missing', 'slack', 'outgoing', change(slackOutgoing(), 'bot.id', undefined), 'missing_field', 'bot.id'],
  ['message missing', 'slack', 'incoming', change(slackIncoming(), 'message', undefined), 'missing_field', 'message'],
  [
    'message type missing',
    'slack',
    'incoming',
    change(slackIncoming(), 'message.type', undefined),
    'missing_field',
    'message.type',
  ],
  [
    'channel missing',
    'slack',
    'outgoing',
    change(slackOutgoing(), 'message.channel', undefined),
    'missing_field',
    'message.channel',
  ],
  [
    'slack text a number',
    'slack',
    'outgoing',
    change(slackOutgoing(), 'message.text', 1),
    'invalid_field',
    'message.text',
  ],
  [
    'slack intent name a number',
    'slack',
    'incoming',
    change(slackIncoming(), 'intent.name', 1),
    'invalid_field',
    'intent.name',
  ],
  // kik (spec: Mobile chat)
  ['username missing', 'kik', 'incoming', change(kikIncoming(), 'username', undefined), 'missing_field', 'username'],
  [
    'incoming from missing',
    'kik',
    'incoming',
    change(kikIncoming(), 'message.from', undefined),
    'missing_field',
    'message.from',
  ],
  [
    'outgoing to missing',
    'kik',
    'outgoing',
    change(kikOutgoing(), 'message.to', undefined),
    'missing_field',
    'message.to',
  ],
  ['an outgoing record posted as incoming', 'kik', 'incoming', kikOutgoing(), 'missing_field', 'message.from'],
  [
    'kik message type missing',
    'kik',
    'outgoing',
    change(kikOutgoing(), 'message.type', undefined),
    'missing_field',
    'message.type',
  ],
  [
    'participants not strings',
    'kik',
    'incoming',
    change(kikIncoming(), 'message.participants', [1]),
    'invalid_field',
    'message.participants[0]',
  ],
  [
    'mention a number',
    'kik',
    'incoming',
    change(kikIncoming(), 'message.mention', 5),
    'invalid_field',
    'message.mention',
  ],
  [
    'readReceiptRequested a string',
    'kik',
    'incoming',
    change(kikIncoming(), 'message.readReceiptRequested', 'yes'),
    'invalid_field',
    'message.readReceiptRequested',
  ],
  // alexa (spec: Voice assistant; outgoing intent inside `response`)
  ['event missing', 'alexa', 'incoming', {}, 'missing_field', 'event'],
  [
    'event version missing',
    'alexa',
    'incoming',
    change(alexaIncoming(), 'event.version', undefined),
    'missing_field',
    'event.version',
  ],
  [
    'requestId missing',
    'alexa',
    'incoming',
    change(alexaIncoming(), 'event.request.requestId', undefined),
    'missing_field',
    'event.request.requestId',
  ],
  [
    'timestamp not ISO 8601',
    'alexa',
    'incoming',
    change(alexaIncoming(), 'event.request.timestamp', 'yesterday'),
    'invalid_field',
    'event.request.timestamp',
  ],
  [
    'voice user missing',
    'alexa',
    'incoming',
    change(alexaIncoming(), 'event.session.user.userId', undefined),
    'missing_field',
    'event.session.user.userId',
  ],
  [
    'no session and no context user',
    'alexa',
    'incoming',
    change(alexaIncoming(), 'event.session', undefined),
    'missing_field',
    'event.session',
  ],
  [
    'serviceUser not an object',
    'alexa',
    'incoming',
    change(alexaIncoming(), 'event.session.attributes.serviceUser', 'x'),
    'invalid_field',
    'event.session.attributes.serviceUser',
  ],
  [
    'incoming intent confidence 2',
    'alexa',
    'incoming',
    { ...alexaIncoming(), intent: { name: 'NotHandled', confidence: 2 } },
    'invalid_field',
    'intent.confidence',
  ],
  [
    'outgoing intent at the root',
    'alexa',
    'outgoing',
    { ...alexaOutgoing(), intent: { name: 'x' } },
    'misplaced_intent',
    'intent',
  ],
  [
    'response missing',
    'alexa',
    'outgoing',
    change(alexaOutgoing(), 'response', undefined),
    'missing_field',
    'response',
  ],
  [
    'inner response missing',
    'alexa',
    'outgoing',
    change(alexaOutgoing(), 'response.response', undefined),
    'missing_field',
    'response.response',
  ],
  [
    'response intent without name',
    'alexa',
    'outgoing',
    change(alexaOutgoing(), 'response.intent', { confidence: 1 }),
    'missing_field',
    'response.intent.name',
  ],
  [
    'outputSpeech type missing',
    'alexa',
    'outgoing',
    change(alexaOutgoing(), 'response.response.outputSpeech.type', undefined),
    'missing_field',
    'response.response.outputSpeech.type',
  ],
  [
    'service_timestamp a string',
    'alexa',
    'outgoing',
    change(alexaOutgoing(), 'service_timestamp', 'now'),
    'invalid_field',
    'service_timestamp',
  ],
  // google: events only
  ['google message', 'google', 'incoming', universalIncoming(), 'unsupported_record', 'type'],
  ['google outgoing', 'google', 'outgoing', universalOutgoing(), 'unsupported_record', 'type'],
  // events (spec: Event record, rule 4.2.4) — same on every platform
  ['event name missing', 'generic', 'event', change(events.customEvent(), 'name', undefined), 'missing_field', 'name'],
  [
    'event userId missing',
    'google',
    'event',
    change(events.customEvent(), 'userId', undefined),
    'missing_field',
    'userId',
  ],
  [
    'event type missing',
    'universal',
    'event',
    change(events.customEvent(), 'type', undefined),
    'missing_field',
    'type',
  ],
  [
    'event type unknown',
    'facebook',
    'event',
    change(events.customEvent(), 'type', 'clickEvent'),
    'invalid_field',
    'type',
  ],
  [
    'revenue without amount',
    'alexa',
    'event',
    change(events.revenueEvent(), 'amount', undefined),
    'missing_field',
    'amount',
  ],
  [
    'revenue amount a string',
    'generic',
    'event',
    change(events.revenueEvent(), 'amount', '19.99'),
    'invalid_field',
    'amount',
  ],
  [
    'revenue referenceNumber a number',
    'generic',
    'event',
    change(events.revenueEvent(), 'referenceNumber', 1),
    'invalid_field',
    'referenceNumber',
  ],
  [
    'custom extraInfo a string',
    'slack',
    'event',
    change(events.customEvent(), 'extraInfo', 'x'),
    'invalid_field',
    'extraInfo',
  ],
  [
    'share sharedMessage a string',
    'kik',
    'event',
    change(events.shareEvent(), 'sharedMessage', 'x'),
    'invalid_field',
    'sharedMessage',
  ],
  [
    'page launch extraInfo an array',
    'twitter',
    'event',
    change(events.pageLaunchEvent(), 'extraInfo', []),
    'invalid_field',
    'extraInfo',
  ],
  ['referral source a number', 'sms', 'event', change(events.referralEvent(), 'source', 5), 'invalid_field', 'source'],
  ['a message posted as an event', 'universal', 'event', universalIncoming(), 'missing_field', 'name'],
]

describe('POST /track: bad records → 400 naming the field', () => {
  it.each(BAD)('%s (%s %s)', async (_label, platform, type, body, code, path) => {
    const res = await track(platform, type, body)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: { code, message: expect.stringContaining(`\`${path}\``), path } })
  })
})

describe('normalization (bot, direction, userId, conversation, text, intent, buttons, images, user metadata)', () => {
  it.each([
    [
      'universal',
      'incoming',
      universalIncoming,
      {
        direction: 'incoming',
        userId: 'u-1',
        conversationId: 'conv-1',
        thread: 'conv-1',
        sessionId: 's-1',
        text: 'show me red shoes',
        intent: 'shop',
        confidence: 0.92,
        userJson: { firstName: 'Ada', locale: 'en_GB' },
      },
    ],
    [
      'universal',
      'outgoing',
      universalOutgoing,
      {
        direction: 'outgoing',
        userId: 'u-1',
        thread: 'conv-1',
        buttons: [{ label: 'Buy', value: 'buy' }],
        images: ['https://img.example/shoe.png', 'https://img.example/shoe2.png'],
      },
    ],
    ['twitter', 'incoming', twitterIncoming, { direction: 'incoming', userId: 'HUMAN', thread: 'HUMAN', text: 'hey' }],
    [
      'twitter',
      'outgoing',
      twitterOutgoing,
      { direction: 'outgoing', userId: 'HUMAN', thread: 'HUMAN', text: 'hello human' },
    ],
    [
      'facebook',
      'incoming',
      messengerIncoming,
      {
        direction: 'incoming',
        userId: 'PSID-1',
        conversationId: null,
        thread: 'PSID-1',
        text: 'hello there',
        intent: 'NotHandled',
        userJson: { gender: 'f' },
      },
    ],
    [
      'facebook',
      'outgoing',
      messengerOutgoing,
      {
        direction: 'outgoing',
        userId: 'PSID-1',
        thread: 'PSID-1',
        text: 'Pick one',
        intent: 'offer',
        buttons: [{ label: 'Red', value: 'RED' }],
      },
    ],
    [
      'slack',
      'incoming',
      slackIncoming,
      {
        direction: 'incoming',
        userId: 'U1',
        conversationId: 'C1',
        thread: 'C1',
        text: 'deploy status?',
        intent: 'status',
        confidence: 0.5,
      },
    ],
    [
      'slack',
      'outgoing',
      slackOutgoing,
      { direction: 'outgoing', userId: 'C1', conversationId: 'C1', thread: 'C1', text: 'all green' },
    ],
    [
      'kik',
      'incoming',
      kikIncoming,
      { direction: 'incoming', userId: 'kikuser', conversationId: 'chat-1', thread: 'chat-1', text: 'hi' },
    ],
    [
      'kik',
      'outgoing',
      kikOutgoing,
      { direction: 'outgoing', userId: 'kikuser', conversationId: 'chat-1', thread: 'chat-1', text: 'hello!' },
    ],
    [
      'alexa',
      'incoming',
      alexaIncoming,
      {
        direction: 'incoming',
        userId: 'amzn1.ask.account.USER',
        thread: 'amzn1.ask.account.USER',
        sessionId: 'amzn1.echo-api.session.1',
        text: 'OrderCoffee (size: large)',
        intent: 'OrderCoffee',
        userJson: { locale: 'de_DE' },
      },
    ],
    [
      'alexa',
      'outgoing',
      alexaOutgoing,
      {
        direction: 'outgoing',
        userId: 'amzn1.ask.account.USER',
        text: 'One large coffee?',
        intent: 'ConfirmOrder',
        confidence: 0.7,
      },
    ],
    [
      'generic',
      'event',
      events.revenueEvent,
      {
        direction: 'event',
        userId: 'u-1',
        text: 'purchase',
        event: { type: 'revenueEvent', name: 'purchase', amount: 19.99, body: events.revenueEvent() },
      },
    ],
  ] as Array<[string, string, () => Obj, Obj]>)('%s %s', async (platform, type, body, expected) => {
    const res = await track(platform, type, body())
    expect(res.status).toBe(201)
    const [m] = (await collector.store.recent({ afterId: 0, limit: 5000 })).filter((x) => x.recordId === res.body.id)
    expect(m).toMatchObject({ bot: 'shop', platform, ...expected })
  })

  it('a messenger body with several items gives one message each; echoes are outgoing to the recipient; receipts are skipped', async () => {
    const item = (sender: string, recipient: string, message?: Obj, extra: Obj = {}) => ({
      sender: { id: sender },
      recipient: { id: recipient },
      timestamp: 1,
      ...(message ? { message } : {}),
      ...extra,
    })
    const body = {
      object: 'page',
      entry: [
        {
          id: 'P',
          time: 1,
          messaging: [
            item('A', 'P', { mid: '1', text: 'one' }),
            item('P', 'B', { mid: '2', text: 'echo to B', is_echo: true }),
            item('A', 'P', undefined, { delivery: { mids: ['1'] } }),
          ],
        },
      ],
    }
    const res = await track('facebook', 'incoming', body)
    const got = (await collector.store.recent({ limit: 5000 })).filter((x) => x.recordId === res.body.id)
    expect(got.map((m) => [m.direction, m.userId, m.text])).toEqual([
      ['incoming', 'A', 'one'],
      ['outgoing', 'B', 'echo to B'],
    ])
  })
})

describe('a real core tracker delivers every channel to the collector', () => {
  it('every record is accepted (no error reported) and lands in the store', async () => {
    const errors: unknown[] = []
    const tracker = createTracker({ apiKey: 'shop-key', baseUrl: collector.url, onError: (e) => errors.push(e) })
    const before = (await collector.store.counts()).records
    tracker.universal.logIncoming({ text: 'hi', userId: 'tu' }, { notHandled: true, userMetadata: { plan: 'free' } })
    tracker.universal.logOutgoing({ text: 'hello', userId: 'tu' }, { intent: { name: 'greet', confidence: 0.9 } })
    tracker.sms.logIncoming({ text: 'sms', userId: '+15550001' })
    tracker.generic.logOutgoing({ text: 'generic', userId: 'g1' })
    tracker.twitter.logIncoming({
      for_user_id: 'BOT',
      direct_message_events: [
        {
          type: 'message_create',
          message_create: { target: { recipient_id: 'BOT' }, sender_id: 'H', message_data: { text: 'dm' } },
        },
      ],
    })
    tracker.messenger.logIncoming(messengerIncoming() as never)
    tracker.messenger.logOutgoing(
      { json: { recipient: { id: 'PSID-1' }, message: { text: 'ok' } } },
      { recipient_id: 'PSID-1', message_id: 'm' },
    )
    tracker.slack.logIncoming({
      team: { id: 'T' },
      bot: { id: 'B' },
      message: { type: 'message', channel: 'C', user: 'U', text: 'yo', ts: '1.1' },
    })
    tracker.slack.logOutgoing({
      team: { id: 'T' },
      bot: { id: 'B' },
      message: { type: 'message', channel: 'C', text: 'hey' },
    })
    tracker.kik.logIncoming({ username: 'b', message: { type: 'text', body: 'k', from: 'ku', chatId: 'kc' } })
    tracker.kik.logOutgoing({ username: 'b', message: { type: 'text', body: 'k2', to: 'ku', chatId: 'kc' } })
    tracker.alexa.logIncoming(alexaEnvelope(), { functionName: 'skill' })
    tracker.alexa.logOutgoing(
      alexaEnvelope(),
      { version: '1.0', response: { outputSpeech: { type: 'PlainText', text: 'Sure' } } },
      { intent: { name: 'Confirm' } },
    )
    for (const e of Object.values(events)) tracker.logEvent(e() as never, { platform: 'google' })
    const result = await tracker.close()
    expect(errors).toEqual([])
    expect(result).toMatchObject({ delivered: true, failed: 0 })
    expect((await collector.store.counts()).records - before).toBe(18)
  })

  it('a rejected record reaches onError with the collector’s error code in the message', async () => {
    const errors: Array<{ code: string; message: string; status?: number }> = []
    const tracker = createTracker({
      apiKey: 'wrong-key',
      baseUrl: collector.url,
      onError: (e) => errors.push(e as never),
    })
    tracker.universal.logIncoming({ text: 'hi', userId: 'x' })
    await tracker.close()
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ code: 'http_401', status: 401 })
    expect(errors[0]?.message).toContain('invalid_api_key')
  })
})
