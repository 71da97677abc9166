import { gunzipSync, inflateSync } from 'node:zlib'
import { decodeJsonTraces, decodeProtobufTraces, OtlpDecodeError, type TraceRequest } from './trace-request'

/** The two OTLP/HTTP encodings. */
export type OtlpEncoding = 'protobuf' | 'json'

/** A request the OTLP rules refuse, with the HTTP status to answer. */
export class OtlpRequestError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
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
 * The body as sent, decompressed (`Content-Encoding: gzip` or `deflate`), at most `maxBytes`
 * once decompressed (413 beyond: a small gzip can hold a large body).
 */
export function inflateBody(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  const encoding = contentEncoding?.trim().toLowerCase() || 'identity'
  if (encoding === 'identity') return body
  if (encoding !== 'gzip' && encoding !== 'deflate')
    throw new OtlpRequestError(415, `Content-Encoding ${encoding} is not supported: send gzip or no encoding`)
  try {
    return encoding === 'gzip'
      ? gunzipSync(body, { maxOutputLength: maxBytes })
      : inflateSync(body, { maxOutputLength: maxBytes })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new OtlpRequestError(
        413,
        `the decompressed body is larger than ${maxBytes} bytes; export fewer spans per request`,
      )
    throw new OtlpRequestError(400, `the body is not valid ${encoding} data`)
  }
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
