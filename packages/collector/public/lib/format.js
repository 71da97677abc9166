// Formatting shared by the views.
import { h } from './dom.js'

export const time = (ts) =>
  new Date(ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })

/** The time of day for today's messages, the day and time for older ones. */
export const when = (ts) => (new Date(ts).toDateString() === new Date().toDateString() ? time(ts) : dateTime(ts))

export const dateTime = (ts) =>
  new Date(ts).toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })

export const ARROWS = { incoming: '→', outgoing: '←', event: '★' }

export const safeUrl = (u) => (typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null)

export function platformBadge(platform) {
  return h('span', { class: `badge platform-${platform}`, title: `platform ${platform}` }, platform)
}

/** The platform's badge beside a bot's name, or null when it would only repeat it (bot `slack` on Slack). */
export function platformBadgeBeside(bot, platform) {
  if (!platform || platform.toLowerCase() === String(bot).toLowerCase()) return null
  return platformBadge(platform)
}

export function intentTag(m) {
  if (!m.intent) return null
  const conf = typeof m.confidence === 'number' ? ` ${Math.round(m.confidence * 100)}%` : ''
  return h(
    'span',
    { class: `intent${m.intent === 'NotHandled' ? ' not-handled' : ''}`, 'data-testid': 'intent' },
    m.intent + conf,
  )
}

/** The text a message is shown by. */
export function describe(m) {
  if (m.event?.type === 'customEvent' && m.event.name === 'feedback') return feedbackText(m.event.body?.extraInfo)
  if (m.event) {
    const amount = typeof m.event.amount === 'number' ? ` · ${m.event.amount}` : ''
    return `${m.event.type}: ${m.event.name}${amount}`
  }
  return m.text ?? (m.images.length ? '[image]' : '')
}

/** The mark of a message an operator (a person) wrote in the dashboard. */
export function operatorMark() {
  return h(
    'span',
    { class: 'badge operator-badge', 'data-testid': 'operator-mark', title: 'Written by a person in this dashboard' },
    'operator',
  )
}

export const transcriptHref = (bot, thread) =>
  `#/conversations/${encodeURIComponent(bot)}/${encodeURIComponent(thread)}`

/** A table's head and body. `head` is [[label, numeric?], …]. */
export function table(el, head, rows) {
  el.replaceChildren(
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map(([label, num]) => h('th', { class: num ? 'num' : '' }, label)),
      ),
    ),
    h('tbody', {}, rows),
  )
}

export const barCell = (value, max, bad) =>
  h(
    'td',
    { class: 'bar-cell' },
    h('div', { class: `bar${bad ? ' bad' : ''}`, style: `width:${Math.max(1, (value / Math.max(1, max)) * 100)}%` }),
  )

export function barsList(items, label, value) {
  if (!items.length) return h('p', { class: 'muted' }, 'none yet')
  const max = Math.max(1, ...items.map(value))
  return h(
    'ul',
    { class: 'bars' },
    items.map((it) =>
      h(
        'li',
        {},
        h('span', { class: 'label', title: label(it) }, label(it)),
        h('div', { class: 'bar', style: `width:${(value(it) / max) * 100}%` }),
        h('span', { class: 'n' }, value(it)),
      ),
    ),
  )
}

/** A feedback event as the transcript shows it: the score on its scale, and the comment. */
export function feedbackText(info) {
  const score = info?.score
  if (typeof score !== 'number') return 'Feedback'
  const stars = info.scale === 'stars' || (info.scale === undefined && score > 1)
  const rating = stars
    ? `${score} of 5 stars`
    : score > 0
      ? `thumbs up (${score})`
      : score < 0
        ? `thumbs down (${score})`
        : 'neutral (0)'
  return `Feedback: ${rating}${typeof info.comment === 'string' && info.comment ? ` — “${info.comment}”` : ''}`
}
