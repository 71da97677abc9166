/**
 * SECURITY.md, "Platform credentials are blanked by default": every adapter runs a real
 * conversation carrying the platform's own secrets (page token, Kik API key, Slack
 * verification and bot tokens, the three Alexa tokens) with `debug: true` and everything
 * captured; none of them reaches the tracking service, a log line or an error. With
 * `sendPlatformCredentials: true` the same run sends exactly those the spec's shapes carry,
 * in their fields, which proves the blanking is deliberate and not an accident of the shapes.
 */
import { alexaTracking } from '@convotrack/alexa'
import { MessengerMiddleware } from '@convotrack/messenger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireFrom } from '../fuzz/support'
import { type Sink, startSink } from '../support/sink-server'
import {
  alexaEnvelope,
  driveAlexa,
  driveAll,
  KIK_SDK_UNSUPPORTED,
  type PlatformApis,
  startPlatformApis,
} from './drivers'
import { capturedTracker, findSecrets, PLATFORM_SECRETS, SECRETS, type SecretName, wireText } from './support'

type Botbuilder = typeof import('../../packages/messenger/node_modules/botbuilder')
const botbuilder = requireFrom('messenger')('botbuilder') as Botbuilder

let sink: Sink
let apis: PlatformApis

beforeAll(async () => {
  sink = await startSink()
  apis = await startPlatformApis()
})
afterAll(async () => {
  await apis?.close()
  await sink?.close()
})

/** Secrets that never leave the bot, whatever the options: they are in no shape of the spec. */
const NEVER_SENT: SecretName[] = ['slackBotToken', 'slackSigningSecret', 'appSecret', 'webhookSecret']

describe('platform credentials, by default', () => {
  it('reach neither the service (bodies, query, headers) nor any log line, onError call or event', async () => {
    sink.clear()
    const { tracker, capture } = capturedTracker(sink.url)
    await driveAll(tracker, apis)
    const flushed = await tracker.flush(5_000)
    expect(flushed).toMatchObject({ delivered: true, pending: 0 })
    await tracker.close()

    // Every adapter delivered: the absence of secrets below is not the absence of records.
    const kinds = new Set(sink.records.map((r) => `${r.platform}/${r.type}`))
    expect([...kinds].sort()).toEqual([
      'alexa/incoming',
      'alexa/outgoing',
      'facebook/incoming',
      'facebook/outgoing',
      ...(KIK_SDK_UNSUPPORTED ? [] : ['kik/incoming', 'kik/outgoing']),
      'slack/incoming',
      'slack/outgoing',
      'universal/incoming',
    ])
    expect(capture.logs.some((l) => l.includes('[convotrack] queued POST'))).toBe(true) // debug was on
    expect(capture.errors.length).toBeGreaterThan(0) // the invalid import row was reported

    const hits = findSecrets(
      { wire: wireText(sink.records), logs: capture.logs, onError: capture.errors, events: capture.events },
      [...PLATFORM_SECRETS, ...NEVER_SENT, 'trackingKey'],
    )
    expect(hits).toEqual([])
  })

  it('are blanked in place, so the records keep the spec shape (empty values, not missing fields)', async () => {
    sink.clear()
    const { tracker } = capturedTracker(sink.url)
    await driveAll(tracker, apis)
    await tracker.close()
    const body = (platform: string, type: string) =>
      sink.records.find((r) => r.platform === platform && r.type === type)?.body
    expect(body('facebook', 'outgoing').qs).toEqual({ access_token: '' })
    if (!KIK_SDK_UNSUPPORTED) {
      expect(body('kik', 'incoming').apiKey).toBe('')
      expect(body('kik', 'outgoing').apiKey).toBe('')
    }
    expect(body('slack', 'incoming')).not.toHaveProperty('token')
    // The U1 turn's record (two Alexa users go in parallel: their arrival order is not fixed).
    const event = sink.records.find(
      (r) => r.platform === 'alexa' && r.type === 'incoming' && r.body.event.session.user.userId.endsWith('.U1'),
    )?.body.event
    expect(event.session.user).toEqual({
      userId: 'amzn1.ask.account.U1',
      accessToken: '',
      permissions: { consentToken: '' },
    })
    expect(event.context.System.apiAccessToken).toBe('')
    expect(event.context.System.user.accessToken).toBe('')
    expect(event.context.System.person.accessToken).toBe('')
  })
})

describe('sendPlatformCredentials: true', () => {
  it('sends each platform credential in its own field, and still no other secret anywhere', async () => {
    sink.clear()
    const { tracker, capture } = capturedTracker(sink.url, { sendPlatformCredentials: true })
    await driveAll(tracker, apis)
    await tracker.close()
    const body = (platform: string, type: string) =>
      sink.records.find((r) => r.platform === platform && r.type === type)?.body
    // The Send API's record (to U1, the messenger driver's user): botbuilder's (to U2) has no page
    // token to send, and records of different conversations may arrive in either order.
    const sendApi = sink.records.find(
      (r) => r.platform === 'facebook' && r.type === 'outgoing' && r.body.json?.recipient?.id === 'U1',
    )?.body
    expect(sendApi.qs).toEqual({ access_token: SECRETS.pageToken })
    if (!KIK_SDK_UNSUPPORTED) {
      expect(body('kik', 'incoming').apiKey).toBe(SECRETS.kikKey)
      expect(body('kik', 'outgoing').apiKey).toBe(SECRETS.kikKey)
    }
    expect(body('slack', 'incoming').token).toBe(SECRETS.slackVerificationToken)
    const event = body('alexa', 'incoming').event
    expect(event.session.user.accessToken).toBe(SECRETS.alexaUserAccessToken)
    expect(event.session.user.permissions.consentToken).toBe(SECRETS.alexaConsentToken)
    expect(event.context.System.apiAccessToken).toBe(SECRETS.alexaApiAccessToken)
    expect(body('alexa', 'outgoing').event.context.System.apiAccessToken).toBe(SECRETS.alexaApiAccessToken)

    // Opting in sends the platform credentials; it never sends the bot's other secrets.
    const hits = findSecrets({ wire: wireText(sink.records), logs: capture.logs, onError: capture.errors }, [
      ...NEVER_SENT,
      'trackingKey',
    ])
    expect(hits).toEqual([])
  })
})

describe('the Alexa log integration (records on stdout instead of HTTP)', () => {
  it('writes lines without any Alexa token or the tracking key', async () => {
    const { tracker } = capturedTracker(sink.url)
    const lines: string[] = []
    alexaTracking(tracker).logIntegration({ logGroupName: '/aws/lambda/sec', write: (l) => lines.push(l) })
    await driveAlexa(tracker)
    await tracker.close()
    expect(lines.length).toBe(4)
    expect(findSecrets({ stdout: lines })).toEqual([])
    expect(JSON.stringify(alexaEnvelope())).toContain(SECRETS.alexaApiAccessToken) // the input did carry them
  })
})

/**
 * On a channel other than `facebook`, MessengerMiddleware sends the whole incoming activity as
 * the universal record's `platformJson`, `channelData` included. Azure Bot Service's Slack
 * channel puts the Slack bot token (`ApiToken`, xoxb-…) and the raw event envelope with the
 * verification token (`SlackMessage.token`) there. Found by this test; core's universal
 * serializer now blanks credential-named fields in `platformJson` unless `sendPlatformCredentials`.
 */
describe('MessengerMiddleware on a non-facebook channel', () => {
  it('does not send channelData credentials (Azure Bot Service Slack: ApiToken, SlackMessage.token)', async () => {
    sink.clear()
    const { tracker, capture } = capturedTracker(sink.url)
    const adapter = new botbuilder.TestAdapter(async (context) => {
      await context.sendActivity('hello back')
    })
    adapter.use(new MessengerMiddleware(tracker))
    await adapter.processActivity({
      type: 'message',
      channelId: 'slack',
      from: { id: 'U1:T1', name: 'ada' },
      recipient: { id: 'B1:T1', name: 'bot' },
      conversation: { id: 'B1:T1:C1' } as never,
      text: 'hi',
      channelData: {
        SlackMessage: {
          token: SECRETS.slackVerificationToken,
          team_id: 'T1',
          type: 'event_callback',
          event: { type: 'message', text: 'hi' },
        },
        ApiToken: SECRETS.slackBotToken,
      },
    })
    await tracker.close()
    expect(sink.records.length).toBe(2)
    expect(
      findSecrets({ wire: wireText(sink.records), logs: capture.logs }, ['slackBotToken', 'slackVerificationToken']),
    ).toEqual([])
  })
})
