import { gzipSync } from 'node:zlib'
import { type Collector, type CollectorOptions, SqliteRecordStore, startCollector } from '@convotrack/collector'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { chatTurns, decodeTraceBody } from '../../src/otlp/index'
import { fields } from '../../src/otlp/protobuf'
import { CHAT, chatAiSdk6, chatAiSdk7, MODEL_ID } from '../support/llm-chat'
import { captureServer, withOtlpExport } from '../support/otlp-capture'

let collector: Collector
beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    demoBot: false,
    maxOtlpBytes: 256 * 1024,
    bots: [
      { name: 'llm6', apiKey: 'llm6-key' },
      { name: 'llm7', apiKey: 'llm7-key' },
      { name: 'plain', apiKey: 'plain-key' },
    ],
  })
})
afterAll(async () => {
  await collector.close()
})

const tracesUrl = () => `${collector.url}/v1/traces`

/** The stored conversation: messages in order, with their records' platformJson. */
async function conversation(bot: string, thread: string) {
  const messages = await collector.store.transcript(bot, thread)
  return Promise.all(
    messages.map(async (m) => {
      const record = await collector.store.record(m.recordId)
      const raw = JSON.parse(record?.raw ?? '{}') as { platformJson?: Record<string, unknown> }
      return { direction: m.direction, text: m.text, userId: m.userId, platformJson: raw.platformJson ?? {} }
    }),
  )
}

function expectStoredChat(chat: Awaited<ReturnType<typeof conversation>>, userId: string) {
  expect(chat.map((m) => [m.direction, m.text])).toEqual(CHAT.map(([d, t]) => [d, t]))
  expect(new Set(chat.map((m) => m.userId))).toEqual(new Set([userId]))
  const out = chat.filter((m) => m.direction === 'outgoing')
  const sum = out.reduce(
    (s, m) => {
      const u = m.platformJson.usage as { inputTokens: number; outputTokens: number } | undefined
      return { input: s.input + (u?.inputTokens ?? 0), output: s.output + (u?.outputTokens ?? 0) }
    },
    { input: 0, output: 0 },
  )
  expect(sum).toEqual({ input: 50, output: 20 })
  expect(out.map((m) => m.platformJson.model)).toEqual([MODEL_ID, MODEL_ID, MODEL_ID])
  expect((out[1]?.platformJson.toolCalls as { name: string }[] | undefined)?.map((c) => c.name)).toEqual([
    'get_weather',
  ])
}

/** A GenAI turn's attributes (one user message, one answer) and `extra`, as OTLP/JSON attributes. */
function genAiAttributes(input: string, output: string, extra: Record<string, string | number>) {
  return Object.entries({
    'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: input }] }]),
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: output }] }]),
    ...extra,
  }).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } }))
}

/** Posts spans of one instrumentation scope as OTLP/JSON. */
function postJsonSpans(url: string, apiKey: string, spans: unknown[]): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ scope: { name: 'my-llm' }, spans }] }] }),
  })
}

const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n)

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${collector.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`))
  return line ? Number(line.split(' ').pop()) : 0
}

describe('POST /v1/traces with the real libraries and exporters', () => {
  it('AI SDK 6 through the protobuf exporter (Authorization: Bearer): one conversation, six messages in order, tokens once, a tool call', async () => {
    await withOtlpExport(tracesUrl(), 'protobuf', () => chatAiSdk6({ sessionId: 'chat-6', userId: 'alice' }), {
      headers: { authorization: 'Bearer llm6-key' },
    })
    expectStoredChat(await conversation('llm6', 'chat-6'), 'alice')
  })

  it('AI SDK 7 with @ai-sdk/otel through the JSON exporter, gzip, x-convotrack-api-key', async () => {
    await withOtlpExport(
      tracesUrl(),
      'json',
      () => chatAiSdk7('semconv', { conversationId: 'chat-7', userId: 'bob' }),
      { headers: { 'x-convotrack-api-key': 'llm7-key' }, compression: 'gzip' },
    )
    expectStoredChat(await conversation('llm7', 'chat-7'), 'bob')
  })

  it.each([
    ['AI SDK 6', 'simple-6', () => chatAiSdk6({ sessionId: 'simple-6', userId: 'erin' })],
    [
      'AI SDK 7 (LegacyOpenTelemetry)',
      'simple-7l',
      () => chatAiSdk7('legacy', { conversationId: 'simple-7l', userId: 'erin' }),
    ],
    [
      'AI SDK 7 (GenAI conventions)',
      'simple-7',
      () => chatAiSdk7('semconv', { conversationId: 'simple-7', userId: 'erin' }),
    ],
  ])(
    '%s with a SimpleSpanProcessor (one span per request, children first): the tool call, its arguments and result are kept',
    async (_, thread, chat) => {
      // What the same chat exported in batches leaves out (spans that are not part of a turn).
      const batched = await captureServer()
      let batchIgnored = 0
      try {
        await withOtlpExport(batched.url, 'json', chat)
        for (const r of batched.requests) batchIgnored += chatTurns(decodeTraceBody(r.body, 'json').spans).ignored
      } finally {
        await batched.close()
      }
      const ignoredBefore = await metric('convotrack_otlp_spans_total', 'outcome="ignored"')
      await withOtlpExport(tracesUrl(), 'json', chat, {
        headers: { authorization: 'Bearer llm6-key' },
        processor: 'simple',
      })
      const chatStored = await conversation('llm6', thread)
      expectStoredChat(chatStored, 'erin')
      const calls = (chatStored[3]?.platformJson.toolCalls ?? []) as Array<{ arguments: string; result: string }>
      const call = calls[0]
      expect(JSON.parse(call?.arguments ?? 'null')).toEqual({ city: 'Paris' })
      expect(JSON.parse(call?.result ?? 'null')).toEqual({ city: 'Paris', sky: 'sunny', celsius: 21 })
      // The model-call and tool spans waited for their turn and were folded into it: no more is
      // ignored than when a turn's spans come together.
      expect(await metric('convotrack_otlp_spans_total', 'outcome="ignored"')).toBe(ignoredBefore + batchIgnored)
    },
  )

  it('a GenAI agent span and its model span in separate requests (model span first): one turn, nothing refused', async () => {
    const span = (spanId: string, parentSpanId: string | undefined, op: string, start: number) => ({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId,
      ...(parentSpanId ? { parentSpanId } : {}),
      name: `${op} gpt-x`,
      startTimeUnixNano: nanos(Date.now() - 5000 + start),
      endTimeUnixNano: nanos(Date.now() - 1000 - start),
      attributes: genAiAttributes('Hola', '¡Hola! ¿Qué tal?', {
        'gen_ai.operation.name': op,
        'gen_ai.conversation.id': 'split-1',
        'gen_ai.request.model': 'gpt-x',
        'gen_ai.usage.input_tokens': 7,
        'gen_ai.usage.output_tokens': 4,
      }),
    })
    const post = async (s: ReturnType<typeof span>) => {
      const res = await postJsonSpans(tracesUrl(), 'llm7-key', [s])
      expect(res.status).toBe(200)
      return res.json()
    }
    expect(await post(span('00f067aa0ba902b7', '53995c3f42cd8ad8', 'chat', 100))).toEqual({})
    expect(await post(span('53995c3f42cd8ad8', undefined, 'invoke_agent', 0))).toEqual({})
    const chat = await conversation('llm7', 'split-1')
    expect(chat.map((m) => [m.direction, m.text])).toEqual([
      ['incoming', 'Hola'],
      ['outgoing', '¡Hola! ¿Qué tal?'],
    ])
    expect(chat[1]?.platformJson.usage).toEqual({ inputTokens: 7, outputTokens: 4 })
  })

  it('the same export sent twice stores once; spans that are not chat turns are counted and said', async () => {
    const capture = await captureServer()
    try {
      await withOtlpExport(capture.url, 'protobuf', () => chatAiSdk6({ sessionId: 'twice', userId: 'carol' }))
    } finally {
      await capture.close()
    }
    const ignoredBefore = await metric('convotrack_otlp_spans_total', 'outcome="ignored"')
    const post = (body: Buffer) =>
      fetch(tracesUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', authorization: 'Bearer llm6-key' },
        body: new Uint8Array(body),
      })
    for (let round = 0; round < 2; round++) {
      for (const r of capture.requests) {
        const res = await post(r.body)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe('application/x-protobuf')
        // The AI SDK 6 model-call and tool spans are folded into their turns: nothing ignored.
        expect(Buffer.from(await res.arrayBuffer()).length).toBe(0)
      }
      expect((await conversation('llm6', 'twice')).map((m) => m.text)).toEqual(CHAT.map(([, t]) => t))
    }
    // A span that is no chat turn: accepted, counted, and said in partialSuccess.errorMessage.
    const res = await fetch(tracesUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer llm6-key' },
      body: JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                scope: { name: 'http' },
                spans: [
                  { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'GET /health' },
                ],
              },
            ],
          },
        ],
      }),
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      partialSuccess: { rejectedSpans: '0', errorMessage: '1 span is not part of a chat turn and was ignored' },
    })
    expect(await metric('convotrack_otlp_spans_total', 'outcome="ignored"')).toBe(ignoredBefore + 1)
  })
})

describe('POST /v1/traces: the OTLP rules', () => {
  const post = (body: string | Buffer, headers: Record<string, string>) =>
    fetch(tracesUrl(), { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) })
  const json = { 'content-type': 'application/json', authorization: 'Bearer plain-key' }
  const proto = { 'content-type': 'application/x-protobuf', authorization: 'Bearer plain-key' }

  it('unknown JSON fields are ignored: {"foo":1} is a valid empty request', async () => {
    const res = await post('{"foo":1}', json)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({})
  })

  it('a malformed body is 400 with an OTLP Status in the request’s own encoding', async () => {
    const bad = await post('{"resourceSpans":', json)
    expect(bad.status).toBe(400)
    expect(bad.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await bad.json()).toEqual({ code: 3, message: 'the body is not valid JSON' })

    const shape = await post('{"resourceSpans":{}}', json)
    expect(shape.status).toBe(400)
    expect(await shape.json()).toEqual({ code: 3, message: '`resourceSpans` must be an array' })

    const truncated = await post(Buffer.from([0x0a, 0x05, 0x01]), proto)
    expect(truncated.status).toBe(400)
    expect(truncated.headers.get('content-type')).toBe('application/x-protobuf')
    const status = [...fields(Buffer.from(await truncated.arrayBuffer()))]
    expect(status.map((f) => [f.no, f.wire === 0 ? Number(f.value) : f.value.toString('utf8')])).toEqual([
      [1, 3],
      [2, 'the body is not a valid protobuf ExportTraceServiceRequest: truncated field'],
    ])
  })

  it('a wrong or missing key is 401; another media type is 415', async () => {
    const wrong = await post('{}', { 'content-type': 'application/json', authorization: 'Bearer nope' })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual({ code: 16, message: 'the API key is not the key of a registered bot' })
    const missing = await post('{}', { 'content-type': 'application/json' })
    expect(missing.status).toBe(401)
    expect((await missing.json()).message).toMatch(/Authorization: Bearer <apiKey>/)
    const text = await post('{}', { 'content-type': 'text/plain', authorization: 'Bearer plain-key' })
    expect(text.status).toBe(415)
  })

  it('a body over maxOtlpBytes is 413, also when it only grows that large once decompressed', async () => {
    const big = await post(Buffer.alloc(300 * 1024), proto)
    expect(big.status).toBe(413)
    const bomb = gzipSync(Buffer.from(`{"foo":"${'x'.repeat(1024 * 1024)}"}`))
    expect(bomb.length).toBeLessThan(256 * 1024)
    const res = await post(bomb, { ...json, 'content-encoding': 'gzip' })
    expect(res.status).toBe(413)
    expect((await res.json()).code).toBe(3)
  })

  it('a span with a bad id is rejected and counted in partialSuccess; the others are kept', async () => {
    const res = await post(
      JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'xyz', spanId: 'b7ad6b7169203331', name: 'x' }] }] }],
      }),
      json,
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      partialSuccess: {
        rejectedSpans: '1',
        errorMessage: '1 span was rejected: a trace id must be 16 bytes and a span id 8',
      },
    })
  })
})

describe('POST /v1/traces when the store is down', () => {
  let down: Collector | undefined
  afterEach(async () => {
    await down?.close()
  })

  it('answers 503 with Retry-After and an OTLP Status (UNAVAILABLE): the exporter keeps the spans and retries', async () => {
    const store = new SqliteRecordStore(':memory:')
    down = await startCollector({ port: 0, demoBot: false, store, bots: [{ name: 'b', apiKey: 'b-key' }] })
    const capture = await captureServer()
    try {
      await withOtlpExport(capture.url, 'json', () => chatAiSdk6({ sessionId: 's', userId: 'u' }))
    } finally {
      await capture.close()
    }
    await store.close()
    const res = await fetch(`${down.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer b-key' },
      body: new Uint8Array(capture.requests[0]?.body ?? Buffer.alloc(0)),
    })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toEqual({
      code: 14,
      message: 'the record store is unavailable; nothing of this export was stored, retry it',
    })
  })
})

/** A collector of its own with the bot `llm` (key `llm-key`). */
const llmCollector = (options: Pick<CollectorOptions, 'traceUrl' | 'llmPrices'>) =>
  startCollector({ port: 0, db: ':memory:', demoBot: false, bots: [{ name: 'llm', apiKey: 'llm-key' }], ...options })

describe('the transcript of an OTLP conversation (dashboard API)', () => {
  it('each message has its trace, the answers their model, tokens, cost and tool calls; the head the conversation total; a trace link template', async () => {
    const priced = await llmCollector({
      traceUrl: 'http://localhost:16686/trace/{traceId}',
      llmPrices: { [MODEL_ID]: { input: 1, output: 2 } },
    })
    try {
      await withOtlpExport(
        `${priced.url}/v1/traces`,
        'protobuf',
        () => chatAiSdk6({ sessionId: 'web-1', userId: 'u' }),
        {
          headers: { authorization: 'Bearer llm-key' },
        },
      )
      const res = await fetch(`${priced.url}/api/transcript?bot=llm&thread=web-1`)
      const data = (await res.json()) as {
        traceUrl: string
        usage: { inputTokens: number; outputTokens: number; cost: number }
        messages: Array<{ direction: string; text: string; otel?: Record<string, unknown> }>
      }
      expect(data.traceUrl).toBe('http://localhost:16686/trace/{traceId}')
      // 50 input tokens at $1/M and 20 output tokens at $2/M.
      expect(data.usage).toEqual({ inputTokens: 50, outputTokens: 20, cost: (50 * 1 + 20 * 2) / 1_000_000 })
      expect(data.messages.map((m) => [m.direction, m.text])).toEqual(CHAT.map(([d, t]) => [d, t]))
      for (const m of data.messages) expect(m.otel?.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(data.messages[3]?.otel).toMatchObject({
        model: MODEL_ID,
        usage: { inputTokens: 30, outputTokens: 10 },
        cost: (30 * 1 + 10 * 2) / 1_000_000,
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      })
      expect(data.messages[2]?.otel?.toolCalls).toBeUndefined()
    } finally {
      await priced.close()
    }
  })

  it("the usage report: days of event time (the spans' times) in the request's tz, cost from llmPrices, from the summary", async () => {
    const priced = await llmCollector({ llmPrices: { 'gpt-x': { input: 1, output: 2 } } })
    try {
      // Two days ago at 23:30 UTC: already the next day in Tokyo (UTC+9).
      const day = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 2 * 86_400_000
      const at = day + 23.5 * 3_600_000
      const res = await postJsonSpans(`${priced.url}/v1/traces`, 'llm-key', [
        {
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
          spanId: '00f067aa0ba902b7',
          name: 'chat gpt-x',
          startTimeUnixNano: nanos(at),
          endTimeUnixNano: nanos(at + 2000),
          attributes: genAiAttributes('late?', 'yes', {
            'gen_ai.operation.name': 'chat',
            'gen_ai.conversation.id': 'night',
            'gen_ai.request.model': 'gpt-x',
            'gen_ai.usage.input_tokens': 1000,
            'gen_ai.usage.output_tokens': 500,
          }),
        },
      ])
      expect(res.status).toBe(200)
      const usage = async (query: string) =>
        (await (await fetch(`${priced.url}/api/reports/usage?bot=llm&${query}`)).json()) as {
          days: Array<{ day: string; model: string; messages: number; inputTokens: number; cost: number }>
          total: { messages: number; inputTokens: number; outputTokens: number; cost: number }
        }
      const line = { model: 'gpt-x', messages: 1, conversations: 1, inputTokens: 1000, outputTokens: 500, cost: 0.002 }
      const utc = new Date(day).toISOString().slice(0, 10)
      const tokyo = new Date(day + 86_400_000).toISOString().slice(0, 10)
      expect((await usage('days=7')).days).toEqual([{ day: utc, ...line }])
      expect((await usage('days=7&tz=Asia/Tokyo')).days).toEqual([{ day: tokyo, ...line }])
      expect((await usage(`from=${day}&to=${day + 86_400_000}`)).total).toEqual({
        messages: 1,
        inputTokens: 1000,
        outputTokens: 500,
        cost: 0.002,
      })
      // The last day alone (today): the answer happened before it.
      expect((await usage('days=1')).days).toEqual([])
    } finally {
      await priced.close()
    }
  })

  it('refuses a traceUrl without {traceId} and a price that is not a number, naming the option', async () => {
    await expect(startCollector({ port: 0, traceUrl: 'http://jaeger/trace/' })).rejects.toThrow(
      /traceUrl must be .*\{traceId\}/,
    )
    await expect(
      startCollector({ port: 0, llmPrices: { m: { input: '1' as unknown as number, output: 2 } } }),
    ).rejects.toThrow(/llmPrices\["m"\] must be/)
  })
})
