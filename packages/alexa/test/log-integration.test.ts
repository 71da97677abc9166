import { gzipSync } from 'node:zlib'
import {
  type AlexaTracking,
  alexaTracking,
  type CloudWatchLogsEvent,
  createLogForwarder,
  LOG_LINE_MARKER,
} from '@convotrack/alexa'
import { ConfigError, type ConvotrackError, createTracker, type Tracker } from '@convotrack/core'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { instrumentedSkill, intentRequest, lambdaContext, launchRequest, onWire, query } from './fixtures'

/** A subscription event built exactly the way CloudWatch Logs builds it. */
function cloudWatchEvent(
  messages: string[],
  messageType: 'DATA_MESSAGE' | 'CONTROL_MESSAGE' = 'DATA_MESSAGE',
): CloudWatchLogsEvent {
  const payload = {
    messageType,
    owner: '123456789012',
    logGroup: '/aws/lambda/space-facts',
    logStream: '2024/05/01/[$LATEST]abcdef',
    subscriptionFilters: ['convotrack'],
    logEvents: messages.map((message, i) => ({ id: `3720${i}`, timestamp: 1714557600000 + i, message })),
  }
  return { awslogs: { data: gzipSync(Buffer.from(JSON.stringify(payload))).toString('base64') } }
}

let sink: Sink
let skillTracker: Tracker
let forwarderTracker: Tracker
let voice: AlexaTracking
let lines: string[]
let errors: ConvotrackError[]

beforeEach(async () => {
  sink = await startSink()
  lines = []
  errors = []
  skillTracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: (e) => errors.push(e) })
  forwarderTracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: (e) => errors.push(e) })
  voice = alexaTracking(skillTracker)
})

afterEach(async () => {
  await skillTracker.close(100)
  await forwarderTracker.close(100)
  await sink.close()
})

describe('voice.logIntegration({ logGroupName })', () => {
  it.each([[undefined], [{}], [{ logGroupName: '' }], [{ logGroupName: 42 }]])(
    'needs logGroupName: a clear error for %j',
    (options) => {
      expect(() => voice.logIntegration(options as never)).toThrow(ConfigError)
      expect(() => voice.logIntegration(options as never)).toThrow(
        "logIntegration({ logGroupName }) needs logGroupName: the CloudWatch Logs group your skill's Lambda writes to, e.g. { logGroupName: '/aws/lambda/my-skill' }",
      )
    },
  )

  it('rejects a name CloudWatch would not accept', () => {
    expect(() => voice.logIntegration({ logGroupName: 'my skill!' })).toThrow('is not a CloudWatch Logs group name')
  })

  it('writes one marked line per record, makes no network call, adds no wait in Lambda', async () => {
    voice.logIntegration({ logGroupName: '/aws/lambda/space-facts', write: (l) => lines.push(l) })
    const skill = instrumentedSkill(voice).create()
    sink.faults.latencyMs = 5_000 // a slow service: anything sent would still be pending below
    await skill.invoke(launchRequest(), lambdaContext())
    // Nothing went to the transport, so the invocation had nothing to wait for.
    expect(skillTracker.stats()).toMatchObject({ queued: 0, inFlight: 0, sent: 0 })
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line.startsWith(`${LOG_LINE_MARKER} {`)).toBe(true)
    expect(JSON.parse(lines[0]!.slice(LOG_LINE_MARKER.length + 1))).toMatchObject({
      logGroup: '/aws/lambda/space-facts',
      platform: 'alexa',
      type: 'incoming',
      v: '11.1.0-rest',
      userId: 'amzn1.ask.account.USER-ONE',
    })
    expect(await skillTracker.flush()).toMatchObject({ pending: 0, sent: 0 }) // anything queued would be sent by now
    expect(sink.requests).toBe(0)
    expect(lines.join('\n')).not.toContain('test-key')
  })

  it('writes to stdout by default', async () => {
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      voice.logIntegration({ logGroupName: '/aws/lambda/space-facts' })
      await instrumentedSkill(voice).create().invoke(launchRequest())
      const written = spy.mock.calls.map((c) => String(c[0])).filter((s) => s.startsWith(LOG_LINE_MARKER))
      expect(written).toHaveLength(2)
      expect(written.every((s) => s.endsWith('}\n'))).toBe(true)
    } finally {
      spy.mockRestore()
    }
  })
})

describe('createLogForwarder(tracker): the other half', () => {
  it('delivers the exact bytes the skill would have posted, with the right query strings', async () => {
    voice.logIntegration({ logGroupName: '/aws/lambda/space-facts', write: (l) => lines.push(l) })
    const skill = instrumentedSkill(voice).create()
    const launch = launchRequest()
    const fact = intentRequest('GetFactIntent', { planet: 'Mars' })
    await skill.invoke(launch, lambdaContext())
    await skill.invoke(fact, lambdaContext())
    expect(lines).toHaveLength(4)

    // How Lambda's text log format prints a console line, plus noise the subscription may carry.
    const messages = [
      'START RequestId: c6af9ac6 Version: $LATEST',
      ...lines.map((l) => `2024-05-01T10:00:00.000Z\tc6af9ac6\tINFO\t${l}`),
      'END RequestId: c6af9ac6',
    ]
    const forward = createLogForwarder(forwarderTracker)
    const result = await forward(cloudWatchEvent(messages), lambdaContext(30_000))
    expect(result).toEqual({ logEvents: 6, forwarded: 4, invalid: 0, delivered: true })

    // Already delivered when the forwarder returned.
    expect(sink.records).toHaveLength(4)
    const sent = lines.map((l) => JSON.parse(l.slice(LOG_LINE_MARKER.length + 1)) as { type: string; body: string })
    expect(sink.records.map((r) => r.raw).sort()).toEqual(sent.map((s) => s.body).sort())
    for (const r of sink.records)
      expect(query(r)).toEqual({ platform: 'alexa', type: r.type, v: '11.1.0-rest', apiKey: 'test-key' })
    const factOut = sink.records.find(
      (r) => r.type === 'outgoing' && r.body.event.request.requestId === fact.request.requestId,
    )!
    expect(factOut.body).toEqual({
      event: onWire(fact),
      response: {
        version: '1.0',
        sessionAttributes: { lastPlanet: 'Mars' },
        response: {
          outputSpeech: { type: 'SSML', ssml: '<speak>A day on Mars is long.</speak>' },
          card: { type: 'Simple', title: 'Space fact', content: 'A day on Mars is long.' },
        },
        intent: { name: 'GetFactIntent', inputs: [{ name: 'planet', value: 'Mars' }], confidence: 1 },
      },
      service_timestamp: expect.any(Number),
    })
    const launchIn = sink.records.find(
      (r) => r.type === 'incoming' && r.body.event.request.requestId === launch.request.requestId,
    )!
    expect(launchIn.body.event).toEqual(onWire(launch, { firstName: 'Ada', plan: 'free' }))
  })

  it('reads Lambda’s JSON log format too', async () => {
    voice.logIntegration({ logGroupName: '/aws/lambda/space-facts', write: (l) => lines.push(l) })
    await instrumentedSkill(voice).create().invoke(launchRequest())
    const messages = lines.map((l) =>
      JSON.stringify({ timestamp: '2024-05-01T10:00:00.000Z', level: 'INFO', requestId: 'c6af9ac6', message: l }),
    )
    const result = await createLogForwarder(forwarderTracker)(cloudWatchEvent(messages))
    expect(result.forwarded).toBe(2)
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
  })

  it('retries through the transport: a 500 then recovery still delivers everything', async () => {
    voice.logIntegration({ logGroupName: '/aws/lambda/space-facts', write: (l) => lines.push(l) })
    await instrumentedSkill(voice).create().invoke(launchRequest())
    sink.faults.status = 500
    // The service recovers once the forwarder has seen a failure and scheduled its retry.
    forwarderTracker.once('retry', () => {
      sink.faults.status = undefined
    })
    const result = await createLogForwarder(forwarderTracker)(cloudWatchEvent(lines))
    expect(result).toEqual({ logEvents: 2, forwarded: 2, invalid: 0, delivered: true })
    expect(sink.records).toHaveLength(2)
    expect(forwarderTracker.stats().retried).toBeGreaterThan(0)
  })

  it('reports a broken marked line and goes on with the rest', async () => {
    voice.logIntegration({ logGroupName: '/aws/lambda/space-facts', write: (l) => lines.push(l) })
    await instrumentedSkill(voice).create().invoke(launchRequest())
    const result = await createLogForwarder(forwarderTracker)(
      cloudWatchEvent([
        `${LOG_LINE_MARKER} {not json`,
        `${LOG_LINE_MARKER} {"platform":"myspace","type":"incoming","v":"11.1.0-rest","body":"{}"}`,
        ...lines,
      ]),
    )
    expect(result).toEqual({ logEvents: 4, forwarded: 2, invalid: 2, delivered: true })
    expect(errors.map((e) => e.code)).toEqual(['invalid_log_line', 'invalid_log_line'])
    expect(errors[1]!.message).toContain('unknown platform "myspace"')
  })

  it('ignores CloudWatch’s CONTROL_MESSAGE', async () => {
    const result = await createLogForwarder(forwarderTracker)(
      cloudWatchEvent(['CWL CONTROL MESSAGE: Checking health of destination'], 'CONTROL_MESSAGE'),
    )
    expect(result).toEqual({ logEvents: 0, forwarded: 0, invalid: 0, delivered: true })
  })

  it('throws a clear error for an event that is not a CloudWatch Logs payload', async () => {
    const forward = createLogForwarder(forwarderTracker)
    await expect(forward({} as never)).rejects.toThrow('not a CloudWatch Logs subscription event')
    await expect(forward({ awslogs: { data: 'bm90IGd6aXA=' } })).rejects.toThrow('awslogs.data is not base64 gzip JSON')
  })

  it('returns delivered: false when the service stays down past the deadline (no throw, so CloudWatch does not redeliver duplicates)', async () => {
    voice.logIntegration({ logGroupName: '/aws/lambda/space-facts', write: (l) => lines.push(l) })
    await instrumentedSkill(voice).create().invoke(launchRequest())
    await sink.down()
    const result = await createLogForwarder(forwarderTracker, { flushTimeoutMs: 300 })(cloudWatchEvent(lines))
    expect(result).toEqual({ logEvents: 2, forwarded: 2, invalid: 0, delivered: false })
    await sink.up()
  })
})
