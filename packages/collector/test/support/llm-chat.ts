/**
 * A three-turn chat of a real LLM app, offline: the Vercel AI SDK's own `generateText` with the
 * mock model of its `ai/test`, instrumented by the SDK's own OpenTelemetry support (with the
 * globally registered tracer provider, as in an app), so the spans are exactly what the library
 * emits. Turn 2 calls a tool (two steps). The chat:
 *   user "hi" → "Hello! How can I help?"
 *   user "What is the weather in Paris?" → tool get_weather({city:"Paris"}) → "It is sunny in Paris, 21 °C."
 *   user "thanks" → "You're welcome!"
 * Each model call reports 10 × (step number) input tokens and 5 output tokens.
 */

import { LegacyOpenTelemetry, OpenTelemetry } from '@ai-sdk/otel'
import { USER_TEXTS } from './chat-script'

export { CHAT } from './chat-script'

import * as ai6 from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import * as ai7 from 'ai-v7'
import { MockLanguageModelV4 } from 'ai-v7/test'

/** The model calls of the chat: 4 (turn 2 has two steps), 5 output tokens each. */
export const MODEL_CALLS = 4
export const OUTPUT_TOKENS_PER_CALL = 5
/** Input tokens per model call: 10 for a turn's first step, 20 for its second. */
export const INPUT_TOKENS = [10, 10, 20, 10]
export const MODEL_ID = 'mock-chat-1'

type Prompt = { role: string; content: unknown }[]

/** The mock model's answer to a prompt: a tool call for the weather question, else text. */
function answer(prompt: Prompt): { kind: 'tool'; input: string } | { kind: 'text'; text: string } {
  const last = prompt[prompt.length - 1]
  if (last?.role === 'tool') return { kind: 'text', text: 'It is sunny in Paris, 21 °C.' }
  const text = JSON.stringify(last?.content ?? '')
  if (text.includes('weather')) return { kind: 'tool', input: JSON.stringify({ city: 'Paris' }) }
  if (text.includes('thanks')) return { kind: 'text', text: "You're welcome!" }
  return { kind: 'text', text: 'Hello! How can I help?' }
}

function result(prompt: Prompt) {
  const a = answer(prompt)
  const toolStep = prompt[prompt.length - 1]?.role === 'tool'
  return {
    content:
      a.kind === 'tool'
        ? [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName: 'get_weather', input: a.input }]
        : [{ type: 'text' as const, text: a.text }],
    finishReason: { unified: a.kind === 'tool' ? ('tool-calls' as const) : ('stop' as const), raw: undefined },
    usage: {
      inputTokens: { total: toolStep ? 20 : 10, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: OUTPUT_TOKENS_PER_CALL, text: undefined, reasoning: undefined },
    },
    warnings: [],
  }
}

/** The app's loop: each user message with the history so far, the answer's messages appended. */
async function converse<M>(user: (text: string) => M, answer: (history: M[]) => Promise<readonly M[]>): Promise<void> {
  const history: M[] = []
  for (const text of USER_TEXTS) {
    history.push(user(text))
    history.push(...(await answer(history)))
  }
}

const weather = async ({ city }: { city: string }) => ({ city, sky: 'sunny', celsius: 21 })

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const

/** AI SDK 6: `experimental_telemetry` with the ids in `metadata`. */
export async function chatAiSdk6(ids: { sessionId?: string; userId?: string }) {
  const model = new MockLanguageModelV3({
    modelId: MODEL_ID,
    doGenerate: async (options) => result(options.prompt as Prompt) as never,
  })
  const tools = {
    get_weather: ai6.tool({
      description: 'The weather of a city',
      inputSchema: ai6.jsonSchema<{ city: string }>(weatherSchema),
      execute: weather,
    }),
  }
  const metadata: Record<string, string> = {}
  if (ids.sessionId) metadata.sessionId = ids.sessionId
  if (ids.userId) metadata.userId = ids.userId
  await converse<ai6.ModelMessage>(
    (text) => ({ role: 'user', content: text }),
    async (messages) =>
      (
        await ai6.generateText({
          model,
          system: 'You are a helpful assistant.',
          messages,
          tools,
          stopWhen: ai6.stepCountIs(3),
          experimental_telemetry: { isEnabled: true, functionId: 'chat', metadata },
        })
      ).response.messages,
  )
}

/**
 * AI SDK 7 with `@ai-sdk/otel`: `OpenTelemetry` (GenAI conventions) or `LegacyOpenTelemetry`
 * (the AI SDK 6 names). Ids: `enrichSpan` sets `gen_ai.conversation.id` / `user.id` for the
 * former; the latter reads them from the runtime context (`includeRuntimeContext`).
 */
export async function chatAiSdk7(flavour: 'semconv' | 'legacy', ids: { conversationId?: string; userId?: string }) {
  const integration =
    flavour === 'semconv'
      ? new OpenTelemetry({
          enrichSpan: ({ spanType }) =>
            spanType === 'operation'
              ? {
                  ...(ids.conversationId ? { 'gen_ai.conversation.id': ids.conversationId } : {}),
                  ...(ids.userId ? { 'user.id': ids.userId } : {}),
                }
              : undefined,
        })
      : new LegacyOpenTelemetry()
  // registerTelemetry appends to a process-wide list: start from none, as a fresh app would.
  ;(globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] }).AI_SDK_TELEMETRY_INTEGRATIONS = []
  ai7.registerTelemetry(integration)
  const model = new MockLanguageModelV4({
    modelId: MODEL_ID,
    doGenerate: async (options) => result(options.prompt as Prompt) as never,
  })
  const tools = {
    get_weather: ai7.tool({
      description: 'The weather of a city',
      inputSchema: ai7.jsonSchema<{ city: string }>(weatherSchema),
      execute: weather,
    }),
  }
  const runtimeContext: Record<string, string> = {}
  if (ids.conversationId) runtimeContext.sessionId = ids.conversationId
  if (ids.userId) runtimeContext.userId = ids.userId
  await converse<ai7.ModelMessage>(
    (text) => ({ role: 'user', content: text }),
    async (messages) =>
      (
        await ai7.generateText({
          model,
          system: 'You are a helpful assistant.',
          messages,
          tools,
          stopWhen: ai7.stepCountIs(3),
          runtimeContext,
          telemetry: { functionId: 'chat', includeRuntimeContext: { sessionId: true, userId: true } },
        })
      ).response.messages,
  )
}
