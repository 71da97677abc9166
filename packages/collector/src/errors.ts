/**
 * Error codes of the collector's HTTP answers, in the body `{ error: { code, message, path } }`.
 * Stable: match on them.
 */
export type CollectorErrorCode =
  | 'invalid_platform'
  | 'invalid_type'
  | 'invalid_version'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'invalid_json'
  | 'invalid_batch'
  | 'missing_field'
  | 'invalid_field'
  | 'misplaced_intent'
  | 'unsupported_record'
  | 'invalid_signature'
  | 'not_found'
  | 'no_webhook'
  | 'webhook_failed'
  | 'already_claimed'
  | 'invalid_request'
  | 'unauthorized'
  | 'invalid_credentials'
  | 'forbidden'
  | 'cross_origin'
  | 'invalid_host'
  | 'too_many_attempts'
  | 'not_ready'
  | 'idempotency_key_reused'
  | 'conflict'
  | 'internal_error'
  | 'store_unavailable'

/**
 * A request the collector refuses, with the HTTP status and the JSON error body it answers.
 *
 * @example throw new RequestError(400, 'missing_field', '`text` is required', 'text')
 */
export class RequestError extends Error {
  readonly status: number
  readonly code: CollectorErrorCode
  /** Dotted path of the offending field or query parameter; '' for the whole body. */
  readonly path: string
  constructor(status: number, code: CollectorErrorCode, message: string, path = '') {
    super(message)
    this.name = 'RequestError'
    this.status = status
    this.code = code
    this.path = path
  }

  /** The JSON body of the answer. */
  toJSON(): { error: { code: CollectorErrorCode; message: string; path: string } } {
    return { error: { code: this.code, message: this.message, path: this.path } }
  }
}
