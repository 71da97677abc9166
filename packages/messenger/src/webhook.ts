import { ConvotrackError, type Tracker } from '@convotrack/core'
import { holdTurn, reportError } from '@convotrack/core/adapter'
import type { WebhookMiddleware, WebhookNext, WebhookRequest, WebhookResponse } from './framework-types'
import { groupByUser, isWebhookBody, messengerIncomingLog, type UserItems, withoutUsers } from './webhook-body'

/** Options of {@link messengerWebhook}. */
export interface MessengerWebhookOptions {
  /** Check the tracker's pause store for each sender and keep paused users' events from the bot. Default `true`. */
  pause?: boolean
}

/**
 * Express middleware for a Messenger webhook route, mounted after `express.json()`. Runs the
 * rest of the route as one turn (`setNotHandled()`, `setOutgoingIntent()` stay with it), logs
 * each user's events when the bot first answers that user or when the response is sent, and
 * hands paused users' events to the tracker only.
 *
 * @example app.post('/webhook', express.json(), messengerWebhook(tracker), myHandler)
 */
export function messengerWebhook(tracker: Tracker, options: MessengerWebhookOptions = {}): WebhookMiddleware {
  const checkPause = options.pause ?? true
  return (req, res, next) => {
    const body = req.body
    if (!isWebhookBody(body)) {
      reportError(
        tracker,
        new ConvotrackError(
          'messenger_webhook',
          body === undefined
            ? 'messengerWebhook: req.body is empty; mount express.json() before messengerWebhook(tracker)'
            : 'messengerWebhook: req.body is not a Messenger webhook body ({ object, entry: [...] }); not tracked',
        ),
      )
      return next()
    }
    let users: Map<string, UserItems>
    try {
      users = groupByUser(body)
    } catch (error) {
      reportError(tracker, error)
      return next()
    }
    if (users.size === 0) return next()
    pausedAmong(tracker, checkPause ? [...users.keys()] : [])
      .then((paused) => tracker.withTurn(() => runTurn(tracker, req, res, next, body, users, paused)))
      // Express's next() does not throw (it routes handler errors itself); this only keeps a
      // surprise from becoming an unhandled rejection in the bot's process.
      .catch((error: unknown) => reportError(tracker, error))
  }
}

/** The users among `ids` whose session is paused. Never rejects: `isPaused` fails open. */
async function pausedAmong(tracker: Tracker, ids: string[]): Promise<Set<string>> {
  const answers = await Promise.all(ids.map((id) => (id ? tracker.isPaused(id) : false)))
  return new Set(ids.filter((_, i) => answers[i]))
}

function runTurn(
  tracker: Tracker,
  req: WebhookRequest,
  res: WebhookResponse,
  next: WebhookNext,
  body: { object: string; entry: unknown[] },
  users: Map<string, UserItems>,
  paused: Set<string>,
): void {
  let forward = true
  try {
    // Each user's events are held until the bot first answers that user or the response is sent.
    const held = holdTurn(tracker)
    for (const user of users.values()) held.hold(messengerIncomingLog(tracker, body.object, user), user.userId)
    // Paused users: tracked now (the bot never sees them), then taken out of the body.
    for (const userId of paused) held.release(userId)
    const end = () => held.end()
    res.once('finish', end)
    res.once('close', end)
    if (paused.size > 0) {
      const rest = withoutUsers(body, paused)
      req.body = rest
      if (rest.entry.length === 0) {
        // Nothing left for the bot; Facebook still needs its 200 or it retries and disables the webhook.
        forward = false
        if (!res.headersSent) {
          res.statusCode = 200
          res.setHeader('content-type', 'text/plain; charset=utf-8')
          res.end('EVENT_RECEIVED')
        }
      }
    }
  } catch (error) {
    reportError(tracker, error)
  }
  if (forward) next()
}
