import type { ServerResponse } from 'node:http'

/** Stable `error.code` values of the receivers' JSON error bodies. */
export type ReceiverErrorCode =
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'body_too_large'
  | 'invalid_signature'
  | 'invalid_json'
  | 'invalid_body'
  | 'raw_body_unavailable'
  | 'store_unavailable'
  | 'send_failed'
  | 'internal_error'

/** The body of every error answer: `{ error: { code, message } }`. */
export interface ReceiverErrorBody {
  error: { code: ReceiverErrorCode; message: string }
}

/** Writes `{ error: { code, message } }` with `status`. */
export function sendJsonError(
  res: ServerResponse,
  status: number,
  code: ReceiverErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return
  const body: ReceiverErrorBody = { error: { code, message } }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers })
  res.end(JSON.stringify(body))
}

/** The plain-text acknowledgement the spec's sample receiver answers with (spec: Pause webhook, rule 2). */
export function sendAcknowledgement(res: ServerResponse, text: string): void {
  if (res.headersSent) return
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
  res.end(text)
}
