import { decodeJsonTraces, decodeProtobufTraces, OtlpDecodeError, type TraceRequest } from './trace-request'

/** The two OTLP/HTTP encodings. */
export type OtlpEncoding = 'protobuf' | 'json'

/** A request the OTLP rules refuse, with the HTTP status to answer. */
export class OtlpRequestError extends Error {
  constructor(
    readonly status: 400,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The encoding a `Content-Type` names (`application/x-protobuf`, `application/json`, with or
 * without parameters), or undefined for any other.
 *
 * @example otlpEncoding('application/json; charset=utf-8') // 'json'
 */
export function otlpEncoding(contentType: string | undefined): OtlpEncoding | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase()
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf'
  if (type === 'application/json') return 'json'
  return undefined
}

/**
 * Reads an OTLP trace export in either encoding; a body that cannot be read is a 400.
 *
 * @example decodeTraceBody(Buffer.from('{"foo":1}'), 'json').spans // []
 */
export function decodeTraceBody(body: Buffer, encoding: OtlpEncoding): TraceRequest {
  try {
    if (encoding === 'protobuf') return decodeProtobufTraces(body)
    let parsed: unknown
    try {
      parsed = JSON.parse(body.toString('utf8'))
    } catch {
      throw new OtlpDecodeError('the body is not valid JSON')
    }
    return decodeJsonTraces(parsed)
  } catch (e) {
    if (e instanceof OtlpDecodeError) throw new OtlpRequestError(400, e.message)
    throw e
  }
}
