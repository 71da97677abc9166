import { createTracker, type Tracker } from '@convotrack/core'
import { slackTracking, withTrackingFlush } from '@convotrack/slack'
import { App, AwsLambdaReceiver, LogLevel } from '@slack/bolt'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { BOT_USER_ID, fakeSlackApi, messageEvent, SIGNING_SECRET, sign } from './slack-harness'

let sink: Sink
let tracker: Tracker

beforeAll(async () => {
  nock.disableNetConnect()
  nock.enableNetConnect('127.0.0.1')
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
  nock.enableNetConnect()
})
beforeEach(() => {
  sink.clear()
  tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url })
})
afterEach(async () => {
  await tracker.close(1000)
  nock.cleanAll()
})

/** An API Gateway (v1) event carrying a signed Events API request, as Lambda hands it over. */
function gatewayEvent(body: Record<string, unknown>) {
  const raw = JSON.stringify(body)
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    resource: '/slack/events',
    path: '/slack/events',
    httpMethod: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Slack-Request-Timestamp': String(timestamp),
      'X-Slack-Signature': sign(SIGNING_SECRET, timestamp, raw),
    },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {},
    body: raw,
    isBase64Encoded: false,
  }
}

describe('AwsLambdaReceiver', () => {
  it('withTrackingFlush: every record is delivered before the Lambda handler returns', async () => {
    fakeSlackApi({ teamNames: { T1: 'Acme Corp' }, teamInfoDelayMs: 200 })
    const receiver = new AwsLambdaReceiver({ signingSecret: SIGNING_SECRET, logLevel: LogLevel.ERROR })
    const app = new App({ token: 'xoxb-test-token', receiver, logLevel: LogLevel.ERROR })
    app.use(slackTracking(tracker))
    app.message('hello', async ({ say }) => {
      await say('Hello from Lambda')
    })
    const handler = withTrackingFlush(receiver.toHandler(), tracker)
    const context = { getRemainingTimeInMillis: () => 10_000 }

    const response = await handler(
      gatewayEvent({
        token: 'vt',
        team_id: 'T1',
        api_app_id: 'A1',
        type: 'event_callback',
        event_id: 'EvL1',
        event_time: 1,
        event: messageEvent('C9', 'hello lambda'),
      }) as never,
      context,
    )

    expect(response.statusCode).toBe(200)
    // no flush by the test: the wrapper already waited for the team name and the delivery
    expect(sink.records.map((r) => [r.type, r.body])).toEqual([
      [
        'incoming',
        {
          team: { id: 'T1', name: 'Acme Corp' },
          bot: { id: BOT_USER_ID },
          message: {
            type: 'message',
            channel: 'C9',
            user: 'U1',
            text: 'hello lambda',
            ts: '1700000000.000100',
            team: 'T1',
          },
        },
      ],
      [
        'outgoing',
        {
          team: { id: 'T1', name: 'Acme Corp' },
          bot: { id: BOT_USER_ID },
          message: { type: 'message', text: 'Hello from Lambda', channel: 'C9' },
        },
      ],
    ])
  })

  it('passes the handler’s error on unchanged and still flushes', async () => {
    const boom = new Error('handler failed')
    tracker.universal.logIncoming({ text: 'queued before', userId: 'u1' })
    const handler = withTrackingFlush(async (_event: unknown, _context: unknown) => {
      throw boom
    }, tracker)
    await expect(handler({}, { getRemainingTimeInMillis: () => 5000 })).rejects.toBe(boom)
    expect(sink.records).toHaveLength(1)
  })
})
