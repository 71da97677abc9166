import { gunzipSync } from 'node:zlib'
import { trace } from '@opentelemetry/api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  chatTurns,
  decodeTraceBody,
  type OtlpEncoding,
  type OtlpSpan,
  otlpEncoding,
  type TurnRecord,
  turnRecords,
} from '../../src/otlp/index'
import { CHAT, chatAiSdk6, chatAiSdk7, MODEL_ID } from '../support/llm-chat'
import { type CapturedRequest, captureServer, type ExportEncoding, withOtlpExport } from '../support/otlp-capture'

let server: Awaited<ReturnType<typeof captureServer>>
beforeEach(async () => {
  server = await captureServer()
})
afterEach(async () => {
  await server.close()
})

/** What the route does with each request, and a store's idempotency: one record per key. */
function recordsOf(requests: readonly CapturedRequest[]): { records: TurnRecord[]; ignored: number; spans: number } {
  const byKey = new Map<string, TurnRecord>()
  let ignored = 0
  let spans = 0
  for (const r of requests) {
    const body = r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.body
    const decoded = decodeTraceBody(body, otlpEncoding(r.headers['content-type']) as OtlpEncoding)
    spans += decoded.spans.length
    const { turns, ignored: notTurns } = chatTurns(decoded.spans)
    ignored += notTurns
    for (const t of turns)
      for (const rec of turnRecords(t)) if (!byKey.has(rec.idempotencyKey)) byKey.set(rec.idempotencyKey, rec)
  }
  return { records: [...byKey.values()], ignored, spans }
}

function expectTheChat(records: TurnRecord[], conversationId: string, userId: string) {
  expect(records.map((r) => [r.type, r.body.text])).toEqual(CHAT.map(([d, t]) => [d, t]))
  expect(new Set(records.map((r) => r.body.conversationId))).toEqual(new Set([conversationId]))
  expect(new Set(records.map((r) => r.body.userId))).toEqual(new Set([userId]))
  const outgoing = records.filter((r) => r.type === 'outgoing')
  // Usage counted once per turn: 10/5, then the tool turn's two model calls 10+20/5+5, then 10/5.
  expect(outgoing.map((r) => r.body.platformJson.usage)).toEqual([
    { inputTokens: 10, outputTokens: 5 },
    { inputTokens: 30, outputTokens: 10 },
    { inputTokens: 10, outputTokens: 5 },
  ])
  expect(outgoing.map((r) => r.body.platformJson.model)).toEqual([MODEL_ID, MODEL_ID, MODEL_ID])
  // The tool turn shows its tool call, with the model's arguments and the tool's result.
  expect(outgoing.map((r) => r.body.platformJson.toolCalls?.map((c) => c.name))).toEqual([
    undefined,
    ['get_weather'],
    undefined,
  ])
  const call = outgoing[1]?.body.platformJson.toolCalls?.[0]
  expect(JSON.parse(call?.arguments ?? 'null')).toEqual({ city: 'Paris' })
  expect(JSON.parse(call?.result ?? 'null')).toEqual({ city: 'Paris', sky: 'sunny', celsius: 21 })
  // Every record names its trace; the incoming texts are user text only (no tool output).
  for (const r of records) expect(r.body.platformJson.traceId).toMatch(/^[0-9a-f]{32}$/)
  expect(records.filter((r) => r.type === 'incoming').map((r) => r.body.platformJson.toolCalls)).toEqual([
    undefined,
    undefined,
    undefined,
  ])
}

describe.each<[ExportEncoding, 'gzip' | 'none']>([
  ['protobuf', 'none'],
  ['json', 'gzip'],
])('the real libraries through the real %s exporter (%s)', (encoding, compression) => {
  it('AI SDK 6 (experimental_telemetry with metadata): one conversation, six messages in order, tokens once, a tool call', async () => {
    await withOtlpExport(server.url, encoding, () => chatAiSdk6({ sessionId: 'sess-6', userId: 'alice' }), {
      compression,
    })
    expect(server.requests.length).toBeGreaterThan(0)
    expect(otlpEncoding(server.requests[0]?.headers['content-type'])).toBe(encoding)
    expect(server.requests[0]?.headers['content-encoding']).toBe(compression === 'gzip' ? 'gzip' : undefined)
    const { records } = recordsOf(server.requests)
    expectTheChat(records, 'sess-6', 'alice')
    expect(new Set(records.map((r) => r.body.platformJson.style))).toEqual(new Set(['ai-sdk']))
  })

  it('AI SDK 7 with @ai-sdk/otel (GenAI conventions, ids set by enrichSpan)', async () => {
    await withOtlpExport(
      server.url,
      encoding,
      () => chatAiSdk7('semconv', { conversationId: 'conv-7', userId: 'bob' }),
      { compression },
    )
    const { records } = recordsOf(server.requests)
    expectTheChat(records, 'conv-7', 'bob')
    expect(new Set(records.map((r) => r.body.platformJson.style))).toEqual(new Set(['genai']))
    expect(records[1]?.body.platformJson.agentName).toBe('chat')
  })

  it("AI SDK 7 with @ai-sdk/otel's LegacyOpenTelemetry (AI SDK 6 names, ids in ai.settings.context)", async () => {
    await withOtlpExport(
      server.url,
      encoding,
      () => chatAiSdk7('legacy', { conversationId: 'conv-7l', userId: 'carol' }),
      { compression },
    )
    const { records } = recordsOf(server.requests)
    expectTheChat(records, 'conv-7l', 'carol')
  })
})

describe('ids, nesting and spans that are not turns', () => {
  it('without any id each turn is a conversation of its own trace, flagged as such', async () => {
    await withOtlpExport(server.url, 'protobuf', () => chatAiSdk6({}))
    const { records } = recordsOf(server.requests)
    expect(records).toHaveLength(6)
    const conversations = [...new Set(records.map((r) => r.body.conversationId))]
    expect(conversations).toHaveLength(3)
    for (const r of records) {
      expect(r.body.conversationId).toBe(r.body.platformJson.traceId)
      expect(r.body.userId).toBe(r.body.conversationId)
      expect(r.body.platformJson.noConversationId).toBe(true)
    }
  })

  it("the app's own span around the turn gives the ids (session.id) and counts as not a turn", async () => {
    await withOtlpExport(server.url, 'json', async () => {
      const app = trace.getTracer('bot-http')
      await app.startActiveSpan('POST /chat', async (span) => {
        span.setAttribute('session.id', 'web-42')
        span.setAttribute('enduser.id', 'dave')
        await chatAiSdk6({})
        span.end()
      })
    })
    const { records, ignored } = recordsOf(server.requests)
    expect(records.map((r) => r.body.text)).toEqual(CHAT.map(([, t]) => t))
    expect(new Set(records.map((r) => `${r.body.conversationId}|${r.body.userId}`))).toEqual(new Set(['web-42|dave']))
    expect(ignored).toBe(1)
    // One trace for the three turns: their keys still differ (direction + text).
    expect(new Set(records.map((r) => r.body.platformJson.traceId)).size).toBe(1)
  })

  it('the same spans exported twice give the same records (same idempotency keys)', async () => {
    await withOtlpExport(server.url, 'protobuf', () => chatAiSdk6({ sessionId: 's', userId: 'u' }))
    const once = recordsOf(server.requests).records
    const twice = recordsOf([...server.requests, ...server.requests]).records
    expect(twice.map((r) => r.idempotencyKey)).toEqual(once.map((r) => r.idempotencyKey))
    expect(once.every((r) => /^otlp:[0-9a-f]{32}:(in|out):[0-9a-f]{16}$/.test(r.idempotencyKey))).toBe(true)
  })

  it.each([
    ['AI SDK 6', () => chatAiSdk6({ sessionId: 'c', userId: 'u' })],
    ['AI SDK 7', () => chatAiSdk7('semconv', { conversationId: 'c', userId: 'u' })],
  ])('%s spans exported one per request (SimpleSpanProcessor): each message once, usage once', async (_, chat) => {
    await withOtlpExport(server.url, 'json', chat, { processor: 'simple' })
    expect(server.requests.length).toBeGreaterThan(6)
    const { records } = recordsOf(server.requests)
    expect(records.map((r) => [r.type, r.body.text])).toEqual(CHAT.map(([d, t]) => [d, t]))
    expect(records.reduce((n, r) => n + (r.body.platformJson.usage?.inputTokens ?? 0), 0)).toBe(50)
    expect(records.reduce((n, r) => n + (r.body.platformJson.usage?.outputTokens ?? 0), 0)).toBe(20)
  })

  it('spans of @convotrack/otel are not read as turns (their records reach the collector through the tracker)', () => {
    const span: OtlpSpan = {
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      parentSpanId: undefined,
      name: 'convotrack incoming',
      startTimeUnixNano: 1n,
      endTimeUnixNano: 2n,
      attributes: { 'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]' },
      scope: '@convotrack/otel',
      resource: {},
    }
    expect(chatTurns([span])).toEqual({ turns: [], ignored: 1, unused: [span] })
  })
})
