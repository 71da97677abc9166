/**
 * Untrusted bodies, property-based: whatever bytes or JSON arrive, reading them and mapping them to
 * turns either works or refuses the request with a clear 400 (OtlpRequestError) — never another
 * error (a 500, a stack overflow). A fuzz suite: the system Node runs it (scripts/node-matrix.json's
 * systemNodeOnly); the nesting limit, which depends on the Node's stack, is otlp-decode.test.ts's,
 * on every line.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { seeded } from '../../../../test/support/fuzz-seed'
import { readAndMap } from './read-and-map'

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
})
