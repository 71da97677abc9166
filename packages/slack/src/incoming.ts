import type { SlackRecord } from '@convotrack/core'

/** The fields of a Slack `message` / `app_mention` event this package reads. */
export interface SlackMessageEventLike {
  type: string
  subtype?: string
  channel?: string
  user?: string
  text?: string
  ts?: string
  team?: string
  bot_id?: string
  [key: string]: unknown
}

/** Message subtypes that are still a person writing: a file with a comment, a thread reply also sent to the channel, `/me`. */
export const USER_MESSAGE_SUBTYPES: readonly string[] = ['file_share', 'thread_broadcast', 'me_message']

/**
 * The default filter for which message events are a user's message: no subtype (or one of
 * {@link USER_MESSAGE_SUBTYPES}), a user, and not posted by a bot. Edits (`message_changed`),
 * deletions (`message_deleted`), `bot_message`, joins and the like are left out.
 *
 * @example slackTracking(tracker, { trackMessage: (e) => isUserMessage(e) || e.subtype === 'bot_message' })
 */
export function isUserMessage(event: SlackMessageEventLike): boolean {
  if (event.subtype !== undefined && !USER_MESSAGE_SUBTYPES.includes(event.subtype)) return false
  return typeof event.user === 'string' && event.bot_id === undefined
}

/** An incoming record without its team name (added once known) and the pause key. */
export interface IncomingMessage {
  token: string | undefined
  teamId: string | undefined
  message: SlackRecord['message']
  /** The conversation: the pause key. */
  channel: string
  /** True for Events API events (acknowledged by Bolt before any middleware). */
  isEvent: boolean
}

export interface ReadOptions {
  trackMessage: (event: SlackMessageEventLike) => boolean
  trackActions: boolean
}

type Obj = Record<string, unknown>

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/**
 * Reads the user's message out of a request body: a `message` or `app_mention` event, or a
 * `block_actions` payload (a button click, a menu choice). Anything else is not an incoming
 * message (undefined). Spec: "Team chat" incoming `{ token, team, bot, message }`.
 */
export function readIncoming(body: unknown, options: ReadOptions): IncomingMessage | undefined {
  if (!isObj(body)) return undefined
  const token = str(body.token)
  if (body.type === 'event_callback' && isObj(body.event)) {
    const event = body.event as SlackMessageEventLike
    if (event.type !== 'message' && event.type !== 'app_mention') return undefined
    if (!options.trackMessage(event)) return undefined
    const channel = str(event.channel)
    if (!channel) return undefined
    return {
      token,
      teamId: str(body.team_id),
      channel,
      isEvent: true,
      message: compact({
        type: event.type,
        channel,
        user: event.user,
        text: event.text,
        ts: event.ts,
        team: event.team ?? str(body.team_id),
      }),
    }
  }
  if (body.type === 'block_actions' && options.trackActions && Array.isArray(body.actions) && isObj(body.actions[0])) {
    const action = body.actions[0]
    const channel =
      (isObj(body.channel) && str(body.channel.id)) ||
      (isObj(body.container) && str(body.container.channel_id)) ||
      undefined
    if (!channel) return undefined // App Home and modal actions belong to no conversation
    const user = isObj(body.user) ? body.user : {}
    const team = isObj(body.team) ? str(body.team.id) : undefined
    return {
      token,
      teamId: team ?? str(user.team_id),
      channel,
      isEvent: false,
      message: compact({
        type: 'block_actions',
        channel,
        user: str(user.id),
        text: actionText(action),
        ts: str(action.action_ts),
        team: str(user.team_id) ?? team,
        actions: body.actions,
      }),
    }
  }
  return undefined
}

/** What the user picked, in words: the button's label, the chosen option, else the value. */
export function actionText(action: Obj): string | undefined {
  const label = (v: unknown): string | undefined => (isObj(v) && isObj(v.text) ? str(v.text.text) : undefined)
  if (action.type === 'button') return label(action) ?? str(action.value)
  const choice = label(action.selected_option)
  if (choice) return choice
  if (Array.isArray(action.selected_options)) {
    const all = action.selected_options.map(label).filter((t): t is string => t !== undefined)
    if (all.length > 0) return all.join(', ')
  }
  return (
    str(action.value) ??
    str(action.selected_user) ??
    str(action.selected_channel) ??
    str(action.selected_conversation) ??
    str(action.selected_date) ??
    str(action.selected_time) ??
    label(action)
  )
}

/** Leaves out keys whose value is undefined, so the record has exactly the fields the event had. */
function compact(message: Obj & { type: string; channel: string }): SlackRecord['message'] {
  const out: Obj = {}
  for (const [k, v] of Object.entries(message)) if (v !== undefined) out[k] = v
  return out as SlackRecord['message']
}

/**
 * Where a request's conversation is, for `respond()` records and events that are not
 * messages: the event's channel, the interaction's channel, a slash command's channel.
 */
export function conversationOf(body: unknown): string | undefined {
  if (!isObj(body)) return undefined
  if (isObj(body.event))
    return str(body.event.channel) ?? (isObj(body.event.item) ? str(body.event.item.channel) : undefined)
  if (isObj(body.channel)) return str(body.channel.id)
  if (isObj(body.container)) return str(body.container.channel_id)
  return str(body.channel_id)
}

/** The response_url(s) of an interaction or command, which `respond()` posts to. */
export function responseUrlsOf(body: unknown): Set<string> {
  const urls = new Set<string>()
  if (!isObj(body)) return urls
  if (typeof body.response_url === 'string') urls.add(normalizeUrl(body.response_url))
  if (Array.isArray(body.response_urls))
    for (const r of body.response_urls)
      if (isObj(r) && typeof r.response_url === 'string') urls.add(normalizeUrl(r.response_url))
  return urls
}

/** `origin + path`, the way undici names the request, so the two compare equal. */
function normalizeUrl(raw: string): string {
  try {
    const u = new URL(raw)
    return `${u.origin}${u.pathname}${u.search}`
  } catch {
    return raw
  }
}
