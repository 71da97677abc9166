import {
  type HeldLog,
  isMessengerUserEvent,
  type JsonObject,
  type MessengerMessagingItem,
  type MessengerWebhookBody,
  NOT_HANDLED,
  type Tracker,
  toPlainJson,
} from '@convotrack/core'

/** One messaging item as the bot sees it (`live`, where it may set `intent`) and as it arrived. */
interface HeldItem {
  live: MessengerMessagingItem
  snapshot: MessengerMessagingItem
}

/** The items of one user in a webhook body, entry by entry (entry fields kept). */
export interface UserItems {
  userId: string
  entries: Map<number, { fields: JsonObject; items: HeldItem[] }>
}

type RawBody = { object: string; entry: unknown[] }

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** True for the shape Facebook posts to a webhook: `{ object, entry: [...] }`. */
export function isWebhookBody(body: unknown): body is RawBody {
  return isObject(body) && typeof body.object === 'string' && Array.isArray(body.entry)
}

/** The Messenger user a messaging item is from (the pause key): `sender.id`. */
export function senderOf(item: unknown): string {
  const sender = isObject(item) ? item.sender : undefined
  return isObject(sender) && typeof sender.id === 'string' ? sender.id : ''
}

/**
 * Splits the `messaging` items of a webhook body by sender, keeping each user's items in
 * order and inside their entries. Entries without `messaging` (feed `changes`, handover
 * `standby`) are not Messenger messages and are left out of tracking.
 */
export function groupByUser(body: RawBody): Map<string, UserItems> {
  const users = new Map<string, UserItems>()
  body.entry.forEach((entry, index) => {
    if (!isObject(entry) || !Array.isArray(entry.messaging)) return
    const { messaging, ...fields } = entry
    for (const raw of messaging as unknown[]) {
      // Facebook documents delivery receipts without `timestamp`; core needs one on every item
      // it is given, and never keeps receipts by default, so such receipts are left out here.
      if (isObject(raw) && typeof raw.timestamp !== 'number' && !isMessengerUserEvent(raw as MessengerMessagingItem))
        continue
      const userId = senderOf(raw)
      let user = users.get(userId)
      if (!user) {
        user = { userId, entries: new Map() }
        users.set(userId, user)
      }
      let held = user.entries.get(index)
      if (!held) {
        held = { fields, items: [] }
        user.entries.set(index, held)
      }
      const live = (isObject(raw) ? raw : {}) as MessengerMessagingItem
      held.items.push({ live, snapshot: toPlainJson(raw) as MessengerMessagingItem })
    }
  })
  return users
}

/**
 * The body the bot's handler gets: the same body without the items of `removed` users, and
 * without entries left with no item (sample bots read `entry.messaging[0]`).
 */
export function withoutUsers(body: RawBody, removed: ReadonlySet<string>): RawBody {
  const entry = body.entry.flatMap((e) => {
    if (!isObject(e) || !Array.isArray(e.messaging)) return [e]
    const messaging = (e.messaging as unknown[]).filter((item) => !removed.has(senderOf(item)))
    if (messaging.length === 0 && e.messaging.length > 0) return []
    return [{ ...e, messaging }]
  })
  return { ...body, entry }
}

/**
 * Logs one user's part of a webhook body with `tracker.messenger.logIncoming`: the items as
 * they arrived, each with the intent the bot put on it (`item.intent = …`), else NotHandled
 * when the turn says so (spec: the intent goes inside each `messaging` item).
 */
export function messengerIncomingLog(tracker: Tracker, object: string, user: UserItems): HeldLog {
  return (turn) => {
    const entry = [...user.entries.values()].map(({ fields, items }) => ({
      ...fields,
      messaging: items.map(({ live, snapshot }) => {
        const intent = live.intent ?? snapshot.intent ?? (turn?.notHandled ? NOT_HANDLED : undefined)
        return intent ? { ...snapshot, intent } : snapshot
      }),
    }))
    const body = { object, entry } as MessengerWebhookBody
    // A fresh turn, so core adds no turn-wide intent over the per-item ones set above.
    try {
      tracker.withTurn(() =>
        tracker.messenger.logIncoming(body, turn?.userMetadata ? { userMetadata: turn.userMetadata } : {}),
      )
    } finally {
      // NotHandled belongs to the message the bot was handling when it said so: once that
      // record is out, it must not mark the next user's message of a batched webhook.
      if (turn) turn.notHandled = false
    }
  }
}
