/**
 * Fuzz of the Alexa entries with the real ask-sdk-core:
 * - a skill instrumented with voice.instrument(builder) and voice.pauseHandler, invoked with
 *   random envelopes, compared with the same skill untracked (answer or error, identical);
 * - voice.handler(fn) with random events (and handlers answering in every Lambda style);
 * - createLogForwarder with random, truncated and garbage CloudWatch Logs payloads: it
 *   delivers, or rejects with a clear `invalid_log_payload` error. Never anything else.
 */
import { gzipSync } from 'node:zlib'
import { alexaTracking, createLogForwarder, LOG_LINE_MARKER } from '@convotrack/alexa'
import { type ConvotrackError, createTracker, type Tracker } from '@convotrack/core'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seeded } from '../support/fuzz-seed'
import { type Sink, startSink } from '../support/sink-server'
import {
  anything,
  expectClearErrors,
  HANG_MS,
  jsonAnything,
  mutated,
  outcome,
  RUNS,
  requireFrom,
  type Watchdog,
  watchProcess,
  withDeadline,
} from './support'

type AskSdk = typeof import('../../packages/alexa/node_modules/ask-sdk-core')
const ask = requireFrom('alexa')('ask-sdk-core') as AskSdk

const envelope = {
  version: '1.0',
  session: {
    new: true,
    sessionId: 'amzn1.echo-api.session.S1',
    application: { applicationId: 'amzn1.ask.skill.fuzz' },
    attributes: { count: 1 },
    user: { userId: 'amzn1.ask.account.U1', accessToken: 'linked-token' },
  },
  context: {
    System: {
      application: { applicationId: 'amzn1.ask.skill.fuzz' },
      user: { userId: 'amzn1.ask.account.U1' },
      device: { deviceId: 'd1', supportedInterfaces: {} },
      apiEndpoint: 'https://api.amazonalexa.com',
      apiAccessToken: 'api-access-token',
    },
  },
  request: {
    type: 'IntentRequest',
    requestId: 'amzn1.echo-api.request.R1',
    timestamp: '2024-05-01T10:00:00Z',
    locale: 'en-US',
    intent: { name: 'FactIntent', confirmationStatus: 'NONE', slots: { topic: { name: 'topic', value: 'mars' } } },
  },
}
const launch = { ...envelope, request: { type: 'LaunchRequest', requestId: 'R2', timestamp: '2024-05-01T10:00:00Z' } }

let sink: Sink
let tracker: Tracker
let watchdog: Watchdog
const reported: ConvotrackError[] = []

beforeAll(async () => {
  watchdog = watchProcess()
  sink = await startSink()
  tracker = createTracker({
    apiKey: 'fuzz-key',
    baseUrl: sink.url,
    maxQueueSize: 100_000,
    onError: (e) => reported.push(e),
  })
  await tracker.pauses.setPaused('amzn1.ask.account.PAUSED', true)
})
afterAll(async () => {
  await tracker?.close(2_000)
  await sink?.close()
  watchdog?.stop()
})

/** A small skill: answers launch and FactIntent, throws on BoomIntent, with an error handler. */
function skill(tracked: boolean) {
  const voice = alexaTracking(tracker, { flush: false })
  const builder = ask.SkillBuilders.custom()
  if (tracked) builder.addRequestHandlers(voice.pauseHandler)
  builder
    .addRequestHandlers(
      {
        canHandle: (input) => ask.getRequestType(input.requestEnvelope) === 'LaunchRequest',
        handle: (input) => input.responseBuilder.speak('Welcome').reprompt('Ask me').getResponse(),
      },
      {
        canHandle: (input) =>
          ask.getRequestType(input.requestEnvelope) === 'IntentRequest' &&
          ask.getIntentName(input.requestEnvelope) === 'FactIntent',
        handle: (input) => {
          if (tracked) voice.setOutgoingIntent(input, { name: 'FactIntent' })
          const attributes = input.attributesManager.getSessionAttributes()
          input.attributesManager.setSessionAttributes({ ...attributes, told: true })
          return input.responseBuilder.speak('Mars is red').getResponse()
        },
      },
      {
        canHandle: (input) =>
          ask.getRequestType(input.requestEnvelope) === 'IntentRequest' &&
          ask.getIntentName(input.requestEnvelope) === 'BoomIntent',
        handle: () => {
          throw new Error('the fact database is down')
        },
      },
    )
    .addErrorHandlers({
      canHandle: (_input, error) => !String(error.message).includes('unhandled-on-purpose'),
      handle: (input) => {
        if (tracked) voice.setNotHandled(input)
        return input.responseBuilder.speak('Sorry').getResponse()
      },
    })
  if (tracked) voice.instrument(builder)
  return builder.create()
}

describe('alexaTracking on a real ask-sdk-core skill under random envelopes', () => {
  const envelopes = fc.oneof(
    { weight: 4, arbitrary: mutated(envelope, anything) },
    { weight: 2, arbitrary: mutated(launch, anything) },
    {
      weight: 1,
      arbitrary: mutated({ ...envelope, request: { ...envelope.request, intent: { name: 'BoomIntent' } } }, anything),
    },
    { weight: 1, arbitrary: anything },
  )

  it('skill.invoke answers (or fails) exactly like the untracked skill, paused users excepted', async () => {
    const trackedSkill = skill(true)
    const controlSkill = skill(false)
    await fc.assert(
      fc.asyncProperty(envelopes, async (e) => {
        // ask-sdk mutates nothing we rely on, but each skill gets its own copy all the same.
        const copy = () => {
          try {
            return structuredClone(e)
          } catch {
            return e
          }
        }
        const a = await withDeadline(
          outcome(() => trackedSkill.invoke(copy() as never)),
          5_000,
          'skill.invoke',
        )
        const b = await withDeadline(
          outcome(() => controlSkill.invoke(copy() as never)),
          5_000,
          'skill.invoke',
        )
        expect(a).toEqual(b)
        watchdog.check()
      }),
      seeded({ numRuns: RUNS }),
    )
    const paused = { ...envelope, session: { ...envelope.session, user: { userId: 'amzn1.ask.account.PAUSED' } } }
    const answer = (await trackedSkill.invoke(paused as never)) as { response: unknown }
    expect(answer.response).toEqual({})
    expect((await tracker.flush(HANG_MS)).pending).toBe(0)
    const alexa = sink.records.filter((r) => r.platform === 'alexa')
    expect(alexa.some((r) => r.type === 'incoming')).toBe(true)
    expect(alexa.some((r) => r.type === 'outgoing')).toBe(true)
    for (const r of alexa) expect(r.body.event.context?.System?.apiAccessToken ?? '').toBe('')
    expectClearErrors(reported)
    watchdog.check()
  })
})

describe('voice.handler(fn) under random events', () => {
  const styles = fc.constantFrom('async', 'callback', 'succeed', 'throw', 'reject', 'fail')
  const answerFor = (event: unknown) => ({
    version: '1.0',
    response: { outputSpeech: { type: 'PlainText', text: 'ok' } },
    echo: typeof event,
  })

  it('settles like the bare handler, with the same answer or error, and never hangs', async () => {
    const voice = alexaTracking(tracker, { flush: true, flushTimeoutMs: 200 })
    type Fn = (
      event: unknown,
      context: { succeed(r: unknown): void; fail(e: unknown): void },
      cb: (e: unknown, r?: unknown) => void,
    ) => unknown
    const bare =
      (style: string): Fn =>
      (event, context, cb) => {
        if (style === 'async') return Promise.resolve(answerFor(event))
        if (style === 'callback') return void setImmediate(() => cb(null, answerFor(event)))
        if (style === 'succeed') return void context.succeed(answerFor(event))
        if (style === 'throw') throw new Error('handler threw')
        if (style === 'reject') return Promise.reject(new Error('handler rejected'))
        return void context.fail(new Error('handler failed'))
      }
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated(envelope, anything), anything), styles, async (event, style) => {
        const wrapped = voice.handler(bare(style) as never)
        const a = await withDeadline(
          outcome(() => wrapped(event)),
          5_000,
          'voice.handler',
        )
        const b = await outcome(
          () =>
            new Promise((resolve, reject) => {
              const ctx = { succeed: resolve, fail: reject }
              try {
                const r = bare(style)(event, ctx, (err, res) => (err ? reject(err) : resolve(res)))
                if (r instanceof Promise) r.then(resolve, reject)
              } catch (error) {
                reject(error)
              }
            }),
        )
        expect(a).toEqual(b)
        watchdog.check()
      }),
      seeded({ numRuns: RUNS }),
    )
    await tracker.flush(HANG_MS)
    expectClearErrors(reported)
  })
})

describe('createLogForwarder under random, truncated and garbage awslogs payloads', () => {
  const gz = (value: unknown) =>
    gzipSync(Buffer.from(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))).toString('base64')
  const goodLine = (text: string) =>
    `${LOG_LINE_MARKER} ${JSON.stringify({
      logGroup: '/aws/lambda/skill',
      platform: 'universal',
      type: 'incoming',
      v: '11.1.0-rest',
      userId: 'u1',
      body: JSON.stringify({ text, userId: 'u1' }),
    })}`
  const dataMessage = (messages: unknown[]) => ({
    messageType: 'DATA_MESSAGE',
    owner: '123',
    logGroup: '/aws/lambda/skill',
    logStream: 's',
    subscriptionFilters: ['f'],
    logEvents: messages.map((message, i) => ({ id: String(i), timestamp: 1, message })),
  })
  const lines = fc.oneof(
    fc.string({ maxLength: 40 }).map(goodLine),
    fc.tuple(fc.string({ maxLength: 20 }).map(goodLine), fc.nat()).map(([l, n]) => l.slice(0, n % (l.length + 1))),
    fc.string({ maxLength: 80 }).map((s) => `${LOG_LINE_MARKER} ${s}`),
    jsonAnything.map((v) => `${LOG_LINE_MARKER} ${JSON.stringify(v)}`),
    mutated(JSON.parse(goodLine('x').slice(LOG_LINE_MARKER.length + 1))).map(
      (v) => `${LOG_LINE_MARKER} ${JSON.stringify(v)}`,
    ),
    jsonAnything, // a message that is not a string at all
  )
  const events = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.array(lines, { maxLength: 12 }).map((m) => ({ awslogs: { data: gz(dataMessage(m)) } })),
    },
    { weight: 1, arbitrary: mutated(dataMessage([goodLine('hi')])).map((d) => ({ awslogs: { data: gz(d) } })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constant(gz(dataMessage([goodLine('hi')]))), fc.nat())
        .map(([d, n]) => ({ awslogs: { data: d.slice(0, n % d.length) } })),
    },
    { weight: 1, arbitrary: fc.string().map((s) => ({ awslogs: { data: s } })) },
    { weight: 1, arbitrary: jsonAnything.map((v) => ({ awslogs: { data: gz(v) } })) },
    { weight: 1, arbitrary: anything.map((v) => ({ awslogs: v })) },
    { weight: 1, arbitrary: anything },
  )

  it('resolves with what it forwarded, or rejects with invalid_log_payload; never crashes or hangs', async () => {
    const forwarder = createLogForwarder(tracker, { flushTimeoutMs: 2_000 })
    const kinds = new Set<string>()
    await fc.assert(
      fc.asyncProperty(events, async (event) => {
        try {
          const result = await withDeadline(forwarder(event as never), 5_000, 'the log forwarder')
          expect(result.forwarded + result.invalid).toBeLessThanOrEqual(result.logEvents)
          kinds.add(result.forwarded > 0 ? 'forwarded' : 'nothing')
        } catch (error) {
          expect((error as ConvotrackError).code).toBe('invalid_log_payload')
          expect((error as Error).message).toMatch(/awslogs/)
          kinds.add('rejected')
        }
        watchdog.check()
      }),
      seeded({ numRuns: RUNS }),
    )
    expect([...kinds].sort()).toEqual(['forwarded', 'nothing', 'rejected'])
    expect((await tracker.flush(HANG_MS)).pending).toBe(0)
    expectClearErrors(reported)
    expect(reported.some((e) => e.code === 'invalid_log_line')).toBe(true)
  })
})
