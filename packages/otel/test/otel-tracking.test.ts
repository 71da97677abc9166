import { createTracker, type Tracker } from '@convotrack/core'
import { otelTracking, SCOPE_NAME } from '@convotrack/otel'
import { context, type Span, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

let sink: Sink
let tracker: Tracker
const contextManager = new AsyncLocalStorageContextManager()
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable())
})
afterAll(() => {
  context.disable()
})
beforeEach(async () => {
  sink = await startSink()
  tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
})
afterEach(async () => {
  await tracker.close(2_000)
  await sink.close()
})

describe('no tracer provider registered', () => {
  it('records go out exactly as without otelTracking, and nothing is recorded', async () => {
    const plain = createTracker({ apiKey: 'k', baseUrl: sink.url })
    const stop = otelTracking(tracker, { captureContent: true })
    const msg = { text: 'hi', userId: 'u1', conversationId: 'c1', platformJson: { a: 1 } }
    tracker.universal.logIncoming(msg)
    plain.universal.logIncoming(msg)
    const got = await sink.waitFor(2)
    await plain.close(2_000)
    expect(got[0]?.raw).toBe(got[1]?.raw)
    expect(got[0]?.body).toEqual(msg)
    stop()
  })
})

describe('with a tracer provider', () => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider)
  })
  afterAll(async () => {
    trace.disable()
    await provider.shutdown()
  })
  beforeEach(() => exporter.reset())
  const app = trace.getTracer('bot')
  const turn = <T>(fn: (span: Span) => T): T =>
    app.startActiveSpan('turn', (span) => {
      try {
        return fn(span)
      } finally {
        span.end()
      }
    })

  it('a record in a turn is an event on the active span, without text by default; the trace id goes into platformJson', async () => {
    otelTracking(tracker, { agentName: 'support-bot' })
    const traceId = turn((span) => {
      tracker.withTurn(() => {
        tracker.setIncomingIntent({ name: 'order.status' })
        tracker.universal.logIncoming({ text: 'where is my order', userId: 'u1', conversationId: 'c1' })
        tracker.universal.logOutgoing(
          { text: 'on its way', userId: 'u1', conversationId: 'c1', platformJson: { build: 7 } },
          { intent: { name: 'order.answer' } },
        )
      })
      return span.spanContext()
    })
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => s.name)).toEqual(['turn'])
    const events = spans[0]?.events ?? []
    expect(events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'convotrack.message',
        {
          'convotrack.platform': 'universal',
          'convotrack.direction': 'incoming',
          'gen_ai.conversation.id': 'c1',
          'user.id': 'u1',
          'gen_ai.agent.name': 'support-bot',
          'convotrack.intent': 'order.status',
          'convotrack.not_handled': false,
        },
      ],
      [
        'convotrack.message',
        {
          'convotrack.platform': 'universal',
          'convotrack.direction': 'outgoing',
          'gen_ai.conversation.id': 'c1',
          'user.id': 'u1',
          'gen_ai.agent.name': 'support-bot',
          'convotrack.intent': 'order.answer',
          'convotrack.not_handled': false,
        },
      ],
    ])
    const got = await sink.waitFor(2)
    expect(got.map((r) => r.body.platformJson)).toEqual([
      { traceId: traceId.traceId, spanId: traceId.spanId },
      { build: 7, traceId: traceId.traceId, spanId: traceId.spanId },
    ])
    expect(got.map((r) => r.body.text)).toEqual(['where is my order', 'on its way'])
  })

  it('captureContent: true puts the text on the event; NotHandled is said as such', async () => {
    otelTracking(tracker, { captureContent: true })
    turn(() =>
      tracker.withTurn(() => {
        tracker.setNotHandled()
        tracker.generic.logIncoming({ text: 'asdf', userId: 'u2' })
      }),
    )
    const event = exporter.getFinishedSpans()[0]?.events[0]
    expect(event?.attributes).toMatchObject({
      'convotrack.platform': 'generic',
      'gen_ai.conversation.id': 'u2',
      'convotrack.intent': 'NotHandled',
      'convotrack.not_handled': true,
      'convotrack.text': 'asdf',
    })
    await sink.waitFor(1)
  })

  it('without an active span each record is a short span of its own, in the trace its record names', async () => {
    otelTracking(tracker)
    tracker.universal.logIncoming({ text: 'hi', userId: 'u3' })
    tracker.logEvent({ type: 'customEvent', name: 'signup', userId: 'u3' })
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => [s.name, s.instrumentationScope.name, s.events.map((e) => e.name)])).toEqual([
      ['convotrack incoming', SCOPE_NAME, ['convotrack.message']],
      ['convotrack event', SCOPE_NAME, ['convotrack.event']],
    ])
    expect(spans[0]?.attributes).toMatchObject({ 'convotrack.direction': 'incoming', 'gen_ai.conversation.id': 'u3' })
    expect(spans[0]?.attributes['convotrack.text']).toBeUndefined()
    expect(spans[1]?.attributes).toMatchObject({ 'convotrack.direction': 'event', 'convotrack.event.name': 'signup' })
    expect(spans[1]?.attributes['convotrack.not_handled']).toBeUndefined()
    const got = await sink.waitFor(2)
    expect(got[0]?.body.platformJson).toEqual({
      traceId: spans[0]?.spanContext().traceId,
      spanId: spans[0]?.spanContext().spanId,
    })
    // Events are not messages: their body stays as sent.
    expect(got[1]?.body.platformJson).toBeUndefined()
  })

  it('traceIdInRecords: false leaves records as they are; the returned function stops it', async () => {
    const stop = otelTracking(tracker, { traceIdInRecords: false })
    turn(() => tracker.universal.logIncoming({ text: 'a', userId: 'u4' }))
    stop()
    turn(() => tracker.universal.logIncoming({ text: 'b', userId: 'u4' }))
    const got = await sink.waitFor(2)
    expect(got.map((r) => r.body)).toEqual([
      { text: 'a', userId: 'u4' },
      { text: 'b', userId: 'u4' },
    ])
    expect(exporter.getFinishedSpans().map((s) => s.events.length)).toEqual([1, 0])
  })

  it('a tracerProvider in the options is used instead of the global one', async () => {
    const own = new InMemorySpanExporter()
    const ownProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] })
    otelTracking(tracker, { tracerProvider: ownProvider })
    tracker.sms.logOutgoing({ text: 'code 1234', userId: '+15550100' })
    expect(own.getFinishedSpans().map((s) => s.name)).toEqual(['convotrack outgoing'])
    expect(exporter.getFinishedSpans()).toEqual([])
    await sink.waitFor(1)
    await ownProvider.shutdown()
  })
})
