/**
 * Socket Mode: a real Bolt `App({ socketMode: true })` (SocketModeReceiver → @slack/socket-mode →
 * undici WebSocket) connects to a local fake Slack (./socket-mode-server) and receives Events API
 * envelopes over a real WebSocket. The App's Web API calls (apps.connections.open, auth.test,
 * chat.postMessage, team.info) reach the same fake over real HTTP through
 * `clientOptions.slackApiUrl`, which Bolt also hands to the Socket Mode client. No nock in this
 * file: nothing is intercepted.
 */
import { createTracker, type Tracker } from '@convotrack/core'
import { flushSlackTracking, slackTracking } from '@convotrack/slack'
import { App, LogLevel } from '@slack/bolt'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { BOT_USER_ID, type Envelope, type FakeSocketModeSlack, startFakeSocketModeSlack } from './socket-mode-server'

const APP_TOKEN = 'xapp-1-A1-1700000000-test'
const BOT_TOKEN = 'xoxb-test-token'
const TEAM = { id: 'T1', name: 'Acme Corp' }
const BOT = { id: BOT_USER_ID }

let sink: Sink
let tracker: Tracker
let slack: FakeSocketModeSlack
let app: App | undefined
let errors: Error[]

beforeAll(async () => {
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
})
beforeEach(async () => {
  sink.clear()
  errors = []
  tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url })
  slack = await startFakeSocketModeSlack({ teamNames: { T1: 'Acme Corp' } })
})
afterEach(async () => {
  if (app) {
    await app.stop()
    // stop() only starts the close handshake; wait for it so no socket or timer outlives the test.
    await slack.clientClosed()
  }
  app = undefined
  await slack.close()
  await tracker.close(1000)
})

/** Builds and starts a Socket Mode App with the middleware; resolves once the client got `hello`. */
async function startSocketModeApp(setup: (app: App) => void): Promise<App> {
  const created = new App({
    socketMode: true,
    appToken: APP_TOKEN,
    token: BOT_TOKEN,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: slack.apiUrl },
  })
  created.error(async (error) => {
    errors.push(error)
  })
  created.use(slackTracking(tracker))
  setup(created)
  app = created
  await created.start()
  return created
}

let seq = 0

/** An `events_api` envelope carrying the Events API body Slack would POST over HTTP. */
function eventsApiEnvelope(event: Record<string, unknown>): Envelope {
  seq++
  return {
    envelope_id: `0b6a3f2e-socket-${seq}`,
    type: 'events_api',
    accepts_response_payload: false,
    retry_attempt: 0,
    retry_reason: '',
    payload: {
      token: 'verification-token',
      team_id: 'T1',
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: `EvSocket${seq}`,
      event_time: 1700000000,
      authorizations: [{ team_id: 'T1', user_id: BOT_USER_ID, is_bot: true }],
      is_ext_shared_channel: false,
      event,
    },
  }
}

/** A user's message in a channel. */
function messageEvent(channel: string, text: string, more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'message',
    channel,
    user: 'U1',
    text,
    ts: '1700000000.000100',
    team: 'T1',
    channel_type: 'channel',
    ...more,
  }
}

/** What the sink received, as the spec's parts: query values and the parsed body. */
async function delivered() {
  const result = await flushSlackTracking(tracker, 5000)
  expect(result.pending).toBe(0)
  return sink.records.map((r) => ({ platform: r.platform, type: r.type, v: r.v, apiKey: r.apiKey, body: r.body }))
}

const wire = (type: 'incoming' | 'outgoing', body: unknown) => ({
  platform: 'slack',
  type,
  v: '11.1.0-rest',
  apiKey: 'test-key',
  body,
})

describe('Socket Mode (SocketModeReceiver over a real WebSocket)', () => {
  it('tracks an events_api message and the say() reply with the exact team chat shapes; Bolt acks the envelope', async () => {
    let release = () => {}
    const gate = new Promise<void>((r) => {
      release = r
    })
    let answered = false
    await startSocketModeApp((a) => {
      a.message('hello', async ({ say }) => {
        await gate
        await say('Hi there!')
        answered = true
      })
    })
    // The connection URL came from apps.connections.open, called with the app-level token.
    expect(slack.calls.filter((c) => c.method === 'apps.connections.open').map((c) => c.token)).toEqual([APP_TOKEN])

    const envelope = eventsApiEnvelope(messageEvent('C1', 'hello bot'))
    const ack = await slack.send(envelope)
    // The ack arrives while the listener is still blocked: neither it nor tracking holds the ack back.
    expect(ack).toEqual({ envelope_id: envelope.envelope_id, payload: {} })
    expect(answered).toBe(false)

    release()
    await sink.waitFor(2)
    expect(answered).toBe(true)
    expect(await delivered()).toEqual([
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: { type: 'message', channel: 'C1', user: 'U1', text: 'hello bot', ts: '1700000000.000100', team: 'T1' },
      }),
      wire('outgoing', { team: TEAM, bot: BOT, message: { type: 'message', text: 'Hi there!', channel: 'C1' } }),
    ])
    expect(slack.posted).toEqual([expect.objectContaining({ channel: 'C1', text: 'Hi there!' })])
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.token)).toEqual([BOT_TOKEN])
    expect(slack.received).toEqual([ack]) // exactly one message on the socket: the ack
    expect(errors).toEqual([])
  })

  it('pause: a paused channel’s message is tracked and acked but no listener runs; after unpause the bot answers', async () => {
    let runs = 0
    await startSocketModeApp((a) => {
      a.message(async ({ say }) => {
        runs++
        await say('bot here')
      })
    })
    await tracker.pauses.setPaused('C1', true)
    await tracker.pauses.setPaused('U1', true) // a user id is not the Slack pause key

    const paused = eventsApiEnvelope(messageEvent('C1', 'is a human there?', { ts: '1700000020.000001' }))
    expect(await slack.send(paused)).toEqual({ envelope_id: paused.envelope_id, payload: {} })
    // The incoming record is handed over once the middleware is done with the event, so by now a
    // listener would already have run.
    await sink.waitFor(1)
    expect(runs).toBe(0)
    expect(slack.posted).toEqual([])

    await tracker.pauses.setPaused('C1', false)
    const resumed = eventsApiEnvelope(messageEvent('C1', 'bot again?', { ts: '1700000021.000001' }))
    expect(await slack.send(resumed)).toEqual({ envelope_id: resumed.envelope_id, payload: {} })
    await sink.waitFor(3)
    expect(runs).toBe(1)

    expect(await delivered()).toEqual([
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: {
          type: 'message',
          channel: 'C1',
          user: 'U1',
          text: 'is a human there?',
          ts: '1700000020.000001',
          team: 'T1',
        },
      }),
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: {
          type: 'message',
          channel: 'C1',
          user: 'U1',
          text: 'bot again?',
          ts: '1700000021.000001',
          team: 'T1',
        },
      }),
      wire('outgoing', { team: TEAM, bot: BOT, message: { type: 'message', text: 'bot here', channel: 'C1' } }),
    ])
    expect(slack.posted).toEqual([expect.objectContaining({ channel: 'C1', text: 'bot here' })])
    expect(errors).toEqual([])
  })
})
