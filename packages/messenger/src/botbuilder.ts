import type { CallOptions, Tracker } from '@convotrack/core'
import { currentTurn, holdTurn, reportError } from '@convotrack/core/adapter'
import { type IncomingPlan, logOutgoingActivities, planIncoming } from './activity-records'
import type { BotTurnContext } from './framework-types'

/** Options of {@link MessengerMiddleware}. */
export interface MessengerMiddlewareOptions {
  /** Check the tracker's pause store for each incoming message and skip the bot while paused. Default `true`. */
  pause?: boolean
}

/**
 * botbuilder middleware (`Middleware.onTurn`): tracks each incoming message and every activity
 * the bot sends. On the `facebook` channel records have Messenger's shape (the incoming one
 * built from `activity.channelData`, the `ResourceResponse` id as `message_id`); on other
 * channels the universal shape. While the user is paused the message is tracked and the bot
 * is not run. Turn errors go on to the adapter's `onTurnError` unchanged.
 *
 * @example adapter.use(new MessengerMiddleware(tracker))
 */
export class MessengerMiddleware {
  private readonly pause: boolean

  constructor(
    private readonly tracker: Tracker,
    options: MessengerMiddlewareOptions = {},
  ) {
    this.pause = options.pause ?? true
  }

  async onTurn(context: BotTurnContext, next: () => Promise<void>): Promise<void> {
    const tracker = this.tracker
    const activity = context.activity
    let plan: IncomingPlan | undefined
    try {
      plan = activity ? planIncoming(tracker, activity) : undefined
    } catch (error) {
      reportError(tracker, error)
    }
    const paused = plan !== undefined && this.pause && (await tracker.isPaused(plan.pauseKey))
    return tracker.withTurn(async () => {
      const turn = currentTurn(tracker)
      const held = holdTurn(tracker)
      if (plan) held.hold(plan.log, plan.userId)
      if (paused) {
        held.end()
        return // the bot does not answer a paused user: next() is not called
      }
      try {
        context.onSendActivities(async (_ctx, activities, sendNext) => {
          held.release()
          const options: CallOptions = {}
          if (turn?.outgoingIntent) options.intent = turn.outgoingIntent
          if (turn?.userMetadata) options.userMetadata = turn.userMetadata
          const responses = await sendNext()
          logOutgoingActivities(tracker, activities, responses, activity, options)
          return responses
        })
      } catch (error) {
        reportError(tracker, error)
      }
      try {
        await next()
      } finally {
        held.end()
      }
    })
  }
}
