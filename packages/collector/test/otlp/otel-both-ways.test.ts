/**
 * Both directions at once, as an app that uses both would run: a bot tracking with
 * `@convotrack/core` + `otelTracking`, its OpenTelemetry SDK exporting every span (with the
 * records' span events, and their own short spans) to the same collector's `POST /v1/traces`.
 * The records come through `/track` carrying their trace id; the transcript links them to the
 * trace; the spans add no second copy of any message.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import { createTracker } from '@convotrack/core'
import { otelTracking } from '@convotrack/otel'
import { trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withOtlpExport } from '../support/otlp-capture'

let collector: Collector
beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    demoBot: false,
    bots: [{ name: 'shop', apiKey: 'shop-key' }],
    traceUrl: 'https://tempo.example/explore?traceId={traceId}',
  })
})
afterAll(async () => {
  await collector.close()
})

describe('@convotrack/otel and POST /v1/traces together', () => {
  it('records carry their trace into the transcript link; the exported spans add no message', async () => {
    const tracker = createTracker({ apiKey: 'shop-key', baseUrl: collector.url })
    const stop = otelTracking(tracker, { agentName: 'shop-bot' })
    let traceId = ''
    await withOtlpExport(
      `${collector.url}/v1/traces`,
      'protobuf',
      async () => {
        await trace.getTracer('shop-http').startActiveSpan('POST /webhook', async (span) => {
          traceId = span.spanContext().traceId
          tracker.universal.logIncoming({ text: 'where is my order?', userId: 'ann', conversationId: 'ord-1' })
          tracker.universal.logOutgoing({ text: 'It ships tomorrow.', userId: 'ann', conversationId: 'ord-1' })
          span.end()
        })
        // Outside any span: a short span of its own (scope @convotrack/otel), exported too.
        tracker.universal.logIncoming({ text: 'thanks', userId: 'ann', conversationId: 'ord-1' })
        expect((await tracker.flush(5_000)).delivered).toBe(true)
      },
      { headers: { authorization: 'Bearer shop-key' } },
    )
    stop()
    await tracker.close()

    const res = await fetch(`${collector.url}/api/transcript?bot=shop&thread=ord-1`)
    const data = (await res.json()) as {
      traceUrl: string
      messages: Array<{ text: string; otel?: { traceId?: string } }>
    }
    // Three messages, once each: the spans of the export were read as no chat turn.
    expect(data.messages.map((m) => m.text)).toEqual(['where is my order?', 'It ships tomorrow.', 'thanks'])
    expect(data.messages[0]?.otel?.traceId).toBe(traceId)
    expect(data.messages[1]?.otel?.traceId).toBe(traceId)
    expect(data.messages[2]?.otel?.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(data.messages[2]?.otel?.traceId).not.toBe(traceId)
    expect(data.traceUrl).toBe('https://tempo.example/explore?traceId={traceId}')
    const metrics = await (await fetch(`${collector.url}/metrics`)).text()
    // The app's span and the record's own span: both accepted, both ignored.
    expect(metrics).toMatch(/convotrack_otlp_spans_total\{outcome="ignored"\} 2\b/)
  })
})
