import { readSpan, readToolSpan } from './attribute-styles'
import type { OtlpSpan } from './trace-request'

/** Spans kept at most, over every bot; the oldest go first. */
export const WAITING_SPANS_MAX = 10_000
/** Memory the waiting spans may take, estimated from their attributes (prompts may be long). */
export const WAITING_BYTES_MAX = 64 * 1024 * 1024
/** How long a span waits for its parent, in ms. */
export const WAITING_SPAN_TTL_MS = 5 * 60_000

/** A span's weight in memory: its attributes as UTF-16 text, and the rest. */
const weightOf = (span: OtlpSpan) => 2 * JSON.stringify(span.attributes).length + 512

const parentKey = (bot: string, traceId: string, spanId: string) => `${bot}\u0000${traceId}\u0000${spanId}`

/**
 * The parts of a turn that arrived before the span heading it. A `SimpleSpanProcessor` exports
 * each span as it ends, children first: AI SDK 6's model calls (which carry the tool calls the
 * model asked for) and its `ai.toolCall` spans (the results) reach the collector in requests of
 * their own, before the operation span that makes them a turn. A model call or tool span whose
 * parent is not in its export and that no turn used waits here (per bot, in memory, bounded by
 * {@link WAITING_SPANS_MAX}, {@link WAITING_BYTES_MAX} and {@link WAITING_SPAN_TTL_MS}) and joins
 * the export that brings its parent. One collector's memory: with several collectors behind a load balancer, the parent may
 * reach another one — its turn is then recorded without those parts, as without this.
 */
export class WaitingSpans {
  /** By bot, trace and parent span id; insertion order is age. */
  private readonly byParent = new Map<string, Map<string, { span: OtlpSpan; at: number; weight: number }>>()
  private count = 0
  private bytes = 0

  constructor(private readonly now: () => number = Date.now) {}

  /** How many spans wait. */
  get size(): number {
    return this.count
  }

  /**
   * The export's spans and the waiting spans below any of them (their children, and theirs),
   * which stop waiting.
   */
  join(bot: string, spans: readonly OtlpSpan[]): OtlpSpan[] {
    if (this.count === 0) return [...spans]
    const out = [...spans]
    for (let i = 0; i < out.length; i++) {
      const s = out[i] as OtlpSpan
      const k = parentKey(bot, s.traceId, s.spanId)
      const children = this.byParent.get(k)
      if (!children) continue
      this.drop(k, children)
      for (const c of children.values()) out.push(c.span)
    }
    return out
  }

  /**
   * Keeps the unused spans of `spans` whose topmost ancestor among them has a parent that is not
   * there (it may come in a later export), when a model call or a tool span is among them: the
   * spans between (an AI SDK 7 step) wait too, so the chain joins up again. Gives how many wait.
   */
  keep(bot: string, spans: readonly OtlpSpan[], unused: readonly OtlpSpan[]): number {
    const byId = new Map(spans.map((s) => [`${s.traceId}/${s.spanId}`, s]))
    const topOf = (s: OtlpSpan): OtlpSpan => {
      let top = s
      const seen = new Set<OtlpSpan>([s])
      for (;;) {
        const p = top.parentSpanId ? byId.get(`${top.traceId}/${top.parentSpanId}`) : undefined
        if (!p || seen.has(p)) return top
        seen.add(p)
        top = p
      }
    }
    const groups = new Map<OtlpSpan, OtlpSpan[]>()
    for (const s of unused) {
      const top = topOf(s)
      if (!top.parentSpanId || byId.has(`${top.traceId}/${top.parentSpanId}`)) continue
      groups.get(top)?.push(s) ?? groups.set(top, [s])
    }
    const now = this.now()
    let kept = 0
    for (const members of groups.values()) {
      if (!members.some((s) => readSpan(s) || readToolSpan(s))) continue
      for (const s of members) {
        const k = parentKey(bot, s.traceId, s.parentSpanId as string)
        let children = this.byParent.get(k)
        if (!children) {
          children = new Map()
          this.byParent.set(k, children)
        }
        const had = children.get(s.spanId)
        if (had) {
          this.count--
          this.bytes -= had.weight
        }
        // A repeat (an exporter's retry) replaces the copy and is young again.
        children.delete(s.spanId)
        const weight = weightOf(s)
        children.set(s.spanId, { span: s, at: now, weight })
        this.count++
        this.bytes += weight
        kept++
      }
    }
    this.evict(now)
    return kept
  }

  /**
   * Drops the oldest parents' groups while a bound is passed or their newest span is older than
   * the TTL (groups are in the order they were made: the sweep stops at the first young one).
   */
  private evict(now: number): void {
    for (const [k, children] of this.byParent) {
      const newest = [...children.values()].at(-1)?.at ?? 0
      const within = this.count <= WAITING_SPANS_MAX && this.bytes <= WAITING_BYTES_MAX
      if (within && now - newest <= WAITING_SPAN_TTL_MS) break
      this.drop(k, children)
    }
  }

  private drop(k: string, children: Map<string, { weight: number }>): void {
    this.byParent.delete(k)
    this.count -= children.size
    for (const c of children.values()) this.bytes -= c.weight
  }
}
