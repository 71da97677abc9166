import type { OtlpEncoding } from './otlp-body'
import { encodeMessage } from './protobuf'

/** An answer body in the request's own encoding. */
export interface OtlpAnswer {
  contentType: string
  body: Buffer | string
}

const CONTENT_TYPE: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
}

/**
 * The 200 answer: an `ExportTraceServiceResponse`, with `partialSuccess` when spans were
 * rejected or something is worth saying (`rejectedSpans` 0 with a message is a warning).
 *
 * @example exportAnswer('json', 0, '') // { contentType: 'application/json', body: '{}' }
 */
export function exportAnswer(encoding: OtlpEncoding, rejectedSpans: number, errorMessage: string): OtlpAnswer {
  const partial = rejectedSpans > 0 || errorMessage !== ''
  if (encoding === 'json')
    return {
      contentType: CONTENT_TYPE.json,
      body: JSON.stringify(partial ? { partialSuccess: { rejectedSpans: String(rejectedSpans), errorMessage } } : {}),
    }
  const inner: [number, number | string][] = []
  if (rejectedSpans > 0) inner.push([1, rejectedSpans])
  if (errorMessage) inner.push([2, errorMessage])
  return {
    contentType: CONTENT_TYPE.protobuf,
    body: partial ? encodeMessage([[1, encodeMessage(inner)]]) : Buffer.alloc(0),
  }
}

/** gRPC status codes an OTLP/HTTP `Status` carries. */
export const GRPC = { INVALID_ARGUMENT: 3, UNAUTHENTICATED: 16, RESOURCE_EXHAUSTED: 8, UNAVAILABLE: 14 } as const

/**
 * A failure answer: a `google.rpc.Status` with a code and message, in the request's encoding
 * (JSON when the encoding is not known).
 *
 * @example statusAnswer('json', GRPC.INVALID_ARGUMENT, 'the body is not valid JSON')
 */
export function statusAnswer(encoding: OtlpEncoding | undefined, code: number, message: string): OtlpAnswer {
  if (encoding === 'protobuf')
    return {
      contentType: CONTENT_TYPE.protobuf,
      body: encodeMessage([
        [1, code],
        [2, message],
      ]),
    }
  return { contentType: CONTENT_TYPE.json, body: JSON.stringify({ code, message }) }
}
