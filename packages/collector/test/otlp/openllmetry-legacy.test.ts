/**
 * OpenLLMetry's older attribute style (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, usage as
 * `gen_ai.usage.prompt_tokens` — sometimes a string). The current `@traceloop/node-server-sdk`
 * sends the GenAI conventions instead (test/openllmetry-compat runs the real SDK); these
 * attributes are the ones the OpenLLMetry repository's own tests assert for its OpenAI
 * instrumentation (traceloop/openllmetry-js, packages/instrumentation-openai/test/
 * instrumentation.test.ts: "should set attributes in span for chat" and "… for tool calling"),
 * with the association properties its SDK adds (`traceloop.association.properties.*`).
 */
import { describe, expect, it } from 'vitest'
import { chatTurns, type OtlpSpan, turnRecords } from '../../src/otlp/index'

const TRACE = '5b8aa5a2d2c872e8321cf37308d69df2'
const span = (spanId: string, start: bigint, attributes: OtlpSpan['attributes']): OtlpSpan => ({
  traceId: TRACE,
  spanId,
  parentSpanId: 'aaaaaaaaaaaaaaaa',
  name: 'openai.chat',
  startTimeUnixNano: start,
  endTimeUnixNano: start + 1000n,
  attributes,
  scope: '@traceloop/instrumentation-openai',
  resource: { 'service.name': 'bot' },
})

const session = {
  'traceloop.association.properties.session_id': 'sess-9',
  'traceloop.association.properties.user_id': 'erin',
}

describe('OpenLLMetry legacy attributes (fixtures from its repository tests)', () => {
  it('a chat span: the last user prompt in, the completion out, string token counts read as numbers', () => {
    const { turns, ignored } = chatTurns([
      span('1111111111111111', 10n, {
        'llm.request.type': 'chat',
        'gen_ai.system': 'OpenAI',
        'gen_ai.request.model': 'gpt-3.5-turbo',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Tell me a joke about OpenTelemetry',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'Why did the trace go to therapy? It had too many unresolved spans.',
        'gen_ai.usage.prompt_tokens': '15',
        'gen_ai.usage.completion_tokens': '14',
        'llm.usage.total_tokens': '29',
        ...session,
      }),
    ])
    expect(ignored).toBe(0)
    const records = turns.flatMap(turnRecords)
    expect(records.map((r) => [r.type, r.body.text, r.body.conversationId, r.body.userId])).toEqual([
      ['incoming', 'Tell me a joke about OpenTelemetry', 'sess-9', 'erin'],
      ['outgoing', 'Why did the trace go to therapy? It had too many unresolved spans.', 'sess-9', 'erin'],
    ])
    expect(records[1]?.body.platformJson).toMatchObject({
      style: 'openllmetry',
      model: 'gpt-3.5-turbo',
      usage: { inputTokens: 15, outputTokens: 14 },
    })
  })

  it('a tool-calling span, then the answer after the tool: one turn, the tool call shown as such, tokens of both calls', () => {
    const { turns } = chatTurns([
      span('2222222222222222', 10n, {
        'gen_ai.request.model': 'gpt-4',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': "What's the weather like in Boston?",
        'llm.request.functions.0.name': 'get_current_weather',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.finish_reason': 'tool_calls',
        'gen_ai.completion.0.tool_calls.0.id': 'call_1',
        'gen_ai.completion.0.tool_calls.0.name': 'get_current_weather',
        'gen_ai.completion.0.tool_calls.0.arguments': '{"location":"Boston, MA"}',
        'gen_ai.usage.prompt_tokens': 82,
        'gen_ai.usage.completion_tokens': 18,
        ...session,
      }),
      span('3333333333333333', 20n, {
        'gen_ai.request.model': 'gpt-4',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': "What's the weather like in Boston?",
        'gen_ai.prompt.1.role': 'assistant',
        'gen_ai.prompt.1.tool_calls.0.name': 'get_current_weather',
        'gen_ai.prompt.2.role': 'tool',
        'gen_ai.prompt.2.content': '{"temperature":"22","unit":"celsius"}',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'It is 22 °C in Boston.',
        'gen_ai.usage.prompt_tokens': 120,
        'gen_ai.usage.completion_tokens': 9,
        ...session,
      }),
    ])
    const byKey = new Map(turns.flatMap(turnRecords).map((r) => [r.idempotencyKey, r]))
    const records = [...byKey.values()]
    expect(records.map((r) => [r.type, r.body.text])).toEqual([
      ['incoming', "What's the weather like in Boston?"],
      ['outgoing', 'It is 22 °C in Boston.'],
    ])
    expect(records[1]?.body.platformJson.toolCalls).toEqual([
      { id: 'call_1', name: 'get_current_weather', arguments: '{"location":"Boston, MA"}' },
    ])
    // Each model call's tokens once: 82 + 120 in, 18 + 9 out.
    const sum = records.reduce<[number, number]>(
      ([i, o], r) => [
        i + (r.body.platformJson.usage?.inputTokens ?? 0),
        o + (r.body.platformJson.usage?.outputTokens ?? 0),
      ],
      [0, 0],
    )
    expect(sum).toEqual([202, 27])
  })
})
