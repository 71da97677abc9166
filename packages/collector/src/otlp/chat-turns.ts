import {
  agentNameOf,
  readSpan,
  readToolSpan,
  type SpanReading,
  type ToolCall,
  type TurnStyle,
  turnIds,
  type Usage,
} from './attribute-styles'
import type { OtlpSpan } from './trace-request'

/** The instrumentation scope of `@convotrack/otel`: its records already reach the collector. */
export const CONVOTRACK_OTEL_SCOPE = '@convotrack/otel'

/** One chat turn: the user's message and the bot's answer, as a trace describes them. */
export interface ChatTurn {
  traceId: string
  /** The span that heads the turn (the outermost span describing it). */
  spanId: string
  startTimeUnixNano: bigint
  /** When its last span ended (the answer's time). */
  endTimeUnixNano: bigint
  style: TurnStyle
  /** Undefined when no span of the turn names one. */
  conversationId: string | undefined
  userId: string | undefined
  /** The last user message of the input. */
  input: string | undefined
  /** The answer's text ('' when the turn ended in tool calls only). */
  output: string | undefined
  toolCalls: ToolCall[]
  model: string | undefined
  /** Counted once: the head's own totals, else the sum of its model calls. */
  usage: Usage | undefined
  agentName: string | undefined
}

/** The scope of AI SDK 7's `@ai-sdk/otel` (its default tracer). */
const AI_SDK_7_SCOPE = 'gen_ai'

/**
 * A model call of the AI SDK (6's `ai.*.doGenerate`, or a span of 7's `gen_ai` scope) is never a
 * turn of its own: the SDK always ends the operation span last, with the whole prompt, answer,
 * tool calls and summed usage. Alone in an export (one span per request), it is left to that span.
 */
const leftToItsOperation = (span: OtlpSpan, r: SpanReading) =>
  r.level === 'model' && (r.style === 'ai-sdk' || span.scope === AI_SDK_7_SCOPE)

/** The turns of an export, and how many of its spans describe none. */
export interface ChatTurns {
  turns: ChatTurn[]
  /** Spans that are not part of a chat turn (HTTP, database, embeddings, our own…). */
  ignored: number
  /** Those spans (the route keeps the model calls and tool spans whose parent may come later). */
  unused: OtlpSpan[]
}

const key = (traceId: string, spanId: string) => `${traceId}/${spanId}`

/**
 * Groups the spans of an export into chat turns. A turn is headed by the outermost span that
 * describes it; spans describing it further down (an AI SDK step, a GenAI `chat` under
 * `invoke_agent`) and its tool executions are folded into it, so one turn is one turn however
 * many spans repeat its prompt. An AI SDK model call whose operation span is not in the same
 * export is not a turn of its own (see `leftToItsOperation`).
 *
 * @example chatTurns(decodeJsonTraces(body).spans).turns[0]?.input // 'hi'
 */
export function chatTurns(spans: readonly OtlpSpan[]): ChatTurns {
  const byId = new Map<string, OtlpSpan>()
  for (const s of spans) byId.set(key(s.traceId, s.spanId), s)
  const readings = new Map<OtlpSpan, SpanReading>()
  const tools = new Map<OtlpSpan, ToolCall>()
  for (const s of spans) {
    if (s.scope === CONVOTRACK_OTEL_SCOPE) continue
    const reading = readSpan(s)
    if (reading) readings.set(s, reading)
    else {
      const tool = readToolSpan(s)
      if (tool) tools.set(s, tool)
    }
  }

  const ancestors = (s: OtlpSpan): OtlpSpan[] => {
    const out: OtlpSpan[] = []
    const seen = new Set<OtlpSpan>([s])
    let p = s.parentSpanId ? byId.get(key(s.traceId, s.parentSpanId)) : undefined
    while (p && !seen.has(p)) {
      out.push(p)
      seen.add(p)
      p = p.parentSpanId ? byId.get(key(p.traceId, p.parentSpanId)) : undefined
    }
    return out
  }
  /** The outermost describing ancestor of a span, if any. */
  const headAbove = (s: OtlpSpan): OtlpSpan | undefined => {
    let head: OtlpSpan | undefined
    for (const a of ancestors(s)) if (readings.has(a)) head = a
    return head
  }

  const members = new Map<OtlpSpan, OtlpSpan[]>()
  for (const s of readings.keys()) {
    const head = headAbove(s)
    if (head) members.get(head)?.push(s) ?? members.set(head, [s])
    else if (!leftToItsOperation(s, readings.get(s) as SpanReading) && !members.has(s)) members.set(s, [])
  }
  const toolsOf = new Map<OtlpSpan, OtlpSpan[]>()
  for (const t of tools.keys()) {
    const head = headAbove(t)
    if (head && members.has(head)) toolsOf.get(head)?.push(t) ?? toolsOf.set(head, [t])
  }

  const assembled: Array<{ turn: ChatTurn; level: SpanReading['level'] }> = []
  const used = new Set<OtlpSpan>()
  for (const [head, inner] of members) {
    const turn = assemble(head, readings, inner, toolsOf.get(head) ?? [], ancestors(head), tools)
    if (!turn) continue
    assembled.push({ turn, level: (readings.get(head) as SpanReading).level })
    for (const s of [head, ...inner, ...(toolsOf.get(head) ?? [])]) used.add(s)
  }
  assembled.sort((a, b) => compareNanos(a.turn.startTimeUnixNano, b.turn.startTimeUnixNano))
  const turns = mergeSteps(assembled)
  // Tool spans beside the model calls (an agent loop's own tool step): to the call that asked for them.
  for (const [t, call] of tools) {
    if (headAbove(t)) continue
    const target = turns
      .filter((turn) => turn.traceId === t.traceId)
      .flatMap((turn) => turn.toolCalls)
      .find((c) => c.name === call.name && c.result === undefined && (!call.id || !c.id || c.id === call.id))
    if (!target) continue
    target.result = call.result
    target.arguments ??= call.arguments
    used.add(t)
  }
  const unused = spans.filter((s) => !used.has(s))
  return { turns, ignored: unused.length, unused }
}

const compareNanos = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Model calls of one trace that answer the same user message are the steps of one turn (an
 * agent loop: the model asks for a tool, then answers): one turn, the last answer, every tool
 * call, the tokens summed. Turn-level spans (an AI SDK operation, `invoke_agent`) are whole
 * already and never merged.
 */
function mergeSteps(assembled: ReadonlyArray<{ turn: ChatTurn; level: SpanReading['level'] }>): ChatTurn[] {
  const out: ChatTurn[] = []
  const open = new Map<string, ChatTurn>()
  for (const { turn, level } of assembled) {
    const k = level === 'model' && turn.input !== undefined ? `${turn.traceId}\u0000${turn.input}` : undefined
    const into = k ? open.get(k) : undefined
    if (!into) {
      out.push(turn)
      if (k) open.set(k, turn)
      continue
    }
    if (turn.output || into.output === undefined) into.output = turn.output
    for (const c of turn.toolCalls) if (!into.toolCalls.some((x) => c.id && x.id === c.id)) into.toolCalls.push(c)
    if (turn.usage)
      into.usage = {
        inputTokens: (into.usage?.inputTokens ?? 0) + turn.usage.inputTokens,
        outputTokens: (into.usage?.outputTokens ?? 0) + turn.usage.outputTokens,
      }
    if (turn.endTimeUnixNano > into.endTimeUnixNano) into.endTimeUnixNano = turn.endTimeUnixNano
    into.model ??= turn.model
    into.conversationId ??= turn.conversationId
    into.userId ??= turn.userId
    into.agentName ??= turn.agentName
  }
  return out
}

const byStart = (a: OtlpSpan, b: OtlpSpan) => compareNanos(a.startTimeUnixNano, b.startTimeUnixNano)

function assemble(
  head: OtlpSpan,
  readings: Map<OtlpSpan, SpanReading>,
  inner: OtlpSpan[],
  toolSpans: OtlpSpan[],
  above: OtlpSpan[],
  tools: Map<OtlpSpan, ToolCall>,
): ChatTurn | undefined {
  const own = readings.get(head) as SpanReading
  const steps = [...inner].sort(byStart).map((s) => readings.get(s) as SpanReading)
  const input = own.input ?? steps.find((r) => r.input !== undefined)?.input
  let output = own.output
  if (!output) {
    const answered = [...steps].reverse().find((r) => r.output)
    output = answered?.output ?? output ?? (steps.some((r) => r.output !== undefined) ? '' : undefined)
  }
  // Tool calls: what the model asked for (head, then steps), results from the tool spans.
  const calls: ToolCall[] = []
  const add = (c: ToolCall) => {
    const same = calls.find(
      (k) => (c.id && k.id === c.id) || (!c.id && !k.id && k.name === c.name && k.arguments === c.arguments),
    )
    if (!same) calls.push({ ...c })
    else
      for (const f of ['arguments', 'result'] as const) if (same[f] === undefined && c[f] !== undefined) same[f] = c[f]
  }
  for (const r of [own, ...steps]) for (const c of r.toolCalls) add(c)
  for (const t of [...toolSpans].sort(byStart)) add(tools.get(t) as ToolCall)
  if (input === undefined && output === undefined && calls.length === 0) return undefined

  let usage = own.usage
  if (!usage) {
    // Sum the model calls only: a step span may repeat its model call's numbers.
    const counted = steps.filter((r) => r.usage && r.level === 'model')
    if (counted.length > 0)
      usage = counted.reduce<Usage>(
        (sum, r) => ({
          inputTokens: sum.inputTokens + (r.usage?.inputTokens ?? 0),
          outputTokens: sum.outputTokens + (r.usage?.outputTokens ?? 0),
        }),
        { inputTokens: 0, outputTokens: 0 },
      )
  }
  const all = [head, ...inner.sort(byStart), ...toolSpans, ...above]
  const ids = turnIds(all)
  return {
    traceId: head.traceId,
    spanId: head.spanId,
    startTimeUnixNano: head.startTimeUnixNano,
    endTimeUnixNano: [head, ...inner].reduce((t, s) => (s.endTimeUnixNano > t ? s.endTimeUnixNano : t), 0n),
    style: own.style,
    conversationId: ids.conversationId,
    userId: ids.userId,
    input,
    output,
    toolCalls: calls,
    model: own.model ?? steps.find((r) => r.model)?.model,
    usage,
    agentName: all.map(agentNameOf).find((n) => n !== undefined),
  }
}
