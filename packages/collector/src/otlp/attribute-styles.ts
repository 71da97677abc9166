import type { AttributeValue, OtlpSpan } from './trace-request'

/**
 * What one span says about a chat turn, in the three attribute styles LLM libraries use:
 * - `genai`: the current GenAI semantic conventions (`gen_ai.input.messages` /
 *   `gen_ai.output.messages` with `parts`; AI SDK 7 with `@ai-sdk/otel`, newer instrumentations);
 * - `ai-sdk`: the Vercel AI SDK's own names (`ai.prompt`, `ai.prompt.messages`,
 *   `ai.response.text`, `ai.response.toolCalls`; AI SDK 6, AI SDK 7's `LegacyOpenTelemetry`);
 * - `openllmetry`: the older indexed names (`gen_ai.prompt.N.role/content`,
 *   `gen_ai.completion.N.content`, `.tool_calls.M.*`; OpenLLMetry's instrumentations).
 */
export type TurnStyle = 'genai' | 'ai-sdk' | 'openllmetry'

/** A tool call the model made, with its result when a tool span or message reports it. */
export interface ToolCall {
  id?: string
  name: string
  /** JSON text, as the model produced it. */
  arguments?: string
  /** JSON text (or plain text) of the tool's result. */
  result?: string
}

/** Token counts of one model call, or of a whole turn. */
export interface Usage {
  inputTokens: number
  outputTokens: number
}

/** A span that describes (part of) a chat turn. */
export interface SpanReading {
  style: TurnStyle
  /**
   * `turn`: an operation that covers a whole turn (AI SDK `ai.generateText`, GenAI
   * `invoke_agent`); `model`: one model call (`ai.generateText.doGenerate`, GenAI `chat`,
   * OpenLLMetry's `openai.chat`).
   */
  level: 'turn' | 'model'
  /** The last user message of the input. */
  input: string | undefined
  /** The output text (may be empty when the step only called tools). */
  output: string | undefined
  toolCalls: ToolCall[]
  model: string | undefined
  usage: Usage | undefined
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

const str = (v: AttributeValue | unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined

function num(v: AttributeValue | undefined): number | undefined {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined
}

/** A JSON attribute (a string, as most SDKs send it) or an already-structured value. */
function json(v: AttributeValue | undefined): unknown {
  if (typeof v !== 'string') return v
  try {
    return JSON.parse(v)
  } catch {
    return undefined
  }
}

const asText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v === undefined || v === null ? undefined : JSON.stringify(v)

/** The text of a message's content: a string, or the text parts (`text` or `content`) joined. */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return undefined
  const texts = content.flatMap((p) =>
    isObj(p) && p.type === 'text' ? [str(p.text) ?? str(p.content) ?? ''] : typeof p === 'string' ? [p] : [],
  )
  return texts.length > 0 ? texts.join('\n') : undefined
}

function lastUserText(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (isObj(m) && m.role === 'user') return contentText(m.parts ?? m.content) ?? ''
  }
  return undefined
}

function usageOf(a: Record<string, AttributeValue>): Usage | undefined {
  const input =
    num(a['gen_ai.usage.input_tokens']) ??
    num(a['ai.usage.inputTokens']) ??
    num(a['gen_ai.usage.prompt_tokens']) ??
    num(a['ai.usage.promptTokens'])
  const output =
    num(a['gen_ai.usage.output_tokens']) ??
    num(a['ai.usage.outputTokens']) ??
    num(a['gen_ai.usage.completion_tokens']) ??
    num(a['ai.usage.completionTokens'])
  if (input === undefined && output === undefined) return undefined
  return { inputTokens: input ?? 0, outputTokens: output ?? 0 }
}

const modelOf = (a: Record<string, AttributeValue>): string | undefined =>
  str(a['gen_ai.request.model']) ?? str(a['ai.model.id']) ?? str(a['gen_ai.response.model'])

// ------------------------------------------------------------------------------ GenAI semconv

const GENAI_TURN_OPERATIONS = new Set(['invoke_agent', 'invoke_workflow'])

function genai(a: Record<string, AttributeValue>): SpanReading | undefined {
  const inputMessages = json(a['gen_ai.input.messages'])
  const outputMessages = json(a['gen_ai.output.messages'])
  if (inputMessages === undefined && outputMessages === undefined) return undefined
  const texts: string[] = []
  const toolCalls: ToolCall[] = []
  const results = new Map<string, string | undefined>()
  let sawOutput = false
  for (const m of Array.isArray(outputMessages) ? outputMessages : []) {
    if (!isObj(m) || (m.role !== undefined && m.role !== 'assistant')) continue
    sawOutput = true
    for (const p of Array.isArray(m.parts) ? m.parts : []) {
      if (!isObj(p)) continue
      if (p.type === 'text') texts.push(str(p.content) ?? '')
      else if (p.type === 'tool_call' && typeof p.name === 'string')
        toolCalls.push({ id: str(p.id), name: p.name, arguments: asText(p.arguments) })
      else if (p.type === 'tool_call_response' && typeof p.id === 'string') results.set(p.id, asText(p.response))
    }
  }
  for (const call of toolCalls) if (call.id && results.has(call.id)) call.result = results.get(call.id)
  return {
    style: 'genai',
    level: GENAI_TURN_OPERATIONS.has(String(a['gen_ai.operation.name'])) ? 'turn' : 'model',
    input: lastUserText(inputMessages),
    output: sawOutput ? texts.join('\n') : undefined,
    toolCalls,
    model: modelOf(a),
    usage: usageOf(a),
  }
}

// ---------------------------------------------------------------------------------- AI SDK

const AI_SDK_TURNS = new Set(['ai.generateText', 'ai.streamText', 'ai.generateObject', 'ai.streamObject'])
const AI_SDK_MODEL_CALLS = new Set([
  'ai.generateText.doGenerate',
  'ai.streamText.doStream',
  'ai.generateObject.doGenerate',
  'ai.streamObject.doStream',
])

function aiSdkToolCalls(v: AttributeValue | undefined): ToolCall[] {
  const calls = json(v)
  if (!Array.isArray(calls)) return []
  return calls.flatMap((c) =>
    isObj(c) && typeof c.toolName === 'string'
      ? [{ id: str(c.toolCallId), name: c.toolName, arguments: asText(c.input ?? c.args) }]
      : [],
  )
}

function aiSdk(a: Record<string, AttributeValue>): SpanReading | undefined {
  const op = str(a['ai.operationId'])
  const level = op && AI_SDK_TURNS.has(op) ? 'turn' : op && AI_SDK_MODEL_CALLS.has(op) ? 'model' : undefined
  if (!level) return undefined
  let input: string | undefined
  if (level === 'turn') {
    const prompt = json(a['ai.prompt'])
    if (isObj(prompt))
      input =
        lastUserText(prompt.messages) ??
        (typeof prompt.prompt === 'string' ? prompt.prompt : lastUserText(prompt.prompt))
  } else input = lastUserText(json(a['ai.prompt.messages']))
  const output = str(a['ai.response.text']) ?? str(a['ai.response.object'])
  return {
    style: 'ai-sdk',
    level,
    input,
    output,
    toolCalls: aiSdkToolCalls(a['ai.response.toolCalls']),
    model: modelOf(a),
    usage: usageOf(a),
  }
}

// ------------------------------------------------------------------------------ OpenLLMetry

const INDEXED = /^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$/

function openllmetry(a: Record<string, AttributeValue>): SpanReading | undefined {
  const prompt = new Map<number, Obj>()
  const completion = new Map<number, Obj>()
  for (const [key, value] of Object.entries(a)) {
    const m = INDEXED.exec(key)
    if (!m) continue
    const into = m[1] === 'prompt' ? prompt : completion
    const i = Number(m[2])
    const entry = into.get(i) ?? {}
    entry[m[3] as string] = value
    into.set(i, entry)
  }
  if (prompt.size === 0 && completion.size === 0) return undefined
  let input: string | undefined
  for (const i of [...prompt.keys()].sort((x, y) => y - x)) {
    const p = prompt.get(i) as Obj
    if (p.role === 'user') {
      input = str(p.content) ?? ''
      break
    }
  }
  const texts: string[] = []
  const toolCalls: ToolCall[] = []
  for (const i of [...completion.keys()].sort((x, y) => x - y)) {
    const c = completion.get(i) as Obj
    if (c.content !== undefined) texts.push(str(c.content) ?? '')
    if (typeof c['function_call.name'] === 'string')
      toolCalls.push({ name: c['function_call.name'], arguments: str(c['function_call.arguments']) })
    for (let t = 0; typeof c[`tool_calls.${t}.name`] === 'string'; t++)
      toolCalls.push({
        id: str(c[`tool_calls.${t}.id`]),
        name: c[`tool_calls.${t}.name`] as string,
        arguments: str(c[`tool_calls.${t}.arguments`]),
      })
  }
  return {
    style: 'openllmetry',
    level: 'model',
    input,
    output: completion.size > 0 ? texts.join('\n') : undefined,
    toolCalls,
    model: modelOf(a),
    usage: usageOf(a),
  }
}

/**
 * What a span says about a chat turn, or undefined when it describes none (an HTTP span, a
 * database query, an embedding call, a tool execution — see {@link readToolSpan}).
 *
 * @example readSpan(span)?.input // 'What is the weather in Paris?'
 */
export function readSpan(span: OtlpSpan): SpanReading | undefined {
  const a = span.attributes
  return genai(a) ?? aiSdk(a) ?? openllmetry(a)
}

/**
 * A tool execution span (`ai.toolCall`, GenAI `execute_tool`, OpenLLMetry `traceloop.span.kind`
 * `tool`), or undefined.
 */
export function readToolSpan(span: OtlpSpan): ToolCall | undefined {
  const a = span.attributes
  if (a['ai.operationId'] === 'ai.toolCall' && typeof a['ai.toolCall.name'] === 'string')
    return {
      id: str(a['ai.toolCall.id']),
      name: a['ai.toolCall.name'],
      arguments: str(a['ai.toolCall.args'] ?? a['ai.toolCall.input']),
      result: str(a['ai.toolCall.result'] ?? a['ai.toolCall.output']),
    }
  if (a['gen_ai.operation.name'] === 'execute_tool' && typeof a['gen_ai.tool.name'] === 'string')
    return {
      id: str(a['gen_ai.tool.call.id']),
      name: a['gen_ai.tool.name'],
      arguments: str(a['gen_ai.tool.call.arguments']),
      result: str(a['gen_ai.tool.call.result']),
    }
  if (a['traceloop.span.kind'] === 'tool' && typeof a['traceloop.entity.name'] === 'string')
    return {
      name: a['traceloop.entity.name'],
      arguments: str(a['traceloop.entity.input']),
      result: str(a['traceloop.entity.output']),
    }
  return undefined
}

const CONVERSATION_KEYS = [
  'gen_ai.conversation.id',
  'session.id',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.conversationId',
  'ai.settings.context.sessionId',
  'ai.settings.context.conversationId',
  'traceloop.association.properties.session_id',
  'traceloop.association.properties.sessionId',
  'traceloop.association.properties.conversation_id',
]
const USER_KEYS = [
  'user.id',
  'enduser.id',
  'ai.telemetry.metadata.userId',
  'ai.settings.context.userId',
  'traceloop.association.properties.user_id',
  'traceloop.association.properties.userId',
]

/**
 * The conversation and user the spans of a turn name: for each source in order of precedence,
 * the first span that has it (so `gen_ai.conversation.id` anywhere in the turn wins over
 * `session.id`, which wins over the AI SDK's metadata).
 */
export function turnIds(spans: readonly OtlpSpan[]): {
  conversationId: string | undefined
  userId: string | undefined
} {
  const first = (keys: readonly string[]): string | undefined => {
    for (const k of keys)
      for (const span of spans) {
        const v = str(span.attributes[k])
        if (v) return v
      }
    return undefined
  }
  return { conversationId: first(CONVERSATION_KEYS), userId: first(USER_KEYS) }
}

/** `gen_ai.agent.name` of a span, if any. */
export const agentNameOf = (span: OtlpSpan): string | undefined => str(span.attributes['gen_ai.agent.name'])
