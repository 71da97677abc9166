// What the page is showing, shared by the views.

export const state = {
  /** The bot filter ('' = all bots). */
  bot: '',
  bots: [],
  view: 'live',
  /** The date range of reports and lists (lib/range.js): a preset key, or 'custom' with from/to days. */
  range: { key: '30d' },
  /** The open transcript: { bot, thread, paused, info, busy, olderBeforeId, loading }. */
  current: null,
  /** A message id the next opened transcript scrolls to (a search hit), or null. */
  focusMessage: null,
  /** Chart bucket: 'minute' | 'hour'. */
  bucket: 'minute',
  /** The id of the newest message the live stream brought (lib/router.js marks refreshes with it). */
  lastLiveId: 0,
  /** Operator messages sent from any dashboard, not yet matched to the bot's tracked copy. */
  operatorSends: [],
}

export const matchesBot = (bot) => state.bot === '' || state.bot === bot

const threadUsers = new Map()
const key = (bot, thread) => `${bot}\u0000${thread}`

/** Remembers who the user of a thread is (its incoming messages say so). */
export function learnThreadUser(bot, thread, userId) {
  if (userId) threadUsers.set(key(bot, thread), userId)
}

/**
 * The user behind a message. A thread with a conversation id (a Slack channel, a Kik chat, a
 * help-desk ticket) is named by its incoming user; the bot's replies in it carry the channel
 * as their user id on some platforms (Slack), so they borrow the thread's user.
 */
export function userOf(m) {
  if (m.direction !== 'outgoing') learnThreadUser(m.bot, m.thread, m.userId)
  if (m.conversationId == null) return m.userId
  return threadUsers.get(key(m.bot, m.thread)) ?? (m.direction !== 'outgoing' ? m.userId : null)
}

/** One name per conversation, everywhere: the user, and the thread when it is not the user. */
export function conversationName(user, thread) {
  if (!user || user === thread) return thread
  return `${user} · ${thread}`
}
