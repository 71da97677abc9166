/**
 * Untrusted bodies nested past the limit: reading them refuses the request with a clear 400
 * (OtlpRequestError), not a stack overflow — on every Node line, whose stacks differ. The random
 * bodies are fuzz.test.ts's.
 */
import { describe, expect, it } from 'vitest'
import { decodeTraceBody } from '../../src/otlp/index'
import { encodeMessage } from '../../src/otlp/protobuf'
import { readAndMap } from './read-and-map'

/** Nested AnyValue arrays, `depth` deep, as protobuf. */
function nestedProto(depth: number): Buffer {
  let value = encodeMessage([[1, 'x']])
  for (let i = 0; i < depth; i++) value = encodeMessage([[5, encodeMessage([[1, value]])]])
  const kv = encodeMessage([
    [1, 'deep'],
    [2, value],
  ])
  const span = encodeMessage([
    [1, Buffer.alloc(16, 1)],
    [2, Buffer.alloc(8, 2)],
    [9, kv],
  ])
  return encodeMessage([[1, encodeMessage([[2, encodeMessage([[2, span]])]])]])
}

describe('untrusted OTLP bodies', () => {
  it('attribute values nested 10 000 deep are refused with a 400, not a stack overflow', () => {
    expect(readAndMap(nestedProto(30), 'protobuf')).toBe('ok')
    expect(() => decodeTraceBody(nestedProto(10_000), 'protobuf')).toThrow(/nested deeper than 32/)
    // Written by hand: JSON.stringify itself would overflow on 10 000 levels.
    const deep = `${'{"arrayValue":{"values":['.repeat(10_000)}{"stringValue":"x"}${']}}'.repeat(10_000)}`
    const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${'a'.repeat(32)}","spanId":"${'b'.repeat(16)}","attributes":[{"key":"deep","value":${deep}}]}]}]}]}`
    expect(readAndMap(Buffer.from(body), 'json')).toBe('refused')
  })
})
