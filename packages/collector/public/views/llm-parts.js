// LLM conversations in a transcript: a message's tool calls, model, tokens, cost and trace link
// (from `otel` on the transcript API's messages), and the conversation's token total.
import { h } from '../lib/dom.js'
import { safeUrl } from '../lib/format.js'

/** The trace link template of the open transcript (the collector's `traceUrl` option). */
let traceUrl = null

export function setTraceUrl(template) {
  traceUrl = typeof template === 'string' ? template : null
}

const tokens = (u) => `${u.inputTokens} in · ${u.outputTokens} out`
const dollars = (n) => `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`

function traceLink(o) {
  if (!o.traceId) return null
  const href = traceUrl
    ? safeUrl(traceUrl.replaceAll('{traceId}', o.traceId).replaceAll('{spanId}', o.spanId ?? ''))
    : null
  const label = `trace ${o.traceId.slice(0, 8)}`
  return href
    ? h('a', { class: 'trace-link', href, target: '_blank', rel: 'noopener', 'data-testid': 'trace-link' }, label)
    : h('span', { class: 'trace-link', title: o.traceId }, label)
}

/** What goes under a bubble of an LLM message (nothing for other messages). */
export function llmParts(m) {
  const o = m.otel
  if (!o) return null
  const calls = (o.toolCalls ?? []).map((c) =>
    h(
      'div',
      { class: 'tool-call', 'data-testid': 'tool-call', title: c.result ? `result: ${c.result}` : '' },
      h('span', { class: 'badge' }, 'tool'),
      ' ',
      h('code', {}, `${c.name}(${c.arguments ?? ''})`),
      c.result ? h('span', { class: 'muted' }, ` → ${c.result}`) : null,
    ),
  )
  const facts = [
    o.model ? h('span', { class: 'badge' }, o.model) : null,
    o.usage ? h('span', { 'data-testid': 'message-tokens' }, `${tokens(o.usage)} tokens`) : null,
    o.cost !== undefined ? h('span', {}, dollars(o.cost)) : null,
    traceLink(o),
  ].filter(Boolean)
  return [...calls, facts.length ? h('div', { class: 'meta llm' }, facts) : null]
}

/** The conversation's line in the transcript head: tokens, cost, and a missing conversation id. */
export function llmHead(data) {
  const parts = []
  if (data.usage) {
    const cost = data.usage.cost != null && data.usage.cost > 0 ? ` · ${dollars(data.usage.cost)}` : ''
    const where = data.olderBeforeId == null ? '' : ' (messages shown)'
    parts.push(h('span', { 'data-testid': 'conversation-tokens' }, `${tokens(data.usage)} tokens${cost}${where}`))
  }
  if (data.messages.some((m) => m.otel?.noConversationId))
    parts.push(
      h(
        'span',
        { class: 'hint', 'data-testid': 'no-conversation-id' },
        ' The bot sent no conversation id: this conversation is one trace (set gen_ai.conversation.id or session.id).',
      ),
    )
  return parts.length ? h('div', { class: 'muted' }, parts) : null
}
