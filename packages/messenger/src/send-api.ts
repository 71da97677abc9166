import {
  ConfigError,
  MESSENGER_SEND_URI,
  type MessengerSendRequest,
  type MessengerSendResponse,
  type Tracker,
} from '@convotrack/core'
import { currentTurn, heldTurn, reportError } from '@convotrack/core/adapter'
import { MessengerSendError } from './send-error'

/** Options of {@link trackedSendApi}. */
export interface TrackedSendApiOptions {
  /** The page access token. Sent to the Graph API only; blanked in records (`qs.access_token`). */
  accessToken: string
  /** Graph API base with its version. Default `https://graph.facebook.com/v21.0`; the Send API is `{graphApiUrl}/me/messages`. */
  graphApiUrl?: string
}

/** A Send API request body: `recipient`, `message` (or `sender_action`), `messaging_type`… */
export type MessengerSendBody = MessengerSendRequest['json']

/** Sends one message with the Send API and tracks it; resolves with the Graph API's answer. */
export type MessengerSend = (message: MessengerSendBody) => Promise<MessengerSendResponse>

/**
 * A tracked Send API call: POSTs `message` to the Graph API with the global `fetch`, logs
 * the request and the answer as an outgoing record (the turn's outgoing intent included),
 * and resolves with the answer body. A refused send is tracked with the error body and
 * rejects with a {@link MessengerSendError} carrying it. Sender actions (`typing_on`…) are
 * sent but not tracked: they are not messages.
 *
 * @example const reply = await trackedSendApi(tracker, { accessToken })({ recipient: { id }, message: { text: 'hi' } })
 */
export function trackedSendApi(tracker: Tracker, options: TrackedSendApiOptions): MessengerSend {
  const accessToken = options?.accessToken
  if (typeof accessToken !== 'string' || accessToken === '')
    throw new ConfigError('trackedSendApi: accessToken is required (the page access token the Send API expects)')
  const uri = options.graphApiUrl ? `${options.graphApiUrl.replace(/\/+$/, '')}/me/messages` : MESSENGER_SEND_URI
  const url = `${uri}?access_token=${encodeURIComponent(accessToken)}`

  return async (message) => {
    const recipientId = message?.recipient?.id
    // What the bot decided for this turn, read now: after the await it may have changed.
    const turn = currentTurn(tracker)
    const intent = turn?.outgoingIntent
    const userMetadata = turn?.userMetadata
    const tracked = message?.message !== undefined
    if (tracked) heldTurn(tracker)?.release(recipientId)

    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(message),
    })
    const text = await response.text()
    const body = parseAnswer(text, response.status, response.ok)
    const failed = !response.ok || body.error !== undefined
    if (tracked) {
      try {
        const request: MessengerSendRequest = { uri, method: 'POST', qs: { access_token: accessToken }, json: message }
        tracker.messenger.logOutgoing(request, body, {
          ...(intent && { intent }),
          ...(userMetadata && { userMetadata }),
        })
      } catch (error) {
        reportError(tracker, error)
      }
    }
    if (failed) throw new MessengerSendError(response.status, body)
    return body
  }
}

/** The answer as an object; a non-JSON error answer becomes `{ error: { message } }`. */
function parseAnswer(text: string, status: number, ok: boolean): MessengerSendResponse {
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as MessengerSendResponse
  } catch {
    // not JSON: handled below
  }
  return ok ? {} : { error: { message: text.slice(0, 500) || `HTTP ${status}`, code: status } }
}
