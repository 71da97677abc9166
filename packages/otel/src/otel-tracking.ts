import type { HookedRecord, JsonObject, Tracker } from '@convotrack/core'
import {
  type Attributes,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api'
import { recordFacts } from './record-facts'

/** Version of this package: the instrumentation scope's version. */
export const VERSION = '0.1.0'

/** The instrumentation scope of the spans and events this package makes. */
export const SCOPE_NAME = '@convotrack/otel'

/** Options of {@link otelTracking}. */
export interface OtelTrackingOptions {
  /** `gen_ai.agent.name` on every event: the bot's name in your traces. Default: not set. */
  agentName?: string
  /**
   * Put the message text on the events (`convotrack.text`). Off by default, as the GenAI
   * conventions keep content off: traces often go to places chat text should not.
   */
  captureContent?: boolean
  /**
   * Write the trace id (and span id) of the turn into universal-shaped records' `platformJson`
   * (`traceId`, `spanId`), so the collector's transcript links to the trace. Default true.
   */
  traceIdInRecords?: boolean
  /** The tracer provider to use. Default: the global one (`trace.getTracerProvider()`), looked up per record. */
  tracerProvider?: TracerProvider
}

/** The API's no-op provider: what the global proxy delegates to while no provider is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate()

/** True while no tracer provider is registered globally: then the hook costs one check per record. */
function noGlobalProvider(): boolean {
  const global = trace.getTracerProvider()
  return global instanceof ProxyTracerProvider && global.getDelegate() === NOOP_PROVIDER
}

/** Platforms whose records are the universal message, where `platformJson` is the sender's own object. */
const UNIVERSAL_SHAPED = new Set(['universal', 'generic', 'sms'])

/**
 * Makes every record the tracker sends also an OpenTelemetry span event (`convotrack.message`,
 * or `convotrack.event` for events) on the active span, or on a short span of its own
 * (`convotrack incoming` / `convotrack outgoing` / `convotrack event`) when no span is active.
 * Attributes: `gen_ai.conversation.id`, `gen_ai.agent.name`, `user.id`, `convotrack.platform`,
 * `convotrack.direction`, `convotrack.intent`, `convotrack.not_handled`, and `convotrack.text`
 * only with `captureContent`. The trace id goes into the record's `platformJson.traceId`.
 * Without a registered tracer provider nothing is recorded and records are unchanged.
 * Returns the function that stops it.
 *
 * @example
 * const tracker = createTracker({ apiKey: process.env.CONVOTRACK_API_KEY })
 * otelTracking(tracker, { agentName: 'support-bot' })
 */
export function otelTracking(tracker: Tracker, options: OtelTrackingOptions = {}): () => void {
  const { agentName, captureContent = false, traceIdInRecords = true, tracerProvider } = options
  // A ProxyTracer from the global provider follows a provider registered later.
  const tracer: Tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE_NAME, VERSION)

  return tracker.addRecordHook((record: HookedRecord): JsonObject | undefined => {
    if (!tracerProvider && noGlobalProvider()) return undefined
    const active = trace.getActiveSpan()
    let span: Span | undefined
    let own = false
    if (active?.isRecording()) span = active
    else if (!active) {
      span = tracer.startSpan(`convotrack ${record.type}`, { kind: SpanKind.INTERNAL })
      own = true
      if (!span.isRecording()) {
        // No provider (or sampled out): nothing to record, the record stays as it is.
        span.end()
        return undefined
      }
    }
    if (span) {
      const attributes = eventAttributes(record, agentName, captureContent)
      if (own) span.setAttributes(attributes)
      span.addEvent(record.type === 'event' ? 'convotrack.event' : 'convotrack.message', attributes)
      if (own) span.end()
    }
    // A sampled-out active span still names its trace, but no backend holds it: no link.
    const ctx = (span ?? active)?.spanContext()
    if (!traceIdInRecords || !ctx || !(ctx.traceFlags & TraceFlags.SAMPLED)) return undefined
    if (!UNIVERSAL_SHAPED.has(record.platform) || record.type === 'event') return undefined
    const platformJson = record.body.platformJson
    const base = platformJson && typeof platformJson === 'object' && !Array.isArray(platformJson) ? platformJson : {}
    return { ...record.body, platformJson: { ...base, traceId: ctx.traceId, spanId: ctx.spanId } }
  })
}

function eventAttributes(record: HookedRecord, agentName: string | undefined, captureContent: boolean): Attributes {
  const facts = recordFacts(record)
  const attributes: Attributes = {
    'convotrack.platform': record.platform,
    'convotrack.direction': record.type,
  }
  const conversation = record.conversation ?? record.userId
  if (conversation !== undefined) attributes['gen_ai.conversation.id'] = conversation
  if (record.userId !== undefined) attributes['user.id'] = record.userId
  if (agentName !== undefined) attributes['gen_ai.agent.name'] = agentName
  if (facts.intent !== undefined) attributes['convotrack.intent'] = facts.intent
  if (record.type === 'incoming' || record.type === 'outgoing')
    attributes['convotrack.not_handled'] = facts.intent === 'NotHandled'
  if (facts.eventName !== undefined) attributes['convotrack.event.name'] = facts.eventName
  if (captureContent && facts.text !== undefined) attributes['convotrack.text'] = facts.text
  return attributes
}
