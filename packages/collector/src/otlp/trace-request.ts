import { fields, int64, ProtobufError } from './protobuf'

/** An attribute value as OTLP's AnyValue carries it (bytes as base64, int64 as a number). */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue }

/** One span of an OTLP export, with what the chat-turn mapping needs. */
export interface OtlpSpan {
  /** 32 lower-case hex digits. */
  traceId: string
  /** 16 lower-case hex digits. */
  spanId: string
  /** Absent for a root span. */
  parentSpanId: string | undefined
  name: string
  /** Nanoseconds since the epoch (0 when the sender left it out). */
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  attributes: Record<string, AttributeValue>
  /** The instrumentation scope's name (`ai`, `gen_ai`, `@traceloop/instrumentation-openai`…). */
  scope: string
  /** The resource's attributes (`service.name`…). */
  resource: Record<string, AttributeValue>
}

/** A decoded `ExportTraceServiceRequest`. */
export interface TraceRequest {
  spans: OtlpSpan[]
  /** Spans refused for bad ids (a trace id that is not 16 bytes, a span id that is not 8). */
  invalid: number
}

/** A body that cannot be read as an OTLP trace request: refused as a whole (400). */
export class OtlpDecodeError extends Error {}

const hex = (b: Buffer): string => b.toString('hex')
const EMPTY: Buffer = Buffer.alloc(0)

// ------------------------------------------------------------------------------- protobuf

/** Deepest nesting of attribute values read (arrays in arrays…): deeper is refused, not a stack overflow. */
const MAX_DEPTH = 32

function anyValue(buf: Buffer, depth = 0): AttributeValue {
  if (depth > MAX_DEPTH) throw new ProtobufError(`attribute values nested deeper than ${MAX_DEPTH}`)
  let value: AttributeValue = null
  for (const f of fields(buf)) {
    if (f.no === 1 && f.wire === 2) value = f.value.toString('utf8')
    else if (f.no === 2 && f.wire === 0) value = f.value !== 0n
    else if (f.no === 3 && f.wire === 0) value = int64(f.value)
    else if (f.no === 4 && f.wire === 1) value = f.value.readDoubleLE(0)
    else if (f.no === 5 && f.wire === 2) {
      const items: AttributeValue[] = []
      for (const g of fields(f.value)) if (g.no === 1 && g.wire === 2) items.push(anyValue(g.value, depth + 1))
      value = items
    } else if (f.no === 6 && f.wire === 2) {
      const kv: Record<string, AttributeValue> = {}
      for (const g of fields(f.value)) if (g.no === 1 && g.wire === 2) keyValue(g.value, kv, depth + 1)
      value = kv
    } else if (f.no === 7 && f.wire === 2) value = f.value.toString('base64')
  }
  return value
}

function keyValue(buf: Buffer, into: Record<string, AttributeValue>, depth = 0): void {
  let key = ''
  let value: AttributeValue = null
  for (const f of fields(buf)) {
    if (f.no === 1 && f.wire === 2) key = f.value.toString('utf8')
    else if (f.no === 2 && f.wire === 2) value = anyValue(f.value, depth)
  }
  if (key) into[key] = value
}

function attributesOf(buf: Buffer, no: number): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const f of fields(buf)) if (f.no === no && f.wire === 2) keyValue(f.value, out)
  return out
}

function protoSpan(buf: Buffer, scope: string, resource: Record<string, AttributeValue>): OtlpSpan | undefined {
  let traceId = EMPTY
  let spanId = EMPTY
  let parent = EMPTY
  let name = ''
  let start = 0n
  let end = 0n
  const attributes: Record<string, AttributeValue> = {}
  for (const f of fields(buf)) {
    if (f.wire === 2 && f.no === 1) traceId = f.value
    else if (f.wire === 2 && f.no === 2) spanId = f.value
    else if (f.wire === 2 && f.no === 4) parent = f.value
    else if (f.wire === 2 && f.no === 5) name = f.value.toString('utf8')
    else if (f.wire === 1 && f.no === 7) start = f.value.readBigUInt64LE(0)
    else if (f.wire === 1 && f.no === 8) end = f.value.readBigUInt64LE(0)
    else if (f.wire === 2 && f.no === 9) keyValue(f.value, attributes)
  }
  if (traceId.length !== 16 || spanId.length !== 8) return undefined
  return {
    traceId: hex(traceId),
    spanId: hex(spanId),
    parentSpanId: parent.length === 8 ? hex(parent) : undefined,
    name,
    startTimeUnixNano: start,
    endTimeUnixNano: end,
    attributes,
    scope,
    resource,
  }
}

/**
 * Reads an `ExportTraceServiceRequest` in the protobuf encoding.
 *
 * @example decodeProtobufTraces(req.body).spans.length
 */
export function decodeProtobufTraces(body: Buffer): TraceRequest {
  const spans: OtlpSpan[] = []
  let invalid = 0
  try {
    for (const rs of fields(body)) {
      if (rs.no !== 1 || rs.wire !== 2) continue
      let resource: Record<string, AttributeValue> = {}
      const scopes: Buffer[] = []
      for (const f of fields(rs.value)) {
        if (f.no === 1 && f.wire === 2) resource = attributesOf(f.value, 1)
        else if (f.no === 2 && f.wire === 2) scopes.push(f.value)
      }
      for (const ss of scopes) {
        let scope = ''
        const raw: Buffer[] = []
        for (const f of fields(ss)) {
          if (f.no === 1 && f.wire === 2) {
            for (const g of fields(f.value)) if (g.no === 1 && g.wire === 2) scope = g.value.toString('utf8')
          } else if (f.no === 2 && f.wire === 2) raw.push(f.value)
        }
        for (const s of raw) {
          const span = protoSpan(s, scope, resource)
          if (span) spans.push(span)
          else invalid++
        }
      }
    }
  } catch (e) {
    if (e instanceof ProtobufError)
      throw new OtlpDecodeError(`the body is not a valid protobuf ExportTraceServiceRequest: ${e.message}`)
    throw e
  }
  return { spans, invalid }
}

// ----------------------------------------------------------------------------------- JSON

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A repeated field: absent is empty; anything but an array is a malformed request. */
function list(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) throw new OtlpDecodeError(`\`${path}\` must be an array`)
  return v
}

/** OTLP/JSON ids are hex; base64 (the generic protobuf JSON mapping) is read too. */
function jsonId(v: unknown, bytes: number): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined
  if (v.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(v)) return v.toLowerCase()
  const b = Buffer.from(v, 'base64')
  return b.length === bytes && b.toString('base64').replace(/=+$/, '') === v.replace(/=+$/, '') ? hex(b) : undefined
}

function jsonNanos(v: unknown): bigint {
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v))
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v)
  return 0n
}

function jsonAnyValue(v: unknown, depth = 0): AttributeValue {
  if (depth > MAX_DEPTH) throw new OtlpDecodeError(`attribute values nested deeper than ${MAX_DEPTH}`)
  if (!isObj(v)) return null
  if (typeof v.stringValue === 'string') return v.stringValue
  if (typeof v.boolValue === 'boolean') return v.boolValue
  if (v.intValue !== undefined) {
    const n = typeof v.intValue === 'string' ? Number(v.intValue) : v.intValue
    return typeof n === 'number' && Number.isFinite(n) ? n : null
  }
  if (v.doubleValue !== undefined) {
    const n = typeof v.doubleValue === 'string' ? Number(v.doubleValue) : v.doubleValue
    return typeof n === 'number' ? n : null
  }
  if (isObj(v.arrayValue)) return list(v.arrayValue.values, 'arrayValue.values').map((x) => jsonAnyValue(x, depth + 1))
  if (isObj(v.kvlistValue)) return jsonAttributes(v.kvlistValue.values, 'kvlistValue.values', depth + 1)
  if (typeof v.bytesValue === 'string') return v.bytesValue
  return null
}

function jsonAttributes(v: unknown, path: string, depth = 0): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const kv of list(v, path))
    if (isObj(kv) && typeof kv.key === 'string' && kv.key) out[kv.key] = jsonAnyValue(kv.value, depth)
  return out
}

/**
 * Reads an `ExportTraceServiceRequest` in the OTLP/JSON encoding (already parsed). Unknown
 * fields are ignored, so `{}` and `{"foo":1}` are valid empty requests.
 *
 * @example decodeJsonTraces({ resourceSpans: [] }).spans // []
 */
export function decodeJsonTraces(body: unknown): TraceRequest {
  if (!isObj(body)) throw new OtlpDecodeError('the body must be a JSON object (an ExportTraceServiceRequest)')
  const spans: OtlpSpan[] = []
  let invalid = 0
  for (const rs of list(body.resourceSpans, 'resourceSpans')) {
    if (!isObj(rs)) throw new OtlpDecodeError('every `resourceSpans` item must be an object')
    const resource = jsonAttributes(isObj(rs.resource) ? rs.resource.attributes : undefined, 'resource.attributes')
    for (const ss of list(rs.scopeSpans, 'resourceSpans.scopeSpans')) {
      if (!isObj(ss)) throw new OtlpDecodeError('every `scopeSpans` item must be an object')
      const scope = isObj(ss.scope) && typeof ss.scope.name === 'string' ? ss.scope.name : ''
      for (const s of list(ss.spans, 'resourceSpans.scopeSpans.spans')) {
        if (!isObj(s)) throw new OtlpDecodeError('every `spans` item must be an object')
        const traceId = jsonId(s.traceId, 16)
        const spanId = jsonId(s.spanId, 8)
        if (!traceId || !spanId) {
          invalid++
          continue
        }
        spans.push({
          traceId,
          spanId,
          parentSpanId: jsonId(s.parentSpanId, 8),
          name: typeof s.name === 'string' ? s.name : '',
          startTimeUnixNano: jsonNanos(s.startTimeUnixNano),
          endTimeUnixNano: jsonNanos(s.endTimeUnixNano),
          attributes: jsonAttributes(s.attributes, 'spans.attributes'),
          scope,
          resource,
        })
      }
    }
  }
  return { spans, invalid }
}
