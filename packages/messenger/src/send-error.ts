import type { MessengerSendResponse } from '@convotrack/core'

/** The `error` object of a Graph API error answer. */
export interface GraphApiError {
  message?: string
  type?: string
  code?: number
  error_subcode?: number
  fbtrace_id?: string
  [key: string]: unknown
}

/**
 * A Send API call the Graph API refused. `body` is its answer as it came (also what the
 * outgoing record carries as `responseBody`); `error` is that body's `error` object.
 *
 * @example
 * try { await send(msg) } catch (e) { if (e instanceof MessengerSendError) console.log(e.status, e.error.code) }
 */
export class MessengerSendError extends Error {
  /** HTTP status of the Graph API's answer. */
  readonly status: number
  /** The Graph API's answer body, unchanged. */
  readonly body: MessengerSendResponse
  /** `body.error` (empty when the answer had none). */
  readonly error: GraphApiError

  constructor(status: number, body: MessengerSendResponse) {
    const error = (typeof body.error === 'object' && body.error !== null ? body.error : {}) as GraphApiError
    super(`Messenger Send API failed (${status}): ${error.message ?? 'no error message in the answer'}`)
    this.name = 'MessengerSendError'
    this.status = status
    this.body = body
    this.error = error
  }
}
