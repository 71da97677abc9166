import type { LlmPrice } from '../options'
import type { StoredMessage } from '../store/store'

/** What a transcript shows of an LLM message: its trace, model, tokens, cost and tool calls. */
export interface LlmDetails {
  traceId?: string
  spanId?: string
  model?: string
  usage?: { inputTokens: number; outputTokens: number }
  /** US dollars, when `llmPrices` names the model. */
  cost?: number
  toolCalls?: Array<{ id?: string; name: string; arguments?: string; result?: string }>
  /** The spans named no conversation: this conversation is one trace. */
  noConversationId?: true
}

/** A conversation's tokens (and cost, when every priced message's model has a price). */
export interface LlmTotals {
  inputTokens: number
  outputTokens: number
  cost: number | null
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const HEX = /^[0-9a-f]{16,32}$/i

/** The universal shapes: their `platformJson` is where `@convotrack/otel` and `/v1/traces` write. */
const CARRIERS = new Set(['universal', 'generic', 'sms'])

function detailsOf(platformJson: Obj, prices: Record<string, LlmPrice> | undefined): LlmDetails | undefined {
  const d: LlmDetails = {}
  if (typeof platformJson.traceId === 'string' && HEX.test(platformJson.traceId)) d.traceId = platformJson.traceId
  if (typeof platformJson.spanId === 'string' && HEX.test(platformJson.spanId)) d.spanId = platformJson.spanId
  if (typeof platformJson.model === 'string') d.model = platformJson.model
  const u = platformJson.usage
  if (isObj(u) && typeof u.inputTokens === 'number' && typeof u.outputTokens === 'number') {
    d.usage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens }
    const price = d.model ? prices?.[d.model] : undefined
    if (price) d.cost = (u.inputTokens * price.input + u.outputTokens * price.output) / 1_000_000
  }
  if (Array.isArray(platformJson.toolCalls))
    d.toolCalls = platformJson.toolCalls.flatMap((c) => (isObj(c) && typeof c.name === 'string' ? [c as never] : []))
  if (platformJson.noConversationId === true) d.noConversationId = true
  return Object.keys(d).length > 0 ? d : undefined
}

/**
 * The LLM details of the messages of a transcript page, read from their records' `platformJson`
 * (where they are stored: no columns of their own), and the page's totals. Only records of the
 * universal shapes are read, one store read each.
 *
 * @example const { byRecord, totals } = await llmDetails(store, messages, { 'gpt-4o-mini': { input: 0.15, output: 0.6 } })
 */
export async function llmDetails(
  store: { record(id: number): Promise<{ raw: string } | undefined> },
  messages: readonly StoredMessage[],
  prices: Record<string, LlmPrice> | undefined,
): Promise<{ byRecord: Map<number, LlmDetails>; totals: LlmTotals | null }> {
  const ids = [...new Set(messages.filter((m) => CARRIERS.has(m.platform)).map((m) => m.recordId))]
  const byRecord = new Map<number, LlmDetails>()
  const records = await Promise.all(ids.map((id) => store.record(id)))
  for (const [i, record] of records.entries()) {
    // Most records carry no trace: skip the parse.
    if (!record?.raw.includes('"platformJson"')) continue
    let body: unknown
    try {
      body = JSON.parse(record.raw)
    } catch {
      continue
    }
    const pj = isObj(body) ? body.platformJson : undefined
    const d = isObj(pj) ? detailsOf(pj, prices) : undefined
    if (d) byRecord.set(ids[i] as number, d)
  }
  let totals: LlmTotals | null = null
  for (const d of byRecord.values()) {
    if (!d.usage) continue
    totals ??= { inputTokens: 0, outputTokens: 0, cost: 0 }
    totals.inputTokens += d.usage.inputTokens
    totals.outputTokens += d.usage.outputTokens
    totals.cost = totals.cost !== null && d.cost !== undefined ? totals.cost + d.cost : null
  }
  return { byRecord, totals }
}

/**
 * Checks the `traceUrl` and `llmPrices` options at start, naming the option and the rule.
 *
 * @example checkLlmOptions({ traceUrl: 'http://localhost:16686/trace/{traceId}' })
 */
export function checkLlmOptions(options: { traceUrl?: unknown; llmPrices?: unknown }): void {
  const { traceUrl, llmPrices } = options
  if (
    traceUrl !== undefined &&
    (typeof traceUrl !== 'string' || !/^https?:\/\//.test(traceUrl) || !traceUrl.includes('{traceId}'))
  )
    throw new TypeError(
      `traceUrl must be an http(s) URL with {traceId} in it, e.g. http://localhost:16686/trace/{traceId} (got ${JSON.stringify(traceUrl)})`,
    )
  if (llmPrices === undefined) return
  if (!isObj(llmPrices))
    throw new TypeError(
      'llmPrices must be an object: { "<model>": { input, output } } in US dollars per million tokens',
    )
  for (const [model, price] of Object.entries(llmPrices))
    if (
      !isObj(price) ||
      !(Number(price.input) >= 0) ||
      !(Number(price.output) >= 0) ||
      typeof price.input !== 'number' ||
      typeof price.output !== 'number'
    )
      throw new TypeError(
        `llmPrices["${model}"] must be { input: number ≥ 0, output: number ≥ 0 } (US dollars per million tokens)`,
      )
}
