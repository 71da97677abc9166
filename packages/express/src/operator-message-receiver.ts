import type { JsonObject } from '@convotrack/core'
import { sendAcknowledgement, sendJsonError } from './json-error'
import type { WebhookHandler } from './pause-receiver'
import type { ReceiverRequest } from './raw-body'
import { createSignedJsonReader, describeFieldProblem, type SignedWebhookOptions } from './signed-request'

/** What the operator typed in a live transcript, to be sent as if from the bot. */
export interface OperatorMessage {
  /** The session key, as in the pause webhook: conversation id when one is used, else user id. */
  userId: string
  /** The text to send. */
  text: string
  /** Optional platform-specific message JSON (buttons, cards…) to send instead of plain text. */
  messageJson?: JsonObject
  /** The `webhook-id` of the delivery (an idempotency key); undefined for unsigned calls. */
  webhookId: string | undefined
}

/** Options of {@link operatorMessageReceiver}. */
export interface OperatorMessageReceiverOptions extends SignedWebhookOptions {
  /**
   * Sends the message through your platform. Resolve when sent; a throw or rejection answers
   * 502 `send_failed` and the same delivery may be retried.
   */
  onMessage: (message: OperatorMessage) => unknown | Promise<unknown>
}

/**
 * The operator's send-message webhook: same signature check as the pause webhook, body
 * `{ userId, text, messageJson? }` handed to `onMessage`, then 200 `OK`.
 *
 * @example app.post('/convotrack/message', operatorMessageReceiver({ secret, onMessage: ({ userId, text }) => sendToUser(userId, text) }))
 */
export function operatorMessageReceiver(options: OperatorMessageReceiverOptions): WebhookHandler {
  if (typeof options?.onMessage !== 'function')
    throw new TypeError(
      'operatorMessageReceiver: `onMessage` is required (a function that sends the message to the user)',
    )
  const read = createSignedJsonReader(options, 'operatorMessageReceiver')

  return async (req, res, next) => {
    try {
      const accepted = await read(req as ReceiverRequest, res)
      if (!accepted) return
      if (accepted.duplicate) return sendAcknowledgement(res, 'OK (already sent)')
      const problem = describeFieldProblem(accepted.body, { userId: 'string', text: 'string', messageJson: 'object?' })
      if (problem) {
        await accepted.release()
        return sendJsonError(
          res,
          400,
          'invalid_body',
          `${problem}: expected { "userId": string, "text": string, "messageJson"?: object }`,
        )
      }
      const body = accepted.body as { userId: string; text: string; messageJson?: JsonObject }
      const message: OperatorMessage = { userId: body.userId, text: body.text, webhookId: accepted.id }
      if (body.messageJson !== undefined) message.messageJson = body.messageJson
      try {
        await options.onMessage(message)
      } catch (error) {
        await accepted.release()
        read.onError(error as Error)
        return sendJsonError(res, 502, 'send_failed', 'the message could not be sent to the user; retry later')
      }
      sendAcknowledgement(res, 'OK')
    } catch (error) {
      read.onError(error as Error)
      if (next) next(error)
      else sendJsonError(res, 500, 'internal_error', 'unexpected receiver failure')
    }
  }
}
