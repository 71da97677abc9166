// The spans of a turn that arrive before its head wait in memory, per bot, bounded in number and
// age (an injected clock: no waiting in the test).
import { describe, expect, it } from 'vitest'
import type { OtlpSpan } from '../../src/otlp/index'
import { WAITING_BYTES_MAX, WAITING_SPAN_TTL_MS, WAITING_SPANS_MAX, WaitingSpans } from '../../src/otlp/waiting-spans'

const TRACE = 'a'.repeat(32)
const id = (n: number) => n.toString(16).padStart(16, '0')

/** An AI SDK tool span under `parent`. */
const tool = (n: number, parent: number): OtlpSpan => ({
  traceId: TRACE,
  spanId: id(n),
  parentSpanId: id(parent),
  name: 'ai.toolCall',
  startTimeUnixNano: 1n,
  endTimeUnixNano: 2n,
  attributes: { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'get_weather' },
  scope: 'ai',
  resource: {},
})
const http = (n: number, parent: number): OtlpSpan => ({ ...tool(n, parent), name: 'GET /x', attributes: {} })
const root = (n: number): OtlpSpan => ({ ...http(n, 0), parentSpanId: undefined })

describe('WaitingSpans', () => {
  it('a tool span waits for its parent and joins the export that brings it, for that bot only', () => {
    const w = new WaitingSpans(() => 0)
    const t = tool(2, 1)
    expect(w.keep('b', [t], [t])).toBe(1)
    expect(w.join('other', [root(1)])).toEqual([root(1)])
    expect(w.join('b', [root(1)])).toEqual([root(1), t])
    expect(w.size).toBe(0)
  })

  it('spans with nothing of a turn do not wait; a chain with a tool span waits whole', () => {
    const w = new WaitingSpans(() => 0)
    const h = http(3, 1)
    expect(w.keep('b', [h], [h])).toBe(0)
    const step = http(2, 1)
    const t = tool(4, 2)
    expect(w.keep('b', [step, t], [step, t])).toBe(2)
    expect(w.join('b', [root(1)])).toEqual([root(1), step, t])
  })

  it('a repeat is kept once; spans older than the TTL and beyond the bound go', () => {
    let now = 0
    const w = new WaitingSpans(() => now)
    w.keep('b', [tool(2, 1)], [tool(2, 1)])
    w.keep('b', [tool(2, 1)], [tool(2, 1)])
    expect(w.size).toBe(1)
    now = WAITING_SPAN_TTL_MS + 1
    w.keep('b', [tool(3, 9)], [tool(3, 9)])
    expect(w.size).toBe(1)
    expect(w.join('b', [root(1)])).toEqual([root(1)])
    const many = Array.from({ length: WAITING_SPANS_MAX + 50 }, (_, i) => tool(100 + i, 1_000_000 + i))
    w.keep('b', many, many)
    expect(w.size).toBeLessThanOrEqual(WAITING_SPANS_MAX)
  })

  it('long prompts: the memory bound holds', () => {
    const w = new WaitingSpans(() => 0)
    const prompt = 'x'.repeat(1024 * 1024)
    const big = Array.from({ length: 40 }, (_, i) => {
      const t = tool(100 + i, 1_000_000 + i)
      return { ...t, attributes: { ...t.attributes, 'ai.toolCall.result': prompt } }
    })
    w.keep('b', big, big)
    // 40 × 2 MiB (UTF-16) is over the bound: the oldest went.
    expect(w.size).toBeLessThan(40)
    expect(w.size * 2 * prompt.length).toBeLessThanOrEqual(WAITING_BYTES_MAX)
  })
})
