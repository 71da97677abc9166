import type { IncomingMessage, ServerResponse } from 'node:http'
import type { PauseStore } from '@convotrack/core'
import { sendAcknowledgement, sendJsonError } from './json-error'
import type { ReceiverRequest } from './raw-body'
import { createSignedJsonReader, describeFieldProblem, type SignedWebhookOptions } from './signed-request'

/**
 * A request handler for Express (4 or 5) or plain `node:http`: typed on Node's own request and
 * response so the package needs no Express types at run time.
 */
export type WebhookHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => Promise<void>

/** Options of {@link pauseReceiver}. */
export interface PauseReceiverOptions extends SignedWebhookOptions {
  /** Where pause state lives: usually `tracker.pauses`. */
  store: PauseStore
  /** Called after a change was stored (for your logs or metrics). Errors thrown here are reported, not answered. */
  onPause?: (change: { userId: string; paused: boolean; webhookId: string | undefined }) => void
}

/** The pause webhook body (spec: Events, Pause webhook). */
export interface PauseWebhookBody {
  /** The session's key: the conversation id when one is sent with messages, else the user id. */
  userId: string
  /** True pauses the bot for that session, false lets it answer again. */
  paused: boolean
}

/**
 * The pause webhook (spec 4.5): verifies the Standard Webhooks signature on the raw bytes,
 * then `store.setPaused(userId, paused)` and answers 200 `OK`.
 *
 * @example app.post('/convotrack/pause', pauseReceiver({ store: tracker.pauses, secret: process.env.CONVOTRACK_WEBHOOK_SECRET }))
 */
export function pauseReceiver(options: PauseReceiverOptions): WebhookHandler {
  const store = options?.store
  if (!store || typeof store.setPaused !== 'function')
    throw new TypeError('pauseReceiver: `store` is required (a PauseStore such as tracker.pauses)')
  const read = createSignedJsonReader(options, 'pauseReceiver')

  return async (req, res, next) => {
    try {
      const accepted = await read(req as ReceiverRequest, res)
      if (!accepted) return
      if (accepted.duplicate) return sendAcknowledgement(res, 'OK (already processed)')
      const problem = describeFieldProblem(accepted.body, { userId: 'string', paused: 'boolean' })
      if (problem) {
        await accepted.release()
        return sendJsonError(res, 400, 'invalid_body', `${problem}: expected { "userId": string, "paused": boolean }`)
      }
      const { userId, paused } = accepted.body as PauseWebhookBody
      try {
        await store.setPaused(userId, paused)
      } catch (error) {
        await accepted.release()
        read.onError(error as Error)
        return sendJsonError(res, 503, 'store_unavailable', 'the pause state could not be saved; retry later')
      }
      try {
        options.onPause?.({ userId, paused, webhookId: accepted.id })
      } catch (error) {
        read.onError(error as Error)
      }
      sendAcknowledgement(res, 'OK')
    } catch (error) {
      read.onError(error as Error)
      if (next) next(error)
      else sendJsonError(res, 500, 'internal_error', 'unexpected receiver failure')
    }
  }
}
