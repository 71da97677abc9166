/**
 * OpenLLMetry's own SDK (`@traceloop/node-server-sdk`, with its OpenAI instrumentation) sending
 * a three-turn chat, with a tool turn, to the collector's `POST /v1/traces` exactly as an app
 * would configure it: `baseUrl` = the collector, `apiKey` = the bot's tracking key (the SDK
 * sends `Authorization: Bearer <apiKey>` to `{baseUrl}/v1/traces`, protobuf). The OpenAI API
 * cannot run here: the official `openai` client talks to a local server that answers the chat
 * completions protocol (what the model says is scripted; everything else is the real thing).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Collector, startCollector } from '@convotrack/collector'
import * as traceloop from '@traceloop/node-server-sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHAT, USER_TEXTS } from '../../../packages/collector/test/support/chat-script'

let collector: Collector
let model: http.Server
let modelUrl: string

type Message = { role: string; content?: string | null }

/** The scripted model: a tool call for the weather question, then the answer; 10 (20 after a tool) + 5 tokens. */
function completion(body: { model: string; messages: Message[] }) {
  const last = body.messages[body.messages.length - 1] as Message
  const afterTool = last.role === 'tool'
  const asksWeather = !afterTool && String(last.content).includes('weather')
  const text = afterTool
    ? 'It is sunny in Paris, 21 °C.'
    : String(last.content).includes('thanks')
      ? "You're welcome!"
      : 'Hello! How can I help?'
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: 1_764_000_000,
    model: body.model,
    choices: [
      {
        index: 0,
        message: asksWeather
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              ],
            }
          : { role: 'assistant', content: text },
        finish_reason: asksWeather ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: afterTool ? 20 : 10, completion_tokens: 5, total_tokens: afterTool ? 25 : 15 },
  }
}

beforeAll(async () => {
  model = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(body)))
    })
  })
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve))
  modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    demoBot: false,
    bots: [{ name: 'agent', apiKey: 'agent-key' }],
  })
  traceloop.initialize({
    appName: 'agent',
    baseUrl: collector.url,
    apiKey: 'agent-key',
    disableBatch: false,
    instrumentModules: { openAI: OpenAI },
    silenceInitializationMessage: true,
  })
})
afterAll(async () => {
  await collector?.close()
  await new Promise((resolve) => model?.close(resolve))
})

describe('OpenLLMetry (@traceloop/node-server-sdk) into POST /v1/traces', () => {
  it('a three-turn chat with a tool turn is one conversation: the messages in order, the tool call shown as such, tokens once', async () => {
    const openai = new OpenAI({ apiKey: 'not-used', baseURL: modelUrl })
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ]
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = []
    await traceloop.withAssociationProperties({ session_id: 'llmetry-1', user_id: 'frank' }, async () => {
      for (const text of USER_TEXTS) {
        await traceloop.withWorkflow({ name: 'chat_turn' }, async () => {
          messages.push({ role: 'user', content: text })
          let answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools })
          const call = answer.choices[0]?.message.tool_calls?.[0]
          if (call && call.type === 'function') {
            messages.push(answer.choices[0]?.message as OpenAI.Chat.ChatCompletionMessageParam)
            const result = await traceloop.withTool({ name: 'get_weather' }, async () => ({
              city: 'Paris',
              celsius: 21,
            }))
            messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) })
            answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools })
          }
          messages.push({ role: 'assistant', content: answer.choices[0]?.message.content ?? '' })
        })
      }
    })
    await traceloop.forceFlush()

    const stored = await collector.store.transcript('agent', 'llmetry-1')
    expect(stored.map((m) => [m.direction, m.text])).toEqual(CHAT.map(([d, t]) => [d, t]))
    expect(new Set(stored.map((m) => m.userId))).toEqual(new Set(['frank']))
    const platformJson = await Promise.all(
      stored.map(async (m) => JSON.parse((await collector.store.record(m.recordId))?.raw ?? '{}').platformJson),
    )
    const out = platformJson.filter((_, i) => stored[i]?.direction === 'outgoing')
    expect(out.map((p) => p.usage)).toEqual([
      { inputTokens: 10, outputTokens: 5 },
      { inputTokens: 30, outputTokens: 10 },
      { inputTokens: 10, outputTokens: 5 },
    ])
    expect(out[1].toolCalls).toEqual([
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', result: expect.stringContaining('21') },
    ])
    expect(out.map((p) => p.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini'])
  })
})
