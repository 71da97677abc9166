import { createHash } from 'node:crypto'
import type { ToolCall, TurnStyle, Usage } from './attribute-styles'
import type { ChatTurn } from './chat-turns'

/**
 * What an OTLP turn keeps in its records' `platformJson` (the universal shape's place for
 * platform data): the trace, where it came from, and per message the model and tokens.
 */
export interface OtlpPlatformJson {
  /** The trace and span the turn came from (the transcript links to the trace). */
  traceId: string
  spanId: string
  source: 'otlp'
  style: TurnStyle
  /**
   * Event time, epoch ms: the turn's start for the user's message, its end for the answer (the
   * collector's `platformJson.timestamp`: reports count the turn when it happened).
   */
  timestamp?: number
  /** True when no span of the turn named a conversation: it is a conversation of its own trace. */
  noConversationId?: true
  /** Outgoing: the model that answered. */
  model?: string
  /** Outgoing: the turn's tokens, counted once. */
  usage?: Usage
  /** Outgoing: the tools the model called in this turn, in order. */
  toolCalls?: ToolCall[]
  agentName?: string
}

/** One record of a turn: a universal-shaped body and its idempotency key. */
export interface TurnRecord {
  type: 'incoming' | 'outgoing'
  body: {
    text: string
    userId: string
    conversationId: string
    platformJson: OtlpPlatformJson
  }
  idempotencyKey: string
}

/** Longest tool argument or result kept in a record; a tool may return pages. */
export const TOOL_TEXT_LIMIT = 2000

const clip = (t: string | undefined) =>
  t !== undefined && t.length > TOOL_TEXT_LIMIT ? `${t.slice(0, TOOL_TEXT_LIMIT)}…` : t

/** A span time as `platformJson.timestamp` (none for a zero time: the collector's clock stands in). */
const timeOf = (nanos: bigint): { timestamp?: number } => (nanos > 0n ? { timestamp: Number(nanos / 1_000_000n) } : {})

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16)

/**
 * A turn as records: the user's message (incoming) and the answer (outgoing), universal-shaped.
 * The idempotency key is the trace id with the direction and a digest of the text: the same
 * spans exported twice store once, and so do a turn's spans exported in separate requests
 * (an AI SDK 7 `chat` span before its `invoke_agent`), which describe the same two messages.
 *
 * @example turnRecords(turn).map((r) => r.type) // ['incoming', 'outgoing']
 */
export function turnRecords(turn: ChatTurn): TurnRecord[] {
  const conversationId = turn.conversationId ?? turn.traceId
  const userId = turn.userId ?? conversationId
  const base: OtlpPlatformJson = { traceId: turn.traceId, spanId: turn.spanId, source: 'otlp', style: turn.style }
  if (!turn.conversationId) base.noConversationId = true
  const records: TurnRecord[] = []
  if (turn.input !== undefined)
    records.push({
      type: 'incoming',
      body: { text: turn.input, userId, conversationId, platformJson: { ...base, ...timeOf(turn.startTimeUnixNano) } },
      idempotencyKey: `otlp:${turn.traceId}:in:${digest(turn.input)}`,
    })
  if (turn.output !== undefined || turn.toolCalls.length > 0) {
    const text = turn.output ?? ''
    const platformJson: OtlpPlatformJson = { ...base, ...timeOf(turn.endTimeUnixNano) }
    if (turn.model) platformJson.model = turn.model
    if (turn.usage) platformJson.usage = turn.usage
    if (turn.toolCalls.length > 0)
      platformJson.toolCalls = turn.toolCalls.map((c) => {
        const call: ToolCall = { ...c }
        if (c.arguments !== undefined) call.arguments = clip(c.arguments)
        if (c.result !== undefined) call.result = clip(c.result)
        return call
      })
    if (turn.agentName) platformJson.agentName = turn.agentName
    records.push({
      type: 'outgoing',
      body: { text, userId, conversationId, platformJson },
      idempotencyKey: `otlp:${turn.traceId}:out:${digest(text)}`,
    })
  }
  return records
}
