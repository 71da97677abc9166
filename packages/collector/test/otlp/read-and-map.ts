import { chatTurns, decodeTraceBody, OtlpRequestError, turnRecords } from '../../src/otlp/index'

/** Reads a body and maps its spans to turns: `ok`, or `refused` with a 400; any other error is thrown. */
export function readAndMap(body: Buffer, encoding: 'protobuf' | 'json'): 'ok' | 'refused' {
  try {
    const { spans } = decodeTraceBody(body, encoding)
    for (const t of chatTurns(spans).turns) turnRecords(t)
    return 'ok'
  } catch (e) {
    if (e instanceof OtlpRequestError && e.status === 400 && e.message.length > 0) return 'refused'
    throw e
  }
}
