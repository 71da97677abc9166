import {
  type CallOptions,
  type HeldLog,
  type JsonObject,
  type MessengerMessagingItem,
  type MessengerSendRequest,
  pauseKey,
  type Tracker,
  toPlainJson,
  type UniversalMessage,
} from '@convotrack/core'
import { reportError } from '@convotrack/core/adapter'
import type { BotActivity, BotResourceResponse } from './framework-types'
import { messengerIncomingLog } from './webhook-body'

/** The channel whose activities carry Messenger's own JSON in `channelData`. */
export const FACEBOOK_CHANNEL = 'facebook'

/** Activities that are not messages to anyone: never tracked. */
const UNTRACKED_OUTGOING = new Set(['trace', 'typing', 'delay', 'invokeResponse'])

/** What the middleware does with one incoming activity. */
export interface IncomingPlan {
  /** Whose message it is (the user the bot's replies go to). */
  userId: string
  /** Pause key: the Messenger user id on `facebook`, else the conversation id (or the user id). */
  pauseKey: string | undefined
  log: HeldLog
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

function isMessagingItem(v: unknown): v is MessengerMessagingItem {
  return (
    isObject(v) &&
    isObject(v.sender) &&
    typeof v.sender.id === 'string' &&
    isObject(v.recipient) &&
    typeof v.recipient.id === 'string' &&
    typeof v.timestamp === 'number'
  )
}

function epochMs(t: Date | string | undefined): number {
  const ms = t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : Number.NaN
  return Number.isFinite(ms) ? ms : Date.now()
}

/**
 * The Messenger messaging item of a `facebook` activity: its `channelData` (the Bot Framework
 * connector passes Messenger's own event there), else one rebuilt from the activity.
 */
export function messagingItemOf(activity: BotActivity): MessengerMessagingItem {
  if (isMessagingItem(activity.channelData)) return toPlainJson(activity.channelData) as MessengerMessagingItem
  const message: JsonObject = {}
  if (activity.id !== undefined) message.mid = activity.id
  if (activity.text !== undefined) message.text = activity.text
  return {
    sender: { id: activity.from?.id ?? '' },
    recipient: { id: activity.recipient?.id ?? '' },
    timestamp: epochMs(activity.timestamp),
    message,
  }
}

/**
 * The incoming record of an activity, or undefined when it is not tracked: `message`
 * activities on every channel, and on `facebook` also events carrying a Messenger item
 * (postbacks, referrals). Snapshotted now; the intent is read when it is logged.
 */
export function planIncoming(tracker: Tracker, activity: BotActivity): IncomingPlan | undefined {
  if (activity.channelId === FACEBOOK_CHANNEL) {
    const native = isMessagingItem(activity.channelData)
    if (activity.type !== 'message' && !(activity.type === 'event' && native)) return undefined
    const item = messagingItemOf(activity)
    const userId = item.sender.id
    const user = {
      userId,
      entries: new Map([
        [0, { fields: { id: item.recipient.id, time: item.timestamp }, items: [{ live: item, snapshot: item }] }],
      ]),
    }
    return { userId, pauseKey: userId || undefined, log: messengerIncomingLog(tracker, 'page', user) }
  }
  if (activity.type !== 'message') return undefined
  const message = universalOf(activity, activity.from?.id)
  return {
    userId: message.userId,
    pauseKey: pauseKey(message),
    log: (turn) => {
      const options = { notHandled: turn?.notHandled, ...(turn?.userMetadata && { userMetadata: turn.userMetadata }) }
      tracker.withTurn(() => tracker.universal.logIncoming(message, options))
    },
  }
}

/** Universal shape of an activity: text, the human side's id, the conversation, the activity itself. */
function universalOf(activity: BotActivity, userId: string | undefined): UniversalMessage {
  const message: UniversalMessage = { text: activity.text ?? '', userId: userId ?? '' }
  if (activity.conversation?.id) message.conversationId = activity.conversation.id
  message.platformJson = toPlainJson(activity) as JsonObject
  return message
}

/**
 * Logs the activities the bot sent, one outgoing record each: on `facebook` the Send API
 * shape with the channel's `ResourceResponse` id as `message_id`, elsewhere the universal shape.
 */
export function logOutgoingActivities(
  tracker: Tracker,
  activities: Partial<BotActivity>[],
  responses: BotResourceResponse[] | undefined,
  turnActivity: BotActivity,
  options: CallOptions,
): void {
  activities.forEach((activity, i) => {
    if (UNTRACKED_OUTGOING.has(activity.type ?? 'message')) return
    try {
      // The user is the recipient of a reply; the sender of the message being answered otherwise.
      const userId = activity.recipient?.id ?? turnActivity.from?.id
      if ((activity.channelId ?? turnActivity.channelId) === FACEBOOK_CHANNEL) {
        const responseBody: JsonObject = { recipient_id: userId }
        const id = responses?.[i]?.id
        if (id) responseBody.message_id = id
        tracker.messenger.logOutgoing(sendRequestOf(activity, userId ?? ''), responseBody, options)
      } else {
        tracker.universal.logOutgoing(universalOf(activity, userId), options)
      }
    } catch (error) {
      reportError(tracker, error)
    }
  })
}

/** The Send API request the Facebook channel makes for an activity: text, plus native `channelData` parts. */
function sendRequestOf(activity: Partial<BotActivity>, userId: string): MessengerSendRequest {
  const message: JsonObject = {}
  if (activity.text) message.text = activity.text
  const native = isObject(activity.channelData) ? activity.channelData : {}
  for (const key of ['attachment', 'quick_replies', 'metadata'] as const)
    if (native[key] !== undefined) message[key] = toPlainJson(native[key])
  if (activity.attachments?.length) message.attachments = toPlainJson(activity.attachments)
  const json: MessengerSendRequest['json'] = { recipient: { id: userId }, message }
  if (typeof native.messaging_type === 'string') json.messaging_type = native.messaging_type
  if (typeof native.notification_type === 'string') json.notification_type = native.notification_type
  return { method: 'POST', json }
}
