import { type AlexaTracking, alexaTracking, DEFAULT_FLUSH_TIMEOUT_MS } from '@convotrack/alexa'
import { type ConvotrackError, createTracker, LAMBDA_SAFETY_MARGIN_MS, type Tracker } from '@convotrack/core'
import { type Skill as CustomSkill, SkillBuilders } from 'ask-sdk-core'
import type { RequestEnvelope, ResponseEnvelope } from 'ask-sdk-model'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import {
  audioPlayerRequest,
  handlers,
  instrumentedSkill,
  intentRequest,
  interceptorSkill,
  lambdaContext,
  lambdaContextOnWire,
  launchRequest,
  onWire,
  query,
  sessionEndedRequest,
  USER,
  untrackedSkill,
} from './fixtures'

let sink: Sink
let tracker: Tracker
let voice: AlexaTracking
let errors: ConvotrackError[]

beforeEach(async () => {
  sink = await startSink()
  errors = []
  tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: (e) => errors.push(e) })
  voice = alexaTracking(tracker)
})

afterEach(async () => {
  vi.restoreAllMocks()
  await tracker.close(200)
  await sink.close()
})

const QS_IN = { platform: 'alexa', type: 'incoming', v: '11.1.0-rest', apiKey: 'test-key' }
const QS_OUT = { ...QS_IN, type: 'outgoing' }

/** The outgoing record of BoomIntent answered by the error handler, as the spec places it. */
const errorAnswerRecord = (envelope: Parameters<typeof onWire>[0]) => ({
  event: onWire(envelope),
  response: {
    version: '1.0',
    sessionAttributes: {},
    response: { outputSpeech: { type: 'SSML', ssml: '<speak>Sorry, something went wrong.</speak>' } },
    // The intent the handler set before it threw still belongs to this request.
    intent: { name: 'BoomIntent' },
  },
  service_timestamp: expect.any(Number),
})

/** Invokes, flushes, and returns the answer with the records of that request, incoming first. */
async function run(skill: CustomSkill, envelope: RequestEnvelope, context?: unknown) {
  const before = Date.now()
  const answer = await skill.invoke(envelope, context)
  const after = Date.now()
  await tracker.flush()
  const mine = sink.records.filter((r) => r.body?.event?.request?.requestId === envelope.request.requestId)
  return {
    answer,
    incoming: mine.filter((r) => r.type === 'incoming'),
    outgoing: mine.filter((r) => r.type === 'outgoing'),
    before,
    after,
  }
}

describe('a real ask-sdk-core skill, tracked with voice.instrument(builder)', () => {
  it('LaunchRequest: exact incoming and outgoing wire bodies and query strings', async () => {
    const skill = instrumentedSkill(voice).create()
    const envelope = launchRequest()
    const { answer, incoming, outgoing, before, after } = await run(skill, envelope)

    expect(answer.response).toEqual({
      outputSpeech: { type: 'SSML', ssml: '<speak>Welcome to Space Facts. Ask for a fact.</speak>' },
      reprompt: { outputSpeech: { type: 'SSML', ssml: '<speak>Ask for a fact.</speak>' } },
      shouldEndSession: false,
    })
    expect(incoming).toHaveLength(1)
    expect(query(incoming[0]!)).toEqual(QS_IN)
    // Spec: incoming voice record is { event } (no Lambda context here); serviceUser in the session attributes.
    expect(incoming[0]!.body).toEqual({ event: onWire(envelope, { firstName: 'Ada', plan: 'free' }) })

    expect(outgoing).toHaveLength(1)
    expect(query(outgoing[0]!)).toEqual(QS_OUT)
    expect(outgoing[0]!.body).toEqual({
      event: onWire(envelope, { firstName: 'Ada', plan: 'free' }),
      response: {
        version: '1.0',
        sessionAttributes: { serviceUser: { firstName: 'Ada', plan: 'free' } },
        response: {
          outputSpeech: { type: 'SSML', ssml: '<speak>Welcome to Space Facts. Ask for a fact.</speak>' },
          reprompt: { outputSpeech: { type: 'SSML', ssml: '<speak>Ask for a fact.</speak>' } },
          shouldEndSession: false,
        },
      },
      service_timestamp: expect.any(Number),
    })
    const ts = outgoing[0]!.body.service_timestamp as number
    expect(ts).toBeGreaterThanOrEqual(before)
    expect(ts).toBeLessThanOrEqual(after)
    // The tracking key and Alexa's API token never travel in a body.
    expect(incoming[0]!.raw).not.toContain('SECRET-API-ACCESS-TOKEN')
    expect(incoming[0]!.raw).not.toContain('test-key')
    // The skill's own answer carries no tracking metadata: setUserMetadata only feeds the records.
    expect(answer.sessionAttributes).toEqual({})
  })

  it('IntentRequest with slots: the outgoing intent sits inside `response`, session attributes as the skill set them', async () => {
    const skill = instrumentedSkill(voice).create()
    const envelope = intentRequest('GetFactIntent', { planet: 'Mars' }, { attributes: { visits: 2 } })
    const { answer, incoming, outgoing } = await run(skill, envelope)

    expect(incoming.map((r) => r.body)).toEqual([{ event: onWire(envelope) }])
    expect(outgoing).toHaveLength(1)
    expect(outgoing[0]!.body).toEqual({
      event: onWire(envelope),
      response: {
        version: '1.0',
        sessionAttributes: { visits: 2, lastPlanet: 'Mars' },
        response: {
          outputSpeech: { type: 'SSML', ssml: '<speak>A day on Mars is long.</speak>' },
          card: { type: 'Simple', title: 'Space fact', content: 'A day on Mars is long.' },
        },
        intent: { name: 'GetFactIntent', inputs: [{ name: 'planet', value: 'Mars' }], confidence: 1 },
      },
      service_timestamp: expect.any(Number),
    })
    expect(outgoing[0]!.body.intent).toBeUndefined() // never at the root for voice outgoing
    expect(answer.sessionAttributes).toEqual({ visits: 2, lastPlanet: 'Mars' })
    expect(errors).toEqual([])
  })

  it('FallbackIntent: setNotHandled puts {name: NotHandled} at the root of the incoming record', async () => {
    const skill = instrumentedSkill(voice).create()
    const envelope = intentRequest('AMAZON.FallbackIntent')
    const { incoming, outgoing } = await run(skill, envelope)
    expect(incoming.map((r) => r.body)).toEqual([{ event: onWire(envelope), intent: { name: 'NotHandled' } }])
    expect(outgoing[0]!.body.response.intent).toBeUndefined()
  })

  it('SessionEndedRequest: incoming record and the empty outgoing answer', async () => {
    const skill = instrumentedSkill(voice).create()
    const envelope = sessionEndedRequest()
    const { answer, incoming, outgoing } = await run(skill, envelope)
    expect(answer.response).toEqual({})
    expect(incoming.map((r) => r.body)).toEqual([{ event: onWire(envelope) }])
    expect(outgoing.map((r) => r.body)).toEqual([
      {
        event: onWire(envelope),
        response: { version: '1.0', sessionAttributes: {}, response: {} },
        service_timestamp: expect.any(Number),
      },
    ])
  })

  it('error path: the handler throws → incoming delivered, the error handler’s answer tracked as outgoing', async () => {
    const skill = instrumentedSkill(voice).create()
    const envelope = intentRequest('BoomIntent')
    const { answer, incoming, outgoing } = await run(skill, envelope)
    const expected = await untrackedSkill().create().invoke(intentRequest('BoomIntent'))

    expect(answer.response).toEqual({
      outputSpeech: { type: 'SSML', ssml: '<speak>Sorry, something went wrong.</speak>' },
    })
    expect(answer).toEqual(expected)
    expect(incoming.map((r) => r.body)).toEqual([{ event: onWire(envelope) }])
    expect(outgoing.map((r) => r.body)).toEqual([errorAnswerRecord(envelope)])
  })

  it('error path without an error handler: the skill rejects with its own error, the incoming record is still delivered', async () => {
    const skill = instrumentedSkill(voice, false).create()
    const envelope = intentRequest('BoomIntent')
    await expect(skill.invoke(envelope)).rejects.toThrow('the fact database is down')
    await tracker.flush()
    expect(sink.records.map((r) => [r.type, r.body])).toEqual([['incoming', { event: onWire(envelope) }]])
  })

  it('under a Lambda context: the cleaned context is sent and delivery is done before invoke resolves', async () => {
    const skill = instrumentedSkill(voice).create()
    const envelope = launchRequest()
    await skill.invoke(envelope, lambdaContext())
    // No tracker.flush() here: the response interceptor flushed before answering.
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
    const incoming = sink.records.find((r) => r.type === 'incoming')!
    expect(incoming.body).toEqual({
      event: onWire(envelope, { firstName: 'Ada', plan: 'free' }),
      context: lambdaContextOnWire,
    })
  })

  it('builder.lambda() (the callback handler ask-sdk builds) goes through instrument() too', async () => {
    const lambda = instrumentedSkill(voice).lambda()
    const envelope = intentRequest('BoomIntent')
    const answer = await new Promise<ResponseEnvelope>((resolve, reject) =>
      lambda(envelope, lambdaContext(), (err, result) => (err ? reject(err) : resolve(result as ResponseEnvelope))),
    )
    expect(answer.response).toEqual({
      outputSpeech: { type: 'SSML', ssml: '<speak>Sorry, something went wrong.</speak>' },
    })
    // Delivered before the callback was called: nothing lost when Lambda freezes.
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
  })

  it('an error path under a Lambda context is flushed before invoke resolves too', async () => {
    const skill = instrumentedSkill(voice).create()
    await skill.invoke(intentRequest('BoomIntent'), lambdaContext())
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
  })

  it('adding the interceptors by hand as well does not track twice', async () => {
    const skill = instrumentedSkill(voice)
      .addRequestInterceptors(voice.requestInterceptor)
      .addResponseInterceptors(voice.responseInterceptor)
      .create()
    const { incoming, outgoing } = await run(skill, launchRequest())
    expect([incoming.length, outgoing.length]).toEqual([1, 1])
  })
})

describe('the two interceptors alone (the issue’s snippet)', () => {
  it('track LaunchRequest and IntentRequest exactly like instrument()', async () => {
    const skill = interceptorSkill(voice).create()
    const envelope = intentRequest('GetFactIntent', { planet: 'Venus' })
    const { incoming, outgoing } = await run(skill, envelope)
    expect(incoming.map((r) => r.body)).toEqual([{ event: onWire(envelope) }])
    expect(outgoing.map((r) => r.body.response.intent)).toEqual([
      { name: 'GetFactIntent', inputs: [{ name: 'planet', value: 'Venus' }], confidence: 1 },
    ])
  })
  it('a throwing handler: the incoming record and the error handler’s answer are tracked, like instrument()', async () => {
    const envelope = intentRequest('BoomIntent')
    const { answer, incoming, outgoing } = await run(interceptorSkill(voice).create(), envelope)
    expect(answer).toEqual(await untrackedSkill().create().invoke(intentRequest('BoomIntent')))
    expect(incoming.map((r) => r.body)).toEqual([{ event: onWire(envelope) }])
    expect(outgoing.map((r) => r.body)).toEqual([errorAnswerRecord(envelope)])
  })

  it('a throwing handler under builder.lambda(): both records are delivered while Lambda waits for the event loop', async () => {
    const lambda = interceptorSkill(voice).lambda()
    const envelope = intentRequest('BoomIntent')
    await new Promise((resolve, reject) =>
      lambda(envelope, lambdaContext(), (err, result) => (err ? reject(err) : resolve(result))),
    )
    // What the runtime does next (callbackWaitsForEmptyEventLoop): the tracker's own flush completes.
    await new Promise((resolve) => setImmediate(resolve))
    expect((await tracker.flush(5000)).held).toBe(0)
    expect(sink.records.map((r) => r.type)).toEqual(['incoming', 'outgoing'])
  })

  it('no error handler: the skill rejects with its own error, and the incoming record is still tracked', async () => {
    const h = handlers(voice)
    const skill = SkillBuilders.custom()
      .addRequestHandlers(...h.request)
      .addRequestInterceptors(voice.requestInterceptor)
      .addResponseInterceptors(voice.responseInterceptor)
      .create()
    const envelope = intentRequest('BoomIntent')
    await expect(skill.invoke(envelope, lambdaContext(2_000))).rejects.toThrow('the fact database is down')
    // Held until the request's deadline inside the Lambda's time; flush() waits for it.
    const result = await tracker.flush(5_000)
    expect(result).toMatchObject({ delivered: true, held: 0 })
    expect(sink.records.map((r) => [r.type, r.body])).toEqual([
      ['incoming', { event: onWire(envelope), context: lambdaContextOnWire }],
    ])
  })

  it('a Lambda that times out (the handler never answers) still sends the incoming record in its remaining time', async () => {
    const skill = SkillBuilders.custom()
      .addRequestHandlers({ canHandle: () => true, handle: () => new Promise<never>(() => {}) })
      .addRequestInterceptors(voice.requestInterceptor)
      .addResponseInterceptors(voice.responseInterceptor)
      .create()
    const envelope = launchRequest()
    // 2 s left (standing still: see lambdaContext): the skill's deadline is 2 000 − 500 (safety
    // margin) − 800 (flush budget) = 700 ms from now, whatever the machine's speed.
    const timers = vi.spyOn(globalThis, 'setTimeout')
    void skill.invoke(envelope, lambdaContext(2_000))
    await new Promise<void>((resolve) => tracker.once('sent', () => resolve()))
    expect(timers.mock.calls.map(([, ms]) => ms)).toContain(2_000 - LAMBDA_SAFETY_MARGIN_MS - DEFAULT_FLUSH_TIMEOUT_MS)
    expect(sink.records.map((r) => r.type)).toEqual(['incoming'])
  })
})

describe('per-request state under concurrency', () => {
  it('200 concurrent invokes with different intents and slots never swap intents, NotHandled or user metadata', async () => {
    const skill = instrumentedSkill(voice).create()
    const planets = ['Mercury', 'Venus', 'Earth', 'Mars', 'Jupiter', 'Saturn', 'Uranus', 'Neptune']
    const envelopes = Array.from({ length: 200 }, (_, i) =>
      i % 5 === 0
        ? intentRequest('AMAZON.FallbackIntent', {}, { userId: `user-${i}` })
        : i % 7 === 0
          ? launchRequest({ userId: `user-${i}` })
          : intentRequest('GetFactIntent', { planet: `${planets[i % planets.length]}-${i}` }, { userId: `user-${i}` }),
    )
    const answers = await Promise.all(envelopes.map((e) => skill.invoke(e)))
    await tracker.flush()
    expect(sink.records).toHaveLength(400)

    const byRequest = new Map<string, { in?: Record<string, unknown>; out?: Record<string, unknown> }>()
    for (const r of sink.records) {
      const id = r.body.event.request.requestId as string
      const entry = byRequest.get(id) ?? {}
      entry[r.type === 'incoming' ? 'in' : 'out'] = r.body
      byRequest.set(id, entry)
    }
    envelopes.forEach((e, i) => {
      const rec = byRequest.get(e.request.requestId)!
      const out = rec.out as {
        response: { intent?: unknown; response: unknown; sessionAttributes: Record<string, unknown> }
      }
      const inc = rec.in as { intent?: unknown; event: { session: { attributes: Record<string, unknown> } } }
      expect(out.response.response).toEqual(answers[i]!.response)
      if (
        e.request.type === 'IntentRequest' &&
        (e.request as { intent: { name: string } }).intent.name === 'GetFactIntent'
      ) {
        const planet = (e.request as unknown as { intent: { slots: { planet: { value: string } } } }).intent.slots
          .planet.value
        expect(out.response.intent).toEqual({
          name: 'GetFactIntent',
          inputs: [{ name: 'planet', value: planet }],
          confidence: 1,
        })
        expect(inc.intent).toBeUndefined()
      } else if (e.request.type === 'IntentRequest') {
        expect(inc.intent).toEqual({ name: 'NotHandled' })
        expect(out.response.intent).toBeUndefined()
      } else {
        expect(inc.event.session.attributes.serviceUser).toEqual({ firstName: 'Ada', plan: 'free' })
        expect(out.response.sessionAttributes.serviceUser).toEqual({ firstName: 'Ada', plan: 'free' })
      }
      if (e.request.type !== 'LaunchRequest') expect(out.response.sessionAttributes.serviceUser).toBeUndefined()
    })
  })
})

describe('ignore list', () => {
  it('matches session.user.userId, and context.System.user.userId for session-less requests', async () => {
    const ignoring = createTracker({
      apiKey: 'test-key',
      baseUrl: sink.url,
      ignoreUserIds: ['amzn1.ask.account.TESTER'],
    })
    const v = alexaTracking(ignoring)
    const skill = instrumentedSkill(v).create()
    await skill.invoke(launchRequest({ userId: 'amzn1.ask.account.TESTER' }))
    await skill.invoke(audioPlayerRequest('amzn1.ask.account.TESTER'))
    const kept = audioPlayerRequest(USER)
    const answer = await skill.invoke(kept)
    await ignoring.close(2_000)
    expect(answer.response).toEqual({})
    expect(ignoring.stats().ignored).toBe(4)
    // Session-less: outgoing has no session attributes to carry, core writes {}.
    expect(sink.records.map((r) => [r.type, r.body])).toEqual(
      expect.arrayContaining([
        ['incoming', { event: onWire(kept) }],
        [
          'outgoing',
          {
            event: onWire(kept),
            response: { version: '1.0', sessionAttributes: {}, response: {} },
            service_timestamp: expect.any(Number),
          },
        ],
      ]),
    )
    expect(sink.records).toHaveLength(2)
  })
})

describe('never hurts the skill', () => {
  it('a closed tracker (every record dropped as `closed`) leaves the answers unchanged; problems go to onError', async () => {
    const skill = instrumentedSkill(voice).create()
    const reference = untrackedSkill().create()
    await tracker.close(100)
    for (const make of [
      launchRequest,
      () => intentRequest('GetFactIntent', { planet: 'Mars' }),
      () => intentRequest('BoomIntent'),
    ]) {
      const envelope = make()
      const got = (await skill.invoke(envelope, lambdaContext())) as ResponseEnvelope
      const want = (await reference.invoke(structuredClone(envelope))) as ResponseEnvelope
      expect(got).toEqual(want)
    }
    expect(errors.map((e) => e.code)).toContain('dropped_closed')
    expect(tracker.stats().droppedByReason.closed).toBeGreaterThan(0)
  })

  it('bad setter input is reported, not thrown into the handler', async () => {
    const skill = voice
      .instrument(SkillBuilders.custom())
      .addRequestHandlers({
        canHandle: () => true,
        handle: (input) => {
          voice.setOutgoingIntent(input, { name: 'x', confidence: 7 })
          voice.setUserMetadata(input, 'nope' as never)
          voice.setNotHandled({})
          return input.responseBuilder.speak('still here').getResponse()
        },
      })
      .create()
    const answer = await skill.invoke(launchRequest())
    expect(answer.response.outputSpeech).toEqual({ type: 'SSML', ssml: '<speak>still here</speak>' })
    expect(errors.map((e) => e.message)).toEqual([
      'setOutgoingIntent: `intent.confidence` must be a number from 0.0 to 1.0 (got number)',
      'setUserMetadata: `metadata` must be an object of user fields',
      'setNotHandled: `handlerInput` must be the ask-sdk handler input of the request being handled (or the event, inside voice.handler(fn))',
    ])
  })
})

describe('pauseHandler', () => {
  it('while the user is paused, the skill says nothing; the incoming record is still tracked', async () => {
    const skill = voice
      .instrument(SkillBuilders.custom())
      .addRequestHandlers(voice.pauseHandler, ...handlers(voice).request)
      .create()
    await tracker.pauses.setPaused(USER, true)
    const paused = launchRequest()
    const answer = await skill.invoke(paused)
    expect(answer.response).toEqual({})
    await tracker.pauses.setPaused(USER, false)
    const live = await skill.invoke(launchRequest())
    expect(live.response.outputSpeech).toEqual({
      type: 'SSML',
      ssml: '<speak>Welcome to Space Facts. Ask for a fact.</speak>',
    })
    await tracker.flush()
    expect(
      sink.records
        .map((r) => `${r.type}:${r.body.event.request.requestId === paused.request.requestId ? 'paused' : 'live'}`)
        .sort(),
    ).toEqual(['incoming:live', 'incoming:paused', 'outgoing:live'])
  })
})
