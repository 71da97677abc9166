/**
 * One real conversation through each adapter, carrying the test secrets exactly where each
 * platform puts them: a signed Slack event with the verification token to a Bolt App using a
 * bot token, a Messenger webhook answered with the Send API and the page token, a Facebook
 * activity through botbuilder, a signed Kik webhook to a Kik Bot with its API key, an Alexa
 * request with all three Alexa tokens (ask-sdk skill and Lambda handler), an import.
 * Platform APIs are local stand-ins (Slack `slackApiUrl`, Graph `graphApiUrl`, Kik `apiDomain`).
 */
import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { alexaTracking } from '@convotrack/alexa'
import type { Tracker } from '@convotrack/core'
import { importRecords } from '@convotrack/import'
import { kikSdkUnsupportedReason, kikTracking } from '@convotrack/kik'
import { MessengerMiddleware, messengerWebhook, trackedSendApi } from '@convotrack/messenger'
import { slackTracking } from '@convotrack/slack'
import { type LocalServer, localApi, post, requireFrom } from '../fuzz/support'
import { SECRETS } from './support'

type Bolt = typeof import('../../packages/slack/node_modules/@slack/bolt')
type Express = typeof import('../../packages/messenger/node_modules/@types/express')
type Botbuilder = typeof import('../../packages/messenger/node_modules/botbuilder')
type AskSdk = typeof import('../../packages/alexa/node_modules/ask-sdk-core')
const bolt = requireFrom('slack')('@slack/bolt') as Bolt
const express = requireFrom('messenger')('express') as Express
const botbuilder = requireFrom('messenger')('botbuilder') as Botbuilder
const ask = requireFrom('alexa')('ask-sdk-core') as AskSdk

interface KikBot {
  use(handler: (incoming: { reply(m: unknown): Promise<unknown> }, next: () => void) => void): unknown
  send(messages: unknown, recipient: string, chatId?: string): Promise<unknown>
  broadcast(messages: unknown, recipients: string | string[]): Promise<unknown>
  username: string
  apiKey: string
  incoming(): http.RequestListener
}
const KikBotClass = requireFrom('kik')('@kikinteractive/kik') as new (o: Record<string, unknown>) => KikBot

/** The platform APIs the bots talk to, and what reached them. */
export interface PlatformApis {
  slack: LocalServer
  graph: LocalServer
  kik: LocalServer
  /** Graph API answers: 'ok' or 'refuse' (a 400 OAuthException, the send failure path). */
  graphMode: 'ok' | 'refuse'
  close(): Promise<void>
}

export async function startPlatformApis(): Promise<PlatformApis> {
  const apis = { graphMode: 'ok' } as PlatformApis
  apis.slack = await localApi((req, body) => {
    const form = Object.fromEntries(new URLSearchParams(body))
    if (req.url?.endsWith('/auth.test'))
      return { status: 200, body: JSON.stringify({ ok: true, user_id: 'UBOT', bot_id: 'BBOT', team_id: 'T1' }) }
    if (req.url?.endsWith('/team.info'))
      return { status: 200, body: JSON.stringify({ ok: true, team: { id: form.team, name: 'Acme' } }) }
    return { status: 200, body: JSON.stringify({ ok: true, channel: form.channel, ts: '1.2', message: {} }) }
  })
  apis.graph = await localApi(() =>
    apis.graphMode === 'ok'
      ? { status: 200, body: JSON.stringify({ recipient_id: 'U1', message_id: 'mid.1' }) }
      : {
          status: 400,
          body: JSON.stringify({
            error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 },
          }),
        },
  )
  apis.kik = await localApi(() => ({ status: 200, body: '{}' }))
  apis.close = async () => {
    await Promise.all([apis.slack.close(), apis.graph.close(), apis.kik.close()])
  }
  return apis
}

async function listen(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** Slack: a signed message event (carrying the verification token) answered with say(). */
export async function driveSlack(tracker: Tracker, apis: PlatformApis): Promise<void> {
  const quiet = {
    debug() {},
    info() {},
    warn() {},
    error() {},
    setLevel() {},
    getLevel: () => bolt.LogLevel.ERROR,
    setName() {},
  }
  const app = new bolt.App({
    token: SECRETS.slackBotToken,
    signingSecret: SECRETS.slackSigningSecret,
    processBeforeResponse: true,
    logger: quiet,
    clientOptions: { slackApiUrl: `${apis.slack.url}/api/`, retryConfig: { retries: 0 } },
  })
  app.use(slackTracking(tracker))
  app.message(async ({ say }) => {
    await say('hello back')
  })
  const server = (await app.start({ port: 0, host: '127.0.0.1' })) as http.Server
  try {
    const raw = JSON.stringify({
      token: SECRETS.slackVerificationToken,
      team_id: 'T1',
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: 'Ev1',
      event_time: 1_700_000_000,
      event: { type: 'message', channel: 'C1', user: 'U1', text: 'hi', ts: `${Date.now() / 1000}`, team: 'T1' },
    })
    const ts = Math.floor(Date.now() / 1000)
    const sig = `v0=${createHmac('sha256', SECRETS.slackSigningSecret).update(`v0:${ts}:${raw}`).digest('hex')}`
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`
    const res = await post(url, raw, {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': sig,
    })
    if (res.status !== 200) throw new Error(`Bolt answered ${res.status}`)
  } finally {
    await app.stop()
  }
}

/** Messenger: a webhook (express.json + messengerWebhook) whose handler answers with trackedSendApi. */
export async function driveMessenger(tracker: Tracker, apis: PlatformApis): Promise<{ sendErrors: unknown[] }> {
  const send = trackedSendApi(tracker, { accessToken: SECRETS.pageToken, graphApiUrl: `${apis.graph.url}/v21.0` })
  const sendErrors: unknown[] = []
  const app = express()
  app.post('/webhook', express.json(), messengerWebhook(tracker) as never, async (req: { body: any }, res: any) => {
    const item = req.body.entry[0].messaging[0]
    try {
      await send({ recipient: { id: item.sender.id }, message: { text: 'hello back' } })
    } catch (error) {
      sendErrors.push(error)
    }
    res.status(200).send('EVENT_RECEIVED')
  })
  const served = await listen(app as unknown as http.RequestListener)
  try {
    const body = {
      object: 'page',
      entry: [
        {
          id: 'PAGE1',
          time: 1_700_000_000_500,
          messaging: [
            {
              sender: { id: 'U1' },
              recipient: { id: 'PAGE1' },
              timestamp: 1_700_000_000_000,
              message: { mid: 'm1', text: 'hi' },
            },
          ],
        },
      ],
    }
    const res = await post(`${served.url}/webhook`, JSON.stringify(body), { 'content-type': 'application/json' })
    if (res.status !== 200) throw new Error(`webhook answered ${res.status}`)
  } finally {
    await served.close()
  }
  return { sendErrors }
}

/** botbuilder on the facebook channel: MessengerMiddleware, one reply. */
export async function driveBotbuilder(tracker: Tracker): Promise<void> {
  const adapter = new botbuilder.TestAdapter(async (context) => {
    await context.sendActivity('hello back')
  })
  adapter.use(new MessengerMiddleware(tracker))
  await adapter.processActivity({
    type: 'message',
    channelId: 'facebook',
    id: 'm2',
    from: { id: 'U2', name: 'Ada' },
    recipient: { id: 'PAGE1', name: 'Page' },
    conversation: { id: 'U2-PAGE1' } as never,
    text: 'hi',
    channelData: {
      sender: { id: 'U2' },
      recipient: { id: 'PAGE1' },
      timestamp: 1_700_000_000_000,
      message: { mid: 'm2', text: 'hi' },
    },
  })
  // An activity with no user id: its records are invalid, reported through onError (the failure path).
  await adapter.processActivity({
    type: 'message',
    channelId: 'webchat',
    from: { id: '', name: '' },
    recipient: { id: '', name: '' },
    conversation: { id: 'c-invalid' } as never,
    text: 'no user',
  })
}

/** Why the Kik SDK cannot run on this Node (>= 23), or undefined: the kik driver then does nothing. */
export const KIK_SDK_UNSUPPORTED = kikSdkUnsupportedReason()
if (KIK_SDK_UNSUPPORTED) console.log(`security suites without kik: ${KIK_SDK_UNSUPPORTED}`)

/** Kik: a signed webhook to a real Bot (its API key signs it), handler replies; configHandler tracks the reply. */
export async function driveKik(tracker: Tracker, apis: PlatformApis): Promise<void> {
  if (KIK_SDK_UNSUPPORTED) return // the SDK cannot run on this Node (>= 23): nothing to drive
  const bot = new KikBotClass({
    username: 'secbot',
    apiKey: SECRETS.kikKey,
    baseUrl: 'http://127.0.0.1',
    apiDomain: apis.kik.url,
  })
  const kik = kikTracking(tracker)
  kik.configHandler(bot)
  bot.use(kik.logHandler as never)
  let replied!: () => void
  const done = new Promise<void>((r) => {
    replied = r
  })
  bot.use((incoming) => {
    incoming.reply('hello back').then(replied, replied)
  })
  const served = await listen(bot.incoming())
  try {
    const raw = JSON.stringify({
      messages: [
        {
          chatId: 'chat-1',
          id: 'k1',
          type: 'text',
          from: 'alice',
          participants: ['alice'],
          body: 'hi',
          timestamp: 1_700_000_000_000,
          readReceiptRequested: true,
          mention: null,
        },
      ],
    })
    const sig = createHmac('sha1', SECRETS.kikKey).update(raw).digest('hex').toUpperCase()
    const res = await post(`${served.url}/incoming`, raw, {
      'content-type': 'application/json',
      'x-kik-signature': sig,
      'x-kik-username': 'secbot',
    })
    if (res.status !== 200) throw new Error(`Kik bot answered ${res.status}`)
    await done
  } finally {
    await served.close()
  }
}

/** An Alexa request carrying apiAccessToken, the linked account's accessToken and consent tokens. */
export function alexaEnvelope(userId = 'amzn1.ask.account.U1'): Record<string, unknown> {
  const user = {
    userId,
    accessToken: SECRETS.alexaUserAccessToken,
    permissions: { consentToken: SECRETS.alexaConsentToken },
  }
  return {
    version: '1.0',
    session: {
      new: true,
      sessionId: 'amzn1.echo-api.session.S1',
      application: { applicationId: 'amzn1.ask.skill.sec' },
      attributes: {},
      user,
    },
    context: {
      System: {
        application: { applicationId: 'amzn1.ask.skill.sec' },
        user,
        person: { personId: 'p1', accessToken: SECRETS.alexaUserAccessToken },
        device: { deviceId: 'd1', supportedInterfaces: {} },
        apiEndpoint: 'https://api.amazonalexa.com',
        apiAccessToken: SECRETS.alexaApiAccessToken,
      },
    },
    request: {
      type: 'LaunchRequest',
      requestId: 'amzn1.echo-api.request.R1',
      timestamp: '2024-05-01T10:00:00Z',
      locale: 'en-US',
    },
  }
}

/** Alexa: the same request through an instrumented ask-sdk skill and through voice.handler(fn). */
export async function driveAlexa(tracker: Tracker): Promise<void> {
  const voice = alexaTracking(tracker, { flush: false })
  const skill = voice
    .instrument(
      ask.SkillBuilders.custom().addRequestHandlers({
        canHandle: () => true,
        handle: (input) => input.responseBuilder.speak('Welcome').getResponse(),
      }),
    )
    .create()
  await skill.invoke(alexaEnvelope() as never)
  const handler = voice.handler(async () => ({
    version: '1.0',
    response: { outputSpeech: { type: 'PlainText', text: 'hi' } },
  }))
  await handler(alexaEnvelope('amzn1.ask.account.U2'))
}

/** Import: two good rows and one invalid one. (It waits for the service's acknowledgements.) */
export async function driveImport(tracker: Tracker): Promise<void> {
  await importRecords(tracker, [
    { text: 'imported one', userId: 'c1' },
    { text: 42n as unknown as string, userId: '' },
    { text: 'imported two', userId: 'c2' },
  ])
}

/**
 * Every adapter, one after the other. `skipImport` for a service that is down: importRecords
 * waits for acknowledgements until the service is back (see the import fuzz suite's known issue).
 */
export async function driveAll(
  tracker: Tracker,
  apis: PlatformApis,
  options: { skipImport?: boolean } = {},
): Promise<void> {
  await driveSlack(tracker, apis)
  await driveMessenger(tracker, apis)
  await driveBotbuilder(tracker)
  await driveKik(tracker, apis)
  await driveAlexa(tracker)
  if (!options.skipImport) await driveImport(tracker)
}
