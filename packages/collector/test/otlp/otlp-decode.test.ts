/**
 * Untrusted bodies: whatever bytes or JSON arrive, reading them and mapping them to turns either
 * works or refuses the request with a clear 400 (OtlpRequestError) — never another error (a 500,
 * a stack overflow).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { seeded } from '../../../../test/support/fuzz-seed'
import { chatTurns, decodeTraceBody, OtlpRequestError, turnRecords } from '../../src/otlp/index'
import { encodeMessage } from '../../src/otlp/protobuf'

function readAndMap(body: Buffer, encoding: 'protobuf' | 'json'): 'ok' | 'refused' {
  try {
    const { spans } = decodeTraceBody(body, encoding)
    for (const t of chatTurns(spans).turns) turnRecords(t)
    return 'ok'
  } catch (e) {
    if (e instanceof OtlpRequestError && e.status === 400 && e.message.length > 0) return 'refused'
    throw e
  }
}

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
  it('random bytes as protobuf: read or refused with a 400, nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        expect(['ok', 'refused']).toContain(readAndMap(Buffer.from(bytes), 'protobuf'))
      }),
      seeded({ numRuns: 2000 }),
    )
  })

  it('random JSON (and JSON in the shape of a request) as OTLP/JSON: read or refused with a 400', () => {
    const anyValue = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.record({ stringValue: fc.string() }),
        fc.record({ intValue: fc.oneof(fc.integer(), fc.string()) }),
        fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
        fc.jsonValue(),
      ),
    })).value
    const span = fc.record(
      {
        traceId: fc.oneof(fc.constant('5b8aa5a2d2c872e8321cf37308d69df2'), fc.string()),
        spanId: fc.oneof(fc.constant('051581bf3cb55c13'), fc.string()),
        parentSpanId: fc.oneof(fc.constant('051581bf3cb55c13'), fc.string()),
        attributes: fc.array(
          fc.record({
            key: fc.constantFrom(
              'gen_ai.input.messages',
              'ai.prompt',
              'ai.operationId',
              'gen_ai.prompt.0.content',
              'x',
            ),
            value: anyValue,
          }),
          { maxLength: 4 },
        ),
      },
      { requiredKeys: [] },
    )
    const request = fc.oneof(
      fc.jsonValue(),
      fc.record({ resourceSpans: fc.array(fc.record({ scopeSpans: fc.array(fc.record({ spans: fc.array(span) })) })) }),
    )
    fc.assert(
      fc.property(request, (body) => {
        expect(['ok', 'refused']).toContain(readAndMap(Buffer.from(JSON.stringify(body)), 'json'))
      }),
      seeded({ numRuns: 1000 }),
    )
  })

  it('attribute values nested 10 000 deep are refused with a 400, not a stack overflow', () => {
    expect(readAndMap(nestedProto(30), 'protobuf')).toBe('ok')
    expect(() => decodeTraceBody(nestedProto(10_000), 'protobuf')).toThrow(/nested deeper than 32/)
    // Written by hand: JSON.stringify itself would overflow on 10 000 levels.
    const deep = `${'{"arrayValue":{"values":['.repeat(10_000)}{"stringValue":"x"}${']}}'.repeat(10_000)}`
    const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${'a'.repeat(32)}","spanId":"${'b'.repeat(16)}","attributes":[{"key":"deep","value":${deep}}]}]}]}]}`
    expect(readAndMap(Buffer.from(body), 'json')).toBe('refused')
  })
})
