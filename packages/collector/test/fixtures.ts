/**
 * Good records for every platform and type, as the SDK's serializers put them on the wire
 * (built with core's pure serializers where there is one) or as the platform sends them.
 */
import {
  serializeAlexaIncoming,
  serializeAlexaOutgoing,
  serializeKik,
  serializeMessengerOutgoing,
  serializeSlack,
  serializeTwitterIncoming,
  serializeTwitterOutgoing,
} from '@convotrack/core'

type Obj = Record<string, unknown>

export const universalIncoming = (): Obj => ({
  text: 'show me red shoes',
  userId: 'u-1',
  conversationId: 'conv-1',
  sessionId: 's-1',
  intent: { name: 'shop', inputs: [{ name: 'color', value: 'red' }], confidence: 0.92 },
  platformUserJson: { firstName: 'Ada', locale: 'en_GB' },
})

export const universalOutgoing = (): Obj => ({
  text: 'Here are red shoes',
  userId: 'u-1',
  conversationId: 'conv-1',
  images: [{ url: 'https://img.example/shoe.png' }, 'https://img.example/shoe2.png'],
  buttons: [{ id: 'b1', label: 'Buy', value: 'buy' }],
})

export const messengerIncoming = (): Obj => ({
  object: 'page',
  entry: [
    {
      id: 'PAGE-1',
      time: 1_700_000_000_000,
      messaging: [
        {
          sender: { id: 'PSID-1' },
          recipient: { id: 'PAGE-1' },
          timestamp: 1_700_000_000_000,
          message: { mid: 'm_1', seq: 1, text: 'hello there' },
          intent: { name: 'NotHandled' },
          platformUserJson: { gender: 'f' },
        },
      ],
    },
  ],
})

export const messengerOutgoing = (): Obj =>
  serializeMessengerOutgoing(
    {
      uri: 'https://graph.facebook.com/v21.0/me/messages',
      method: 'POST',
      qs: { access_token: 'SECRET' },
      json: {
        recipient: { id: 'PSID-1' },
        message: { text: 'Pick one', quick_replies: [{ content_type: 'text', title: 'Red', payload: 'RED' }] },
      },
    },
    { recipient_id: 'PSID-1', message_id: 'm_2' },
    { intent: { name: 'offer' } },
  ).body

export const slackIncoming = (): Obj =>
  serializeSlack(
    {
      token: 'xoxb-secret',
      team: { id: 'T1', name: 'Acme' },
      bot: { id: 'B1' },
      message: {
        type: 'message',
        channel: 'C1',
        user: 'U1',
        text: 'deploy status?',
        ts: '1700000000.000100',
        team: 'T1',
      },
    },
    'incoming',
    { intent: { name: 'status', confidence: 0.5 } },
  ).body

export const slackOutgoing = (): Obj =>
  serializeSlack(
    { team: { id: 'T1' }, bot: { id: 'B1' }, message: { type: 'message', channel: 'C1', text: 'all green' } },
    'outgoing',
  ).body

export const kikIncoming = (): Obj =>
  serializeKik(
    {
      apiKey: 'kik-secret',
      username: 'shopbot',
      message: {
        type: 'text',
        body: 'hi',
        from: 'kikuser',
        timestamp: 1_700_000_000_000,
        mention: null,
        participants: ['kikuser'],
        readReceiptRequested: true,
        id: 'k1',
        chatId: 'chat-1',
      },
    },
    'incoming',
  ).body

export const kikOutgoing = (): Obj =>
  serializeKik(
    { username: 'shopbot', message: { type: 'text', body: 'hello!', to: 'kikuser', chatId: 'chat-1' } },
    'outgoing',
  ).body

export const alexaEnvelope = () => ({
  version: '1.0',
  session: {
    new: true,
    sessionId: 'amzn1.echo-api.session.1',
    application: { applicationId: 'amzn1.ask.skill.1' },
    attributes: { serviceUser: { locale: 'de_DE' } },
    user: { userId: 'amzn1.ask.account.USER' },
  },
  request: {
    type: 'IntentRequest',
    requestId: 'amzn1.echo-api.request.1',
    timestamp: '2024-01-01T10:00:00Z',
    intent: { name: 'OrderCoffee', slots: { size: { name: 'size', value: 'large' } } },
  },
})

export const alexaIncoming = (): Obj => serializeAlexaIncoming(alexaEnvelope()).body

export const alexaOutgoing = (): Obj =>
  serializeAlexaOutgoing(
    alexaEnvelope(),
    {
      version: '1.0',
      response: { shouldEndSession: false, outputSpeech: { type: 'SSML', ssml: '<speak>One large coffee?</speak>' } },
    },
    { intent: { name: 'ConfirmOrder', confidence: 0.7 }, now: () => 1_700_000_000_000 },
  ).body

const dm = (sender: string, recipient: string, text: string) => ({
  type: 'message_create',
  id: 'dm1',
  created_timestamp: '1700000000000',
  message_create: { target: { recipient_id: recipient }, sender_id: sender, message_data: { text } },
})

export const twitterIncoming = (): Obj =>
  serializeTwitterIncoming({ for_user_id: 'BOT', direct_message_events: [dm('HUMAN', 'BOT', 'hey')] })[0]!.body

export const twitterOutgoing = (): Obj =>
  serializeTwitterOutgoing({ event: dm('BOT', 'HUMAN', 'hello human') })[0]!.body

export const events = {
  customEvent: (): Obj => ({ type: 'customEvent', name: 'signup', userId: 'u-1', extraInfo: { plan: 'pro' } }),
  revenueEvent: (): Obj => ({
    type: 'revenueEvent',
    name: 'purchase',
    userId: 'u-1',
    amount: 19.99,
    referenceNumber: 'R-1',
  }),
  shareEvent: (): Obj => ({ type: 'shareEvent', name: 'share', userId: 'u-1', sharedMessage: { text: 'look' } }),
  pageLaunchEvent: (): Obj => ({
    type: 'pageLaunchEvent',
    name: 'launch',
    userId: 'u-1',
    extraInfo: { url: 'https://shop.example/' },
  }),
  referralEvent: (): Obj => ({
    type: 'referralEvent',
    name: 'ref',
    userId: 'u-1',
    ref: 'spring',
    source: 'ADS',
    adid: 'ad1',
  }),
}

/** Every good (platform, type) pair with its body. */
export const GOOD: Array<[platform: string, type: string, body: () => Obj]> = [
  ['universal', 'incoming', universalIncoming],
  ['universal', 'outgoing', universalOutgoing],
  ['generic', 'incoming', universalIncoming],
  ['generic', 'outgoing', universalOutgoing],
  ['sms', 'incoming', universalIncoming],
  ['sms', 'outgoing', universalOutgoing],
  ['twitter', 'incoming', twitterIncoming],
  ['twitter', 'outgoing', twitterOutgoing],
  ['facebook', 'incoming', messengerIncoming],
  ['facebook', 'outgoing', messengerOutgoing],
  ['slack', 'incoming', slackIncoming],
  ['slack', 'outgoing', slackOutgoing],
  ['kik', 'incoming', kikIncoming],
  ['kik', 'outgoing', kikOutgoing],
  ['alexa', 'incoming', alexaIncoming],
  ['alexa', 'outgoing', alexaOutgoing],
  ...Object.values(events).flatMap((e) =>
    ['universal', 'generic', 'google', 'alexa', 'facebook', 'slack', 'kik', 'twitter', 'sms'].map(
      (p) => [p, 'event', e] as [string, string, () => Obj],
    ),
  ),
]
