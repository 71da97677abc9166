// Transcripts: the conversations list (a user's threads grouped under the user) and the open
// transcript (views/transcript.js).
import { getJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { platformBadge, platformBadgeBeside, transcriptHref, when } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { withRange } from '../lib/range.js'
import { conversationName, learnThreadUser, state } from '../lib/state.js'
import { highlightOpen, leaveTranscript, openTranscript } from './transcript.js'
import { focusMessage } from './transcript-focus.js'

const isOpen = (c) => state.current && state.current.bot === c.bot && state.current.thread === c.thread

function conversationItem(c, label, hint) {
  return h(
    'li',
    {
      class: isOpen(c) ? 'on' : '',
      'data-testid': 'conversation',
      dataset: { bot: c.bot, thread: c.thread },
      title: `${c.bot} · user ${c.userId} · thread ${c.thread}`,
      onclick: () => {
        location.hash = transcriptHref(c.bot, c.thread)
      },
    },
    h(
      'div',
      { class: 'who', 'data-testid': 'conversation-name' },
      label,
      hint ? [' ', h('span', { class: 'hint' }, hint)] : null,
    ),
    // The preview has the row's whole width (cut by CSS at the edge, the full text on hover).
    h('div', { class: 'last', 'data-testid': 'conversation-preview', title: c.lastText }, c.lastText ?? ''),
    h(
      'div',
      { class: 'row meta' },
      h(
        'span',
        { class: 'tags' },
        h('span', { class: 'badge count', title: 'messages in this conversation' }, c.messages),
        c.paused ? h('span', { class: 'badge paused-badge' }, 'paused') : null,
        state.bot === '' ? h('span', { class: 'badge' }, c.bot) : null,
        state.bot === '' ? platformBadgeBeside(c.bot, c.platform) : platformBadge(c.platform),
      ),
      h('span', { class: 'muted' }, when(c.lastTs)),
    ),
  )
}

/** Conversations grouped by (bot, user), most recently active first; the list is sorted that way already. */
export function groupByUser(rows) {
  const groups = new Map()
  for (const c of rows) {
    const key = `${c.bot}\u0000${c.userId}`
    const group = groups.get(key) ?? { bot: c.bot, userId: c.userId, threads: [] }
    group.threads.push(c)
    groups.set(key, group)
  }
  return [...groups.values()]
}

function groupItem(g) {
  const messages = g.threads.reduce((t, c) => t + c.messages, 0)
  return h(
    'li',
    { class: 'group', 'data-testid': 'conversation-group', dataset: { bot: g.bot, user: g.userId } },
    h(
      'div',
      { class: 'row group-head', title: `${g.bot} · user ${g.userId}` },
      h('span', { class: 'who', 'data-testid': 'group-user' }, g.userId),
      h(
        'span',
        { class: 'muted', 'data-testid': 'group-size' },
        `${g.threads.length} conversations · ${messages} messages`,
      ),
    ),
    h(
      'ul',
      { class: 'threads' },
      g.threads.map((c) =>
        // Inside the user's group a thread is named by itself; the user's own thread (no conversation id) says so.
        c.thread === c.userId ? conversationItem(c, c.thread, 'no conversation id') : conversationItem(c, c.thread),
      ),
    ),
  )
}

const turn = latest()

async function loadConversations() {
  const list = $('#conversations')
  const mine = turn()
  const rows = await getJson(`api/conversations${q(withRange({ bot: state.bot }))}`)
  if (!mine()) return
  for (const c of rows) if (c.thread !== c.userId) learnThreadUser(c.bot, c.thread, c.userId)
  const groups = groupByUser(rows)
  $('#conv-count').textContent = `${rows.length} conversations · ${groups.length} users`
  list.replaceChildren(
    ...groups.map((g) =>
      g.threads.length > 1
        ? groupItem(g)
        : conversationItem(g.threads[0], conversationName(g.userId, g.threads[0].thread)),
    ),
  )
  if (!rows.length) list.append(h('li', { class: 'empty' }, 'No conversations yet.'))
  highlightOpen()
}

export default {
  name: 'conversations',
  async load(params) {
    // A transcript is named: the one shown is left now, not once the list has loaded.
    if (params[0] && params[1]) leaveTranscript()
    await loadConversations()
    if (params[0] && params[1]) {
      await openTranscript(decodeURIComponent(params[0]), decodeURIComponent(params.slice(1).join('/')))
      // Opened from a search hit: at that message.
      if (state.focusMessage != null) {
        const id = state.focusMessage
        state.focusMessage = null
        await focusMessage(id)
      }
    }
  },
  refresh: loadConversations,
}
