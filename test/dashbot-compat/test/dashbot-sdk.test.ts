import { createServer, request, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { ANONYMOUS_USER, type Collector, type StoredMessage, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  AOG_V1_REQUEST,
  AOG_V1_RESPONSE,
  FACEBOOK_IN,
  GENERIC,
  GOOGLE_IN_REQUEST,
  GOOGLE_OUT,
  LINE_IN,
  RTM_START,
} from './sdk-payloads'

/**
 * The published dashbot SDK (npm `dashbot` 12.1.0), unchanged, pointed at a real collector on
 * 127.0.0.1 with its one setting (`serverRoot`): it posts with its own HTTP client
 * (isomorphic-fetch). Its examples' calls and its test data go in; what the read API shows is
 * checked.
 */

const require = createRequire(import.meta.url)
/** The SDK is untyped JavaScript. */
type Fn = (...args: any[]) => any
/** One platform object of the SDK (`dashbot(key).facebook`…): the calls its examples use. */
interface Channel {
  logIncoming: Fn
  logOutgoing: Fn
  setNotHandled: Fn
  logEvent: Fn
  log: Fn
  receive: Fn
  send: Fn
  logConnect: Fn
  configHandler: Fn
  logHandler: Fn
  handler: Fn
  middleware: Fn
  setFacebookToken: Fn
  eventUtil: Record<'createCustomEvent' | 'createPageLaunchEvent' | 'createShareEvent' | 'createRevenueEvent', Fn>
  messageUtil: { messageWithText: Fn }
}
type Sdk = Record<string, Channel>
const dashbot = require('dashbot') as (apiKey: string, config?: Record<string, unknown>) => Sdk
const data = (name: string) =>
  structuredClone(require(`dashbot/src/__tests__/data/${name}.json`)) as Record<string, unknown>
const { TestAdapter } = require('botbuilder-core') as typeof import('botbuilder-core')

/** Platform credentials the SDK puts in records: none may come back from the read API. */
const SECRETS = {
  pageToken: 'EAAB-page-token-secret',
  botkitPageToken: 'EAAB-botkit-token-secret',
  slackToken: 'xoxb-slack-token-secret',
  kikKey: 'kik-api-key-secret',
  alexaToken: 'alexa-api-access-token-secret',
  slackVerificationToken: 'slack-verification-token-secret',
}

const BOTS = ['universal', 'facebook', 'slack', 'kik', 'alexa', 'google', 'line', 'microsoft'] as const
type Bot = (typeof BOTS)[number]

let collector: Collector
/**
 * What the bots see as the tracking service: a pass-through to the collector that notes every
 * answer, so "every record accepted" is checked on the wire, call by call.
 */
let proxy: Server
let serverRoot: string
const wire: Array<{ query: string; status: number }> = []
let sdk: Record<Bot, Sdk>
const validationErrors: unknown[][] = []

beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    demoBot: false,
    bots: BOTS.map((name) => ({ name, apiKey: `${name}-key` })),
  })
  proxy = createServer((req, res) => {
    const upstream = request(
      new URL(req.url ?? '/', collector.url),
      { method: req.method, headers: req.headers },
      (answer) => {
        wire.push({ query: req.url ?? '', status: answer.statusCode ?? 0 })
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  serverRoot = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  sdk = Object.fromEntries(BOTS.map((name) => [name, dashbot(`${name}-key`, { serverRoot })])) as Record<Bot, Sdk>
  // With printErrors (its default) the SDK prints every 400 answer as "validation error".
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    if (args[0] === 'validation error: ') validationErrors.push(args)
  })
})
afterAll(async () => {
  vi.restoreAllMocks()
  await new Promise((resolve) => proxy?.close(resolve))
  await collector?.close()
})

async function get<T = unknown>(path: string): Promise<T> {
  const res = await fetch(`${collector.url}${path}`)
  expect(res.status).toBe(200)
  return (await res.json()) as T
}

/** Waits until the store holds `n` records: for SDK calls that return no promise. */
async function records(n: number): Promise<void> {
  await vi.waitFor(async () => expect((await collector.store.counts()).records).toBeGreaterThanOrEqual(n), {
    timeout: 60_000,
    interval: 20,
  })
  expect((await collector.store.counts()).records).toBe(n)
}
const count = async () => (await collector.store.counts()).records

/** The SDK's promise (printErrors on) resolves to the collector's answer. */
async function sent(call: unknown): Promise<void> {
  const res = (await call) as { status: number } | undefined
  expect(res?.status).toBe(201)
}

const transcript = async (bot: Bot, thread: string) =>
  (await get<{ messages: StoredMessage[] }>(`/api/transcript?bot=${bot}&thread=${encodeURIComponent(thread)}`)).messages
const lines = (messages: StoredMessage[]) => messages.map((m) => [m.direction, m.userId, m.text])
const notHandled = async (bot: Bot) =>
  (await get<Array<{ text: string; count: number }>>(`/api/reports/not-handled?bot=${bot}&all=1`)).map((l) => l.text)

describe('universal-shaped platforms (universal, generic, webchat, botcopy, sms, twitter, recast, skype, viber, wechat)', () => {
  const platforms = [
    'universal',
    'generic',
    'webchat',
    'botcopy',
    'sms',
    'twitter',
    'recast',
    'skype',
    'viber',
    'wechat',
  ]
  // examples/universal-example.js (and its webchat / botcopy / sms twins): the message as the example builds it.
  const example = (text: string, userId: string) => ({
    text,
    userId,
    platformUserJson: { first_name: 'Bob', last_name: 'Loblaw', gender: 'male', locale: 'en_US' },
    platformJson: { whateverJson: 'any JSON specific to your platform can be stored here' },
  })

  it.each(platforms)(
    '%s: question, answer, a NotHandled reply — in the transcript, with the platform kept',
    async (platform) => {
      const db = sdk.universal[platform] as Channel
      const user = `user-${platform}`
      await sent(db.logOutgoing(example('Tell me your thoughts: ', user)))
      await sent(db.logIncoming(example(`flibber ${platform}`, user)))
      db.setNotHandled()
      await sent(db.logOutgoing(example('Sorry, I did not get that.', user)))
      const messages = await transcript('universal', user)
      expect(lines(messages)).toEqual([
        ['outgoing', user, 'Tell me your thoughts: '],
        ['incoming', user, `flibber ${platform}`],
        ['outgoing', user, 'Sorry, I did not get that.'],
      ])
      expect(messages.map((m) => m.platform)).toEqual([platform, platform, platform])
      expect(messages[1]?.userJson).toMatchObject({ first_name: 'Bob' })
      expect(messages[2]?.intent).toBe('NotHandled')
      // setNotHandled() marked the reply; the report counts the input it answered.
      expect(await notHandled('universal')).toContain(`flibber ${platform}`)
      const record = await get<{ v: string; platform: string }>(`/api/records/${messages[1]?.recordId}`)
      expect(record).toMatchObject({ v: '12.1.0-npm', platform })
    },
  )

  it('generic-example-textonly / live-takeover: messageUtil.messageWithText', async () => {
    const db = sdk.universal.generic as Channel
    const util = db.messageUtil
    await sent(db.logOutgoing(util.messageWithText('USERIDHERE111', 'Tell me your thoughts: ')))
    await sent(db.logIncoming(util.messageWithText('USERIDHERE111', 'quit')))
    expect(lines(await transcript('universal', 'USERIDHERE111'))).toEqual([
      ['outgoing', 'USERIDHERE111', 'Tell me your thoughts: '],
      ['incoming', 'USERIDHERE111', 'quit'],
    ])
  })

  it('the redactor test payloads: GENERIC accepted; generic-with-intent-params.json (no userId) stored under the anonymous user', async () => {
    const db = sdk.universal.generic as Channel
    await sent(db.logIncoming(GENERIC))
    expect(lines(await transcript('universal', GENERIC.userId))).toEqual([['incoming', GENERIC.userId, GENERIC.text]])
    const before = validationErrors.length
    await sent(db.logIncoming(data('generic-with-intent-params')))
    expect(validationErrors.length).toBe(before)
    expect(lines(await transcript('universal', ANONYMOUS_USER))).toEqual([
      ['incoming', ANONYMOUS_USER, 'this is some text and a PHONE_NUMBER'],
    ])
  })
})

describe('facebook (Messenger)', () => {
  const fb = () => sdk.facebook.facebook as Channel
  const send = (recipient: string, text: string) => ({
    url: 'https://graph.facebook.com/v2.6/me/messages',
    qs: { access_token: SECRETS.pageToken },
    method: 'POST',
    json: { dashbotTemplateId: 'right', recipient: { id: recipient }, message: { text } },
  })

  it('facebook-example.js: logIncoming(webhook body), logOutgoing(request, response), setNotHandled, logEvent', async () => {
    const user = FACEBOOK_IN.entry[0]?.messaging[0]?.sender.id as string
    await sent(fb().logIncoming(FACEBOOK_IN))
    await sent(
      fb().logOutgoing(send(user, 'You are right when you say: 2222222222222222'), {
        recipient_id: user,
        message_id: 'mid.1',
      }),
    )
    await sent(
      fb().logIncoming({
        ...FACEBOOK_IN,
        entry: [
          {
            ...FACEBOOK_IN.entry[0],
            messaging: [{ ...FACEBOOK_IN.entry[0]?.messaging[0], message: { mid: 'm2', seq: 2, text: 'blorp' } }],
          },
        ],
      }),
    )
    fb().setNotHandled()
    await sent(fb().logOutgoing(send(user, 'Sorry?'), { recipient_id: user, message_id: 'mid.2' }))
    const util = fb().eventUtil
    await sent(fb().logEvent(util.createCustomEvent('functionTiming', user, user, { start: 1, end: 2, difference: 1 })))
    await sent(fb().logEvent(util.createPageLaunchEvent(user, user)))
    await sent(fb().logEvent(util.createShareEvent(user, user, { text: 'look' })))
    await sent(fb().logEvent(util.createRevenueEvent(user, user, 9.99, 'ref-1', { sku: 'x' })))
    // In event time: the SDK's sample webhook bodies carry their 2016 `timestamp`s, the replies
    // (no time of their own) the collector's clock.
    expect(lines((await transcript('facebook', user)).filter((m) => m.direction !== 'event'))).toEqual([
      ['incoming', user, '2222222222222222'],
      ['incoming', user, 'blorp'],
      ['outgoing', user, 'You are right when you say: 2222222222222222'],
      ['outgoing', user, 'Sorry?'],
    ])
    expect(await notHandled('facebook')).toEqual(['blorp'])
    const events = await get<Record<string, unknown>>('/api/reports/events?bot=facebook')
    expect(events).toMatchObject({
      custom: [{ name: 'functionTiming', count: 1 }],
      revenue: { total: 9.99, count: 1, byName: [{ name: 'revenue', total: 9.99, count: 1 }] },
      shares: { count: 1, byName: [{ name: 'share', count: 1 }] },
      pageLaunches: [{ page: 'pageLaunch', count: 1 }],
    })
  })

  it('facebook-example-full.js with FACEBOOK_IS_ECHO: log(body) sends type=all; echoes are the bot’s replies', async () => {
    const n = await count()
    const body = {
      object: 'page',
      entry: [
        {
          id: 'PAGE',
          time: 1,
          messaging: [
            {
              sender: { id: 'echo-user' },
              recipient: { id: 'PAGE' },
              timestamp: 1,
              message: { mid: 'a', text: 'hello page' },
            },
            {
              sender: { id: 'PAGE' },
              recipient: { id: 'echo-user' },
              timestamp: 2,
              message: { mid: 'b', text: 'hello human', is_echo: true },
            },
            { sender: { id: 'echo-user' }, recipient: { id: 'PAGE' }, delivery: { mids: ['b'] } },
          ],
        },
      ],
    }
    await sent(fb().log(body))
    await records(n + 1)
    expect(lines(await transcript('facebook', 'echo-user'))).toEqual([
      ['incoming', 'echo-user', 'hello page'],
      ['outgoing', 'echo-user', 'hello human'],
    ])
  })

  it('facebook-example-botkit.js: receive / send middleware (no entry id, no recipient, no uri, responseBody null)', async () => {
    const n = await count()
    const bot = { botkit: { config: { access_token: SECRETS.botkitPageToken } } }
    const next = vi.fn()
    fb().receive(
      bot,
      { user: 'botkit-user', channel: 'botkit-user', timestamp: 1509404263587, text: 'hi botkit', seq: 1, mid: 'm' },
      next,
    )
    await records(n + 1)
    fb().send(bot, { channel: 'botkit-user', text: 'Welcome to my app!' }, next)
    await records(n + 2)
    expect(next).toHaveBeenCalledTimes(2)
    expect(lines(await transcript('facebook', 'botkit-user'))).toEqual([
      ['incoming', 'botkit-user', 'hi botkit'],
      ['outgoing', 'botkit-user', 'Welcome to my app!'],
    ])
  })
})

describe('slack', () => {
  const sl = () => sdk.slack.slack as Channel
  const bot = RTM_START.self
  const team = RTM_START.team

  it('slack-example-no-botkit.js: logConnect, RTM events, replies on the socket and through chat.postMessage', async () => {
    const n = await count()
    await sent(sl().logConnect(RTM_START))
    await sent(sl().logIncoming(bot, team, { type: 'hello' }))
    await sent(
      sl().logIncoming(bot, team, {
        type: 'message',
        channel: 'D0DM',
        user: 'U0USER',
        text: 'deploy?',
        ts: '1.1',
        team: 'T0TEAM',
      }),
    )
    await sent(
      sl().logOutgoing(bot, team, { type: 'message', text: 'You are right when you say: deploy?', channel: 'D0DM' }),
    )
    await sent(
      sl().logIncoming(bot, team, { type: 'message', channel: 'D0DM', user: 'U0USER', text: 'odd', ts: '1.2' }),
    )
    // chat.postMessage form: no `type`.
    await sent(sl().logOutgoing(bot, team, { text: 'You are wrong when you say: odd', as_user: true, channel: 'D0DM' }))
    await records(n + 6)
    const messages = await transcript('slack', 'D0DM')
    expect(lines(messages)).toEqual([
      ['incoming', 'U0USER', 'deploy?'],
      ['outgoing', 'D0DM', 'You are right when you say: deploy?'],
      ['incoming', 'U0USER', 'odd'],
      ['outgoing', 'D0DM', 'You are wrong when you say: odd'],
    ])
    // The connect is kept as bot metadata (no message); `hello` is kept raw (no message).
    const connect = await get<{ type: string; raw: { self: { id: string } } }>(`/api/records/${n + 1}`)
    expect(connect).toMatchObject({ type: 'connect', raw: { self: { id: 'U0BOT' } } })
  })

  it('Botkit receive / send: the bot token travels in the record and is blanked', async () => {
    const n = await count()
    const botkit = {
      identity: { id: 'U0BOT', name: 'rightbot' },
      team_info: { id: 'T0TEAM', name: 'Right Team' },
      config: { token: SECRETS.slackToken },
    }
    const next = vi.fn()
    sl().receive(botkit, { type: 'message', channel: 'C0CHAN', user: 'U0USER', text: 'botkit says', ts: '2.1' }, next)
    await records(n + 1)
    sl().send(botkit, { type: 'message', channel: 'C0CHAN', text: 'botkit answers' }, next)
    await records(n + 2)
    expect(lines(await transcript('slack', 'C0CHAN'))).toEqual([
      ['incoming', 'U0USER', 'botkit says'],
      ['outgoing', 'C0CHAN', 'botkit answers'],
    ])
    const raw = await get<{ raw: { token: string } }>(`/api/records/${n + 1}`)
    expect(raw.raw.token).toBe('[blanked by the collector]')
  })
})

describe('kik', () => {
  const kk = () => sdk.kik.kik as Channel
  const incoming = (body: string) => ({
    type: 'text',
    body,
    from: 'kik-user',
    chatId: 'kik-chat',
    id: `id-${body}`,
    timestamp: 1509404263587,
    mention: null,
    participants: ['kik-user'],
    readReceiptRequested: true,
  })

  it('logIncoming / logOutgoing (kik api key, bot username, message)', async () => {
    await sent(kk().logIncoming(SECRETS.kikKey, 'rightbot', incoming('hi kik')))
    await sent(
      kk().logOutgoing(SECRETS.kikKey, 'rightbot', {
        type: 'text',
        body: 'hi human',
        to: 'kik-user',
        chatId: 'kik-chat',
      }),
    )
    expect(lines(await transcript('kik', 'kik-chat'))).toEqual([
      ['incoming', 'kik-user', 'hi kik'],
      ['outgoing', 'kik-user', 'hi human'],
    ])
  })

  it('configHandler(bot) + logHandler + bot.send: v=12.1.0-kiknpm', async () => {
    const n = await count()
    const originalSend = vi.fn()
    const bot = { username: 'rightbot', apiKey: SECRETS.kikKey, send: originalSend, broadcast: vi.fn() }
    kk().configHandler(bot)
    const next = vi.fn()
    kk().logHandler({ bot: { apiKey: SECRETS.kikKey, username: 'rightbot' }, _state: incoming('handler in') }, next)
    await records(n + 1)
    ;(bot.send as (m: unknown, r: string, c: string) => void)('handler out', 'kik-user', 'kik-chat')
    await records(n + 2)
    expect(originalSend).toHaveBeenCalledOnce()
    expect(lines((await transcript('kik', 'kik-chat')).slice(-2))).toEqual([
      ['incoming', 'kik-user', 'handler in'],
      ['outgoing', 'kik-user', 'handler out'],
    ])
    expect(await get(`/api/records/${n + 2}`)).toMatchObject({ v: '12.1.0-kiknpm' })
  })
})

describe('alexa', () => {
  const ax = () => sdk.alexa.alexa as Channel

  it('the SDK test data: event.json and the redactor test records', async () => {
    const event = data('event')
    ;(event.context as { System: { apiAccessToken: string } }).System.apiAccessToken = SECRETS.alexaToken
    await sent(ax().logIncoming(event, {}))
    const zip = data('alexa-with-intent-params')
    await sent(ax().logIncoming(zip.event, {}))
    const out = data('alexa-with-session-attributes-outgoing')
    await sent(ax().logOutgoing(out.event, out.response))
    expect(lines(await transcript('alexa', '1'))).toEqual([['incoming', '1', 'HandleAnswer']])
    expect(lines(await transcript('alexa', 'amzn1.ask.account.user'))).toEqual([
      ['incoming', 'amzn1.ask.account.user', 'FindZipcode (Zipcode: 94114)'],
      ['outgoing', 'amzn1.ask.account.user', null],
    ])
  })

  it('alexa-webhook-example.js and handler(fn) with setNotHandled: the NotHandled report names the request', async () => {
    const request = data('event')
    ;(request.session as { user: { userId: string } }).user.userId = 'alexa-user-2'
    ;(request.request as { intent: { name: string } }).intent.name = 'Gibberish'
    const responseBody = {
      version: '1.0',
      response: { outputSpeech: { type: 'PlainText', text: 'Hello World!' }, shouldEndSession: true },
      sessionAttributes: {},
    }
    const n = await count()
    const done = new Promise<unknown>((resolve) => {
      const handler = ax().handler(
        async (_event: unknown, _context: unknown, callback: (e: unknown, r: unknown) => void) => {
          await records(n + 1) // the skill's own work: the incoming record is in by now
          ax().setNotHandled()
          callback(null, {
            ...responseBody,
            response: { ...responseBody.response, outputSpeech: { type: 'PlainText', text: 'Say that again?' } },
          })
        },
      ) as (e: unknown, c: unknown, cb: (e: unknown, r: unknown) => void) => void
      handler(request, { succeed: () => {}, fail: () => {} }, (_e, r) => resolve(r))
    })
    await done // the SDK calls back once both records were answered
    await records(n + 2)
    const messages = await transcript('alexa', 'alexa-user-2')
    expect(lines(messages)).toEqual([
      ['incoming', 'alexa-user-2', 'Gibberish'],
      ['outgoing', 'alexa-user-2', 'Say that again?'],
    ])
    expect(messages[1]?.intent).toBe('NotHandled')
    expect(await notHandled('alexa')).toEqual(['Gibberish'])
  })
})

describe('google', () => {
  const gg = () => sdk.google.google as Channel

  it('google-example-api-ai.js and the redactor test records: text and intent from api.ai v1', async () => {
    const n = await count()
    gg().logIncoming(GOOGLE_IN_REQUEST)
    await records(n + 1)
    gg().logOutgoing(GOOGLE_IN_REQUEST, { speech: 'I’m thinking of a number from 0 to 100. What’s your first guess?' })
    await records(n + 2)
    gg().logIncoming(GOOGLE_OUT.request)
    await records(n + 3)
    gg().setNotHandled()
    gg().logOutgoing(GOOGLE_OUT.request, GOOGLE_OUT.message)
    await records(n + 4)
    const user = 'ABwppHGgPBN4EyaYddw4yEQjZV-eGsXEMCBs9UPwFw3gY1RbVH_fTkjtBUrl_DX1YLS8ZabzKF7wdel58A'
    const first = await transcript('google', '1509389503392')
    expect(lines(first)).toEqual([
      ['incoming', user, '1111111111111111'],
      ['outgoing', user, 'I’m thinking of a number from 0 to 100. What’s your first guess?'],
    ])
    expect(first[0]).toMatchObject({ intent: 'input.number', confidence: 1 })
    expect(lines(await transcript('google', '1509402994514'))).toEqual([
      ['incoming', user, '2222222222222222'],
      ['outgoing', user, 'You said a 2222222222222222'],
    ])
    expect(await notHandled('google')).toEqual(['2222222222222222'])
  })

  it('google-example-actions-sdk.js (Actions on Google v1 conversation API)', async () => {
    const n = await count()
    gg().logIncoming(AOG_V1_REQUEST)
    await records(n + 1)
    gg().logOutgoing(AOG_V1_REQUEST, AOG_V1_RESPONSE)
    await records(n + 2)
    expect(lines(await transcript('google', 'aog-conv-1'))).toEqual([
      ['incoming', 'aog-user-1', 'seven'],
      ['outgoing', 'aog-user-1', 'Too high. Guess another number between 1 and 10'],
    ])
  })
})

describe('line (sent as platform generic)', () => {
  const ln = () => sdk.line.line as Channel

  it('line-example.js and the redactor test event: text, sticker, image reply ({ image: { url } })', async () => {
    await sent(ln().logIncoming(LINE_IN))
    await sent(ln().logOutgoing(LINE_IN.source, { type: 'text', text: '1111111111111111' }))
    await sent(ln().logIncoming({ ...LINE_IN, message: { type: 'sticker', stickerId: '52002734' } }))
    await sent(ln().logOutgoing(LINE_IN.source, { type: 'image', originalContentUrl: 'https://example.com/cat.png' }))
    const messages = await transcript('line', 'U6qwr653uya19w874238')
    const user = 'U6qwr653uya19w874238'
    expect(lines(messages)).toEqual([
      ['incoming', user, '1111111111111111'],
      ['outgoing', user, '1111111111111111'],
      ['incoming', user, '[sticker: 52002734]'],
      ['outgoing', user, '[image: https://example.com/cat.png]'],
    ])
    expect(messages[3]?.images).toEqual(['https://example.com/cat.png'])
  })
})

describe('microsoft (Bot Framework middleware on a real botbuilder TestAdapter)', () => {
  it('microsoft-botframework-example.js: every message activity, both directions; setNotHandled marks the reply', async () => {
    const ms = sdk.microsoft.microsoft as Channel
    const n = await count()
    const adapter = new TestAdapter(async (context) => {
      if (context.activity.text === 'gibberish')
        (context.turnState.get(Symbol.for('dashbot')) as Channel).setNotHandled()
      await context.sendActivity(`You said "${context.activity.text}"`)
    })
    adapter.use(ms.middleware() as never)
    await adapter.send('hello').assertReply('You said "hello"').startTest()
    await records(n + 2)
    await adapter.send('gibberish').assertReply('You said "gibberish"').startTest()
    await records(n + 4)
    const conversations = await get<Array<{ thread: string; platform: string }>>('/api/conversations?bot=microsoft')
    expect(conversations).toHaveLength(1)
    expect(conversations[0]?.platform).toBe('microsoft')
    const messages = await transcript('microsoft', conversations[0]?.thread as string)
    // The SDK posts a turn's incoming and outgoing records at once: compare as sets.
    expect(lines(messages)).toEqual(
      expect.arrayContaining([
        ['incoming', 'user1', 'hello'],
        ['outgoing', 'user1', 'You said "hello"'],
        ['incoming', 'user1', 'gibberish'],
        ['outgoing', 'user1', 'You said "gibberish"'],
      ]),
    )
    expect(messages.find((m) => m.text === 'You said "gibberish"')?.intent).toBe('NotHandled')
  })
})

describe('the REST examples (they post with `request` themselves: v=12.1.0-rest)', () => {
  /** What `request({ uri: urlRoot + '?apiKey=…&type=…&platform=…&v=' + version, method: 'POST', json })` sends. */
  async function rest(bot: Bot, platform: string, type: string, json: unknown): Promise<void> {
    const url = `${serverRoot}/track?apiKey=${bot}-key&type=${type}&platform=${platform}&v=12.1.0-rest`
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(json),
    })
    expect(res.status).toBe(201)
  }

  it('slack-example-rest.js and slack-example-rest-buttons.js: connect, messages with the bot token, a button click', async () => {
    const base = { token: SECRETS.slackToken, team: { id: 'T0TEAM', name: 'Right Team' }, bot: { id: 'U0BOT' } }
    await rest('slack', 'slack', 'connect', RTM_START)
    await rest('slack', 'slack', 'incoming', {
      ...base,
      message: { type: 'message', channel: 'D0REST', user: 'U0USER', text: 'buttons', ts: '3.1' },
    })
    await rest('slack', 'slack', 'outgoing', {
      ...base,
      message: {
        channel: 'D0REST',
        text: 'A button test',
        attachments: [
          {
            fallback: 'A button test',
            callback_id: 'foo_1',
            actions: [
              { name: 'rewrite', text: 'rewrite', value: 'rewrite', type: 'button' },
              { name: 'reply', text: 'reply', value: 'reply', type: 'button' },
            ],
          },
        ],
      },
    })
    // The interactive-message payload Slack posts to /slack/receive, forwarded as is.
    await rest('slack', 'slack', 'incoming', {
      ...base,
      message: {
        type: 'interactive_message',
        actions: [{ name: 'rewrite', type: 'button', value: 'rewrite' }],
        callback_id: 'foo_1',
        team: { id: 'T0TEAM', domain: 'right' },
        channel: { id: 'D0REST', name: 'directmessage' },
        user: { id: 'U0USER', name: 'ada' },
        action_ts: '3.2',
        message_ts: '3.15',
        token: SECRETS.slackVerificationToken,
        response_url: 'https://hooks.slack.com/actions/T0TEAM/1/abc',
      },
    })
    await rest('slack', 'slack', 'outgoing', {
      ...base,
      message: { channel: 'D0REST', text: 'you are right to rewrite' },
    })
    const messages = await transcript('slack', 'D0REST')
    expect(lines(messages)).toEqual([
      ['incoming', 'U0USER', 'buttons'],
      ['outgoing', 'D0REST', 'A button test'],
      ['incoming', 'U0USER', '[button rewrite]'],
      ['outgoing', 'D0REST', 'you are right to rewrite'],
    ])
    expect(messages[1]?.buttons.map((b) => b.label)).toEqual(['rewrite', 'reply'])
    const click = await get<{ raw: { token: string; message: { token: string } } }>(
      `/api/records/${messages[2]?.recordId}`,
    )
    expect(click.raw.token).toBe('[blanked by the collector]')
    expect(click.raw.message.token).toBe('[blanked by the collector]')
  })

  it('facebook-example-rest.js: the webhook body, then the send request with its response body', async () => {
    const body = structuredClone(FACEBOOK_IN)
    const user = 'rest-user'
    ;((body.entry[0] as { messaging: unknown[] }).messaging[0] as { sender: { id: string } }).sender.id = user
    await rest('facebook', 'facebook', 'incoming', body)
    await rest('facebook', 'facebook', 'outgoing', {
      url: 'https://graph.facebook.com/v2.6/me/messages',
      qs: { access_token: SECRETS.pageToken },
      method: 'POST',
      json: {
        dashbotTemplateId: 'right',
        recipient: { id: user },
        message: { text: 'You are right when you say: 2222222222222222' },
      },
      responseBody: { recipient_id: user, message_id: 'mid.rest' },
    })
    expect(lines(await transcript('facebook', user))).toEqual([
      ['incoming', user, '2222222222222222'],
      ['outgoing', user, 'You are right when you say: 2222222222222222'],
    ])
  })
})

describe('google configHandler (the SDK wraps the fulfillment library’s send)', () => {
  const gg = () => sdk.google.google as Channel

  it('actions-on-google v1 (ActionsSdkApp / DialogflowApp: body_ and doResponse_)', async () => {
    const n = await count()
    const doResponse = vi.fn()
    const assistant: Record<string, unknown> = { body_: structuredClone(GOOGLE_IN_REQUEST), doResponse_: doResponse }
    // A request of its own conversation.
    ;(assistant.body_ as { sessionId: string }).sessionId = 'configured-session'
    ;(
      (assistant.body_ as typeof GOOGLE_IN_REQUEST).originalRequest.data.conversation as { conversationId: string }
    ).conversationId = 'configured-session'
    gg().configHandler(assistant)
    await records(n + 1)
    ;(assistant.doResponse_ as (r: unknown, code: number) => void)({ speech: 'You said 1111111111111111' }, 200)
    await records(n + 2)
    expect(doResponse).toHaveBeenCalledOnce()
    expect(lines(await transcript('google', 'configured-session')).map((l) => [l[0], l[2]])).toEqual([
      ['incoming', '1111111111111111'],
      ['outgoing', 'You said 1111111111111111'],
    ])
  })

  it('dialogflow-fulfillment (Dialogflow v2: request_.body and client.sendJson_)', async () => {
    const n = await count()
    const sendJson = vi.fn()
    const request = {
      responseId: 'r1',
      session: 'projects/p/agent/sessions/df2-session',
      queryResult: { queryText: 'book a table', intent: { displayName: 'book' }, intentDetectionConfidence: 0.8 },
      originalDetectIntentRequest: { payload: {} },
    }
    const agent = { handleRequest: vi.fn(), client: { sendJson_: sendJson }, request_: { body: request } }
    gg().configHandler(agent)
    await records(n + 1)
    agent.client.sendJson_({ fulfillmentText: 'For how many?' })
    await records(n + 2)
    expect(sendJson).toHaveBeenCalledOnce()
    const messages = await transcript('google', 'projects/p/agent/sessions/df2-session')
    expect(lines(messages).map((l) => [l[0], l[2]])).toEqual([
      ['incoming', 'book a table'],
      ['outgoing', 'For how many?'],
    ])
    expect(messages[0]).toMatchObject({ intent: 'book', confidence: 0.8 })
  })
})

describe('microsoftDeprecated (botbuilder v3 receive / send middleware)', () => {
  it('posts { is_microsoft, json: <v3 message> } as generic / facebook: shown as the v3 address says', async () => {
    const n = await count()
    const dep = dashbot({ emulator: 'microsoft-key', facebook: 'microsoft-key' } as never, {
      serverRoot,
    }).microsoftDeprecated as Channel
    const address = {
      channelId: 'emulator',
      user: { id: 'v3-user', name: 'Ada' },
      conversation: { id: 'v3-conv' },
      bot: { id: 'v3-bot' },
    }
    const next = vi.fn()
    dep.receive(
      { type: 'message', text: 'hi v3', source: 'emulator', address, timestamp: '2019-01-01T00:00:00Z' },
      next,
    )
    await records(n + 1)
    dep.send({ type: 'message', text: 'hello v3', address }, next)
    await records(n + 2)
    // The Messenger token hack (`setFacebookToken`) puts the page token at the root: blanked.
    dep.setFacebookToken(SECRETS.pageToken)
    dep.receive(
      { type: 'message', text: 'from messenger', source: 'facebook', address: { ...address, channelId: 'facebook' } },
      next,
    )
    await records(n + 3)
    expect(next).toHaveBeenCalledTimes(3)
    const messages = await transcript('microsoft', 'v3-conv')
    expect(lines(messages)).toEqual([
      ['incoming', 'v3-user', 'hi v3'],
      ['outgoing', 'v3-user', 'hello v3'],
      ['incoming', 'v3-user', 'from messenger'],
    ])
    expect(messages.map((m) => m.platform)).toEqual(['generic', 'generic', 'facebook'])
    expect(await get(`/api/records/${n + 3}`)).toMatchObject({ raw: { token: '[blanked by the collector]' } })
  })
})

describe('DASHBOT_SERVER_ROOT (the environment form of the one setting)', () => {
  it('works without touching the bot’s code', async () => {
    vi.stubEnv('DASHBOT_SERVER_ROOT', serverRoot)
    try {
      const db = dashbot('universal-key').universal as Channel
      await sent(db.logIncoming({ text: 'via env', userId: 'env-user' }))
      expect(lines(await transcript('universal', 'env-user'))).toEqual([['incoming', 'env-user', 'via env']])
    } finally {
      vi.unstubAllEnvs()
    }
  })
})

describe('after everything', () => {
  it('every record was accepted; no credential in any read API answer', async () => {
    expect(validationErrors).toEqual([])
    const { records: total } = await collector.store.counts()
    // On the wire: every SDK call answered 201, the redactor fixture without userId too.
    expect(wire.filter((a) => a.status !== 201)).toEqual([])
    expect(wire.filter((a) => a.status === 201)).toHaveLength(total)
    expect(new Set(wire.map((a) => new URLSearchParams(a.query.split('?')[1]).get('v')))).toEqual(
      new Set(['12.1.0-npm', '12.1.0-botkit', '12.1.0-kiknpm', '12.1.0-rest']),
    )
    console.info(`dashbot-compat: ${wire.length} SDK posts, ${total} records stored`)
    const answers: string[] = []
    // Every record through the read API, 16 requests at a time (one by one was most of this test).
    const ids = Array.from({ length: total }, (_, i) => i + 1)
    for (let i = 0; i < ids.length; i += 16)
      answers.push(
        ...(await Promise.all(ids.slice(i, i + 16).map(async (id) => JSON.stringify(await get(`/api/records/${id}`))))),
      )
    for (const bot of BOTS) {
      const conversations = await get<Array<{ thread: string }>>(`/api/conversations?bot=${bot}`)
      answers.push(JSON.stringify(conversations))
      for (const c of conversations)
        answers.push(JSON.stringify(await get(`/api/transcript?bot=${bot}&thread=${encodeURIComponent(c.thread)}`)))
      for (const report of ['not-handled', 'intents', 'events', 'segments', 'timeline'])
        answers.push(JSON.stringify(await get(`/api/reports/${report}?bot=${bot}`)))
    }
    answers.push(JSON.stringify(await get('/api/messages?limit=5000')))
    const all = answers.join('\n')
    for (const secret of Object.values(SECRETS)) expect(all).not.toContain(secret)
    expect(all).toContain('"access_token":"[blanked by the collector]"')
    expect(all).toContain('"apiKey":"[blanked by the collector]"')
    expect(all).toContain('"apiAccessToken":"[blanked by the collector]"')
  })
})
