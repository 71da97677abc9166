import { type AlexaTracking, alexaTracking, type LambdaContextLike } from '@convotrack/alexa'
import { type ConvotrackError, createTracker, type Tracker } from '@convotrack/core'
import type { RequestEnvelope, ResponseEnvelope } from 'ask-sdk-model'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import {
  intentRequest,
  interceptorSkill,
  lambdaContext,
  lambdaContextOnWire,
  launchRequest,
  onWire,
  query,
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

const answer = (text: string): ResponseEnvelope => ({
  version: '1.0',
  sessionAttributes: { step: 2 },
  response: { outputSpeech: { type: 'PlainText', text }, shouldEndSession: true },
})

const outgoingOf = (envelope: RequestEnvelope, response: ResponseEnvelope, intent?: unknown) => ({
  event: onWire(envelope),
  response: intent ? { ...response, intent } : response,
  service_timestamp: expect.any(Number),
})

describe('voice.handler(fn): a skill without ask-sdk', () => {
  it('async handler: both records, flushed before the wrapper resolves (Lambda), exact bodies and query strings', async () => {
    const handler = voice.handler(async (event: RequestEnvelope) => {
      tracker.setOutgoingIntent({ name: 'Greet', confidence: 0.8 })
      return answer(`hello ${event.request.type}`)
    })
    const envelope = launchRequest()
    const result = await handler(envelope, lambdaContext())
    expect(result).toEqual(answer('hello LaunchRequest'))
    // no tracker.flush(): delivered before the handler resolved
    const incoming = sink.records.find((r) => r.type === 'incoming')!
    const outgoing = sink.records.find((r) => r.type === 'outgoing')!
    expect(query(incoming)).toEqual({ platform: 'alexa', type: 'incoming', v: '11.1.0-rest', apiKey: 'test-key' })
    expect(query(outgoing)).toEqual({ platform: 'alexa', type: 'outgoing', v: '11.1.0-rest', apiKey: 'test-key' })
    expect(incoming.body).toEqual({ event: onWire(envelope), context: lambdaContextOnWire })
    expect(outgoing.body).toEqual(
      outgoingOf(envelope, answer('hello LaunchRequest'), { name: 'Greet', confidence: 0.8 }),
    )
  })

  it('callback handler', async () => {
    const handler = voice.handler((_event: RequestEnvelope, _ctx, callback) => {
      setTimeout(() => callback(null, answer('via callback')), 5)
    })
    const envelope = launchRequest()
    expect(await handler(envelope, lambdaContext())).toEqual(answer('via callback'))
    expect(sink.records.find((r) => r.type === 'outgoing')!.body).toEqual(outgoingOf(envelope, answer('via callback')))
  })

  it('context.succeed, context.done and context.fail', async () => {
    const ok = voice.handler((_e: RequestEnvelope, ctx) => void setTimeout(() => ctx.succeed(answer('succeed')), 5))
    const done = voice.handler((_e: RequestEnvelope, ctx) => void setTimeout(() => ctx.done(null, answer('done')), 5))
    const boom = new Error('legacy failure')
    const fail = voice.handler((_e: RequestEnvelope, ctx) => void setTimeout(() => ctx.fail(boom), 5))
    const ctx = lambdaContext()
    let realSucceedCalled = false
    ctx.succeed = () => {
      realSucceedCalled = true
    }
    expect(await ok(launchRequest(), ctx)).toEqual(answer('succeed'))
    expect(await done(launchRequest(), lambdaContext())).toEqual(answer('done'))
    await expect(fail(launchRequest(), lambdaContext())).rejects.toBe(boom)
    // The handler's succeed answered through the wrapper, not the runtime's.
    expect(realSucceedCalled).toBe(false)
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'incoming', 'incoming', 'outgoing', 'outgoing'])
  })

  it('a throwing handler: the incoming record is delivered and the same error reaches Lambda', async () => {
    const boom = new Error('database down')
    const handler = voice.handler(async () => {
      throw boom
    })
    const envelope = intentRequest('GetFactIntent', { planet: 'Mars' })
    await expect(handler(envelope, lambdaContext())).rejects.toBe(boom)
    expect(sink.records.map((r) => [r.type, r.body])).toEqual([
      ['incoming', { event: onWire(envelope), context: lambdaContextOnWire }],
    ])
  })

  it('voice.set*(event, …) inside handler(fn) belongs to that call, even with 100 calls at once', async () => {
    const handler = voice.handler(async (event: RequestEnvelope) => {
      const planet = (event.request as unknown as { intent: { slots: { planet: { value: string } } } }).intent.slots
        .planet.value
      await new Promise((r) => setTimeout(r, Math.random() * 10))
      voice.setOutgoingIntent(event, { name: 'GetFactIntent', inputs: [{ name: 'planet', value: planet }] })
      if (planet.endsWith('0')) voice.setNotHandled(event)
      voice.setUserMetadata(event, { planet })
      await new Promise((r) => setTimeout(r, Math.random() * 10))
      return answer(planet)
    })
    const envelopes = Array.from({ length: 100 }, (_, i) => intentRequest('GetFactIntent', { planet: `p${i}` }))
    await Promise.all(envelopes.map((e) => handler(e)))
    await tracker.flush()
    expect(sink.records).toHaveLength(200)
    for (const r of sink.records) {
      const planet = r.body.event.request.intent.slots.planet.value
      expect(r.body.event.session.attributes.serviceUser).toEqual({ planet })
      if (r.type === 'outgoing') {
        expect(r.body.response.response.outputSpeech.text).toBe(planet)
        expect(r.body.response.intent).toEqual({ name: 'GetFactIntent', inputs: [{ name: 'planet', value: planet }] })
      } else expect(r.body.intent).toEqual(planet.endsWith('0') ? { name: 'NotHandled' } : undefined)
    }
  })

  it('events that are not Alexa requests (a warm-up ping) pass through untracked and unreported', async () => {
    const handler = voice.handler(async (event: { source: string }) => ({ pong: event.source }))
    expect(await handler({ source: 'warmer' }, lambdaContext())).toEqual({ pong: 'warmer' })
    await tracker.flush()
    expect(sink.records).toEqual([])
    expect(errors).toEqual([])
  })

  it('slow service: the wrapper waits at most the flush deadline, then answers', async () => {
    sink.faults.latencyMs = 5_000
    const flush = vi.spyOn(tracker, 'flush')
    const handler = alexaTracking(tracker, { flushTimeoutMs: 200 }).handler(async () => answer('quick'))
    expect(await handler(launchRequest(), lambdaContext())).toEqual(answer('quick'))
    expect(flush.mock.calls).toEqual([[200]]) // one wait, bounded by the deadline (core keeps to it)
    expect(await flush.mock.results[0]?.value).toMatchObject({ delivered: false }) // and it ran out
  })
})

describe('voice.handler(fn) around an ask-sdk skill with the interceptors', () => {
  it('tracks each request once, and flushes once', async () => {
    const skill = interceptorSkill(voice).create()
    const handler = voice.handler((event: RequestEnvelope, context: LambdaContextLike) => skill.invoke(event, context))
    const envelope = intentRequest('GetFactIntent', { planet: 'Saturn' })
    const result = await handler(envelope, lambdaContext())
    expect(result.response).toEqual({
      outputSpeech: { type: 'SSML', ssml: '<speak>A day on Saturn is long.</speak>' },
      card: { type: 'Simple', title: 'Space fact', content: 'A day on Saturn is long.' },
    })
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
    const out = sink.records.find((r) => r.type === 'outgoing')!
    expect(out.body.response.intent).toEqual({
      name: 'GetFactIntent',
      inputs: [{ name: 'planet', value: 'Saturn' }],
      confidence: 1,
    })
  })

  it('covers the error path the interceptors cannot see: the error handler’s answer is the outgoing record', async () => {
    const skill = interceptorSkill(voice).create()
    const handler = voice.handler((event: RequestEnvelope, context: LambdaContextLike) => skill.invoke(event, context))
    const envelope = intentRequest('BoomIntent')
    const result = await handler(envelope, lambdaContext())
    expect(result).toEqual(await untrackedSkill().create().invoke(intentRequest('BoomIntent')))
    const out = sink.records.find((r) => r.type === 'outgoing')!
    // As handler(fn) sees it: the whole envelope ask-sdk returned, with the intent set before the throw.
    expect(out.body).toEqual({
      event: onWire(envelope),
      response: { ...(result as unknown as Record<string, unknown>), intent: { name: 'BoomIntent' } },
      service_timestamp: expect.any(Number),
    })
    expect(sink.records.filter((r) => r.type === 'incoming')).toHaveLength(1)
  })

  it('the interceptors alone (no handler(fn), no instrument) track the error path: incoming and the error answer', async () => {
    const skill = interceptorSkill(voice).create()
    const envelope = intentRequest('BoomIntent')
    const got = (await skill.invoke(envelope)) as ResponseEnvelope
    expect((await tracker.flush(5000)).delivered).toBe(true)
    expect(sink.records.map((r) => r.type)).toEqual(['incoming', 'outgoing'])
    expect(sink.records[0]?.body).toEqual({ event: onWire(envelope) })
    expect(sink.records[1]?.body).toEqual({
      event: onWire(envelope),
      response: { version: '1.0', sessionAttributes: {}, response: got.response, intent: { name: 'BoomIntent' } },
      service_timestamp: expect.any(Number),
    })
  })
})
