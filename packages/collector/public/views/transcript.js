// One transcript: bubbles (older pages load on scroll), raw JSON on demand, Pause / Unpause
// and the operator's composer.
import { getJson, postJson, q } from '../lib/api.js'
import { $, copyButton, h } from '../lib/dom.js'
import {
  dateTime,
  describe,
  intentTag,
  operatorMark,
  platformBadge,
  platformBadgeBeside,
  safeUrl,
  when,
} from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { conversationName, state, userOf } from '../lib/state.js'
import { renderHandoffPanel } from './handoff-panel.js'
import { llmHead, llmParts, setTraceUrl } from './llm-parts.js'

/** Messages per page; older pages load when the list is scrolled to its top. */
export const PAGE = 200

export function bubble(m) {
  const images = m.images.map(safeUrl).filter(Boolean)
  const raw = h('div', { class: 'raw-slot' })
  const rawBtn = h(
    'button',
    {
      type: 'button',
      class: 'raw-toggle',
      'data-testid': 'raw-toggle',
      onclick: async () => {
        if (raw.firstChild) {
          raw.replaceChildren()
          rawBtn.textContent = 'raw JSON'
          return
        }
        const record = await getJson(`api/records/${m.recordId}`)
        const pre = h('pre', { class: 'raw', 'data-testid': 'raw-json' }, JSON.stringify(record.raw, null, 2))
        raw.replaceChildren(pre)
        rawBtn.textContent = 'hide JSON'
        // It opens below the bubble, often below the fold: bring it into view.
        pre.scrollIntoView({ block: 'nearest' })
      },
    },
    'raw JSON',
  )
  const operator = m.sentBy === 'operator'
  return h(
    'div',
    {
      class: `msg ${m.direction}${operator ? ' operator' : ''}`,
      'data-testid': 'transcript-message',
      dataset: { direction: m.direction, id: m.id, ts: m.ts },
    },
    m.text || m.event ? h('div', { class: 'bubble' }, describe(m)) : null,
    images.length
      ? h(
          'div',
          { class: 'chips' },
          images.map((src) => h('img', { src, alt: 'image', loading: 'lazy' })),
        )
      : null,
    m.buttons.length
      ? h(
          'div',
          { class: 'chips' },
          m.buttons.map((b) => h('span', { class: 'chip', title: b.value ?? '' }, b.label)),
        )
      : null,
    llmParts(m),
    h(
      'div',
      { class: 'meta' },
      operator ? operatorMark() : null,
      // Event time; the arrival, when it differs (an import, a late batch), on hover.
      h(
        'span',
        {
          class: 'when',
          title: m.receivedAt && Math.abs(m.receivedAt - m.ts) > 60_000 ? `received ${dateTime(m.receivedAt)}` : null,
        },
        when(m.ts),
      ),
      // An event's platform is the query value it was posted with (`generic` by default), not the conversation's.
      m.direction === 'event'
        ? h('span', { class: 'badge', 'data-testid': 'event-badge' }, 'event')
        : platformBadge(m.platform),
      intentTag(m),
      rawBtn,
    ),
    raw,
  )
}

const TAKEOVER_TEXT = {
  pause: 'paused the bot',
  resume: 'resumed the bot',
  'handoff.claim': 'took the conversation',
  'handoff.release': 'released the conversation',
  'handoff.auto-resume': 'resumed the bot (no message for a while)',
}

/** A pause, resume, claim or release, as a line between the bubbles at its time. */
function takeoverMark(t) {
  return h(
    'div',
    { class: 'takeover-mark', 'data-testid': 'takeover-mark', dataset: { ts: t.ts } },
    `${t.actor} ${TAKEOVER_TEXT[t.action] ?? t.action} · ${dateTime(t.ts)}`,
  )
}

/**
 * The bubbles with the takeover marks placed by time; marks older than the page's first
 * message stay out while older pages remain to load.
 */
function withTakeovers(bubbles, takeovers, olderPages) {
  const out = []
  let i = 0
  const first = Number(bubbles[0]?.dataset.ts ?? Number.POSITIVE_INFINITY)
  for (const b of bubbles) {
    const ts = Number(b.dataset.ts)
    while (i < takeovers.length && takeovers[i].ts <= ts) {
      if (!(olderPages && takeovers[i].ts < first)) out.push(takeoverMark(takeovers[i]))
      i++
    }
    out.push(b)
  }
  for (; i < takeovers.length; i++) out.push(takeoverMark(takeovers[i]))
  return out
}

/** Marks a bubble as the operator's, once. */
function markOperator(el) {
  if (el.classList.contains('operator')) return
  el.classList.add('operator')
  el.querySelector('.meta')?.prepend(operatorMark())
}

/**
 * An operator's send was announced (by any dashboard): mark the bot's tracked copy in the open
 * transcript if it is there already, else remember it for the live message still to come.
 */
export function operatorSent(send) {
  const c = state.current
  if (c && c.bot === send.bot && c.thread === send.thread) {
    const match = [...document.querySelectorAll('#bubbles .msg.outgoing:not(.operator)')].find(
      (el) => Number(el.dataset.ts) >= send.sentAt && el.querySelector('.bubble')?.textContent === send.text.trim(),
    )
    if (match) return markOperator(match)
  }
  state.operatorSends.push(send)
  if (state.operatorSends.length > 100) state.operatorSends.shift()
}

/** A live message: is it the copy of an operator's send? (marks it, and forgets the send) */
export function claimOperatorSend(m) {
  if (m.direction !== 'outgoing' || m.text == null || m.sentBy) return m
  const i = state.operatorSends.findIndex(
    (s) => s.bot === m.bot && s.thread === m.thread && s.text.trim() === m.text.trim() && m.ts >= s.sentAt,
  )
  if (i < 0) return m
  state.operatorSends.splice(i, 1)
  return { ...m, sentBy: 'operator' }
}

export function renderTakeover() {
  const c = state.current
  const box = $('#takeover')
  if (!c || !box) return
  const info = c.info
  const stateEl = h(
    'span',
    { class: `state ${c.paused ? 'paused' : 'running'}`, 'data-testid': 'pause-state' },
    c.paused ? 'Paused — you are in control' : 'Bot answering',
  )
  const btn = h(
    'button',
    {
      type: 'button',
      class: `action ${c.paused ? '' : 'pause'}`,
      'data-testid': 'pause-button',
      disabled: !info.canPause || c.busy,
      title: info.canPause ? '' : 'Register a pauseWebhookUrl for this bot to pause it',
      onclick: () => togglePause(),
    },
    c.busy ? (c.paused ? 'Unpausing…' : 'Pausing…') : c.paused ? 'Unpause' : 'Pause',
  )
  const why = info.canPause
    ? null
    : h('span', { class: 'hint', 'data-testid': 'pause-unavailable' }, 'Pause needs a pauseWebhookUrl for this bot')
  box.replaceChildren(stateEl, btn)
  // Below the title line, so the reason does not squeeze the title.
  $('#takeover-why')?.replaceChildren(...(why ? [why] : []))
}

async function togglePause() {
  const c = state.current
  if (!c || c.busy) return
  c.busy = true
  $('#takeover-alert').textContent = ''
  renderTakeover()
  try {
    const result = await postJson('api/pause', { bot: c.bot, thread: c.thread, paused: !c.paused })
    if (state.current === c) c.paused = result.paused
  } catch (e) {
    $('#takeover-alert').textContent = e.message
  } finally {
    c.busy = false
    renderTakeover()
  }
}

function countLabel(c, bubbles) {
  const n = bubbles.querySelectorAll('.msg').length
  return c.olderBeforeId == null ? `${n} messages` : `latest ${n} messages · scroll up for older`
}

/** Loads the page before the oldest bubble, keeping what the reader sees in place. */
export async function loadOlder() {
  const c = state.current
  const bubbles = $('#bubbles')
  if (!c || !bubbles || c.olderBeforeId == null || c.loading) return
  c.loading = true
  const more = $('#load-older')
  if (more) more.textContent = 'Loading older messages…'
  try {
    const data = await getJson(
      `api/transcript${q({ bot: c.bot, thread: c.thread, limit: PAGE, beforeId: c.olderBeforeId })}`,
    )
    if (state.current !== c) return
    const before = bubbles.scrollHeight
    const older = document.createDocumentFragment()
    for (const m of data.messages) older.append(bubble(m))
    bubbles.insertBefore(older, bubbles.querySelector('.msg'))
    c.olderBeforeId = data.olderBeforeId
    bubbles.scrollTop += bubbles.scrollHeight - before
  } catch (e) {
    $('#takeover-alert').textContent = `Could not load older messages: ${e.message}`
  } finally {
    c.loading = false
    renderMore(c, bubbles)
  }
}

function renderMore(c, bubbles) {
  const existing = $('#load-older')
  if (c.olderBeforeId == null) existing?.remove()
  else if (existing) existing.textContent = 'Load older messages'
  $('#transcript-count').textContent = countLabel(c, bubbles)
}

/** Turns of leaving the pane; an open's answer is drawn only while its turn is the latest. */
const turn = latest()
/** The latest leave's turn (an open takes one as it begins): an earlier open answered later is dropped. */
let leaving = turn()

/** The pane is this transcript's again: interactive, not busy. */
function settle(pane) {
  pane.inert = false
  pane.removeAttribute('aria-busy')
}

/**
 * Another transcript is being opened: until it replaces the one shown, that one stays in the page
 * inert (nothing typed or clicked there goes to the conversation being left — an operator message
 * least of all) and marked busy, and an open still loading is superseded. Called as soon as the
 * route names a transcript (before the conversations list loads), and by openTranscript.
 */
export function leaveTranscript() {
  leaving = turn()
  const pane = $('#transcript')
  if (!pane) return
  pane.inert = true
  pane.setAttribute('aria-busy', 'true')
}

/** Opens a transcript in the pane (the newest page of it), replacing the one shown. */
export async function openTranscript(bot, thread) {
  const pane = $('#transcript')
  leaveTranscript()
  const mine = leaving
  let data
  try {
    data = await getJson(`api/transcript${q({ bot, thread, limit: PAGE })}`)
  } catch (e) {
    if (!mine()) return
    settle(pane)
    pane.replaceChildren(h('p', { class: 'empty' }, e.message))
    return
  }
  // A later open won (its answer came first): this one's answer is not shown over it.
  if (!mine()) return
  settle(pane)
  const c = { bot, thread, paused: data.paused, info: data.bot, busy: false, olderBeforeId: data.olderBeforeId }
  state.current = c
  setTraceUrl(data.traceUrl)
  const more =
    data.olderBeforeId != null
      ? h(
          'button',
          {
            type: 'button',
            class: 'load-older',
            id: 'load-older',
            'data-testid': 'load-older',
            onclick: () => loadOlder(),
          },
          'Load older messages',
        )
      : null
  const bubbles = h(
    'div',
    {
      class: 'bubbles',
      id: 'bubbles',
      'data-testid': 'bubbles',
      onscroll: (ev) => ev.target.scrollTop < 120 && loadOlder(),
    },
    more,
    withTakeovers(data.messages.map(bubble), data.takeovers ?? [], data.olderBeforeId != null),
  )
  const user = data.messages.map(userOf).find((u) => u != null && u !== '') ?? null
  const input = h('input', {
    id: 'operator-text',
    'data-testid': 'operator-input',
    placeholder: data.bot.canMessage
      ? 'Type a message; it is sent as the bot and marked as yours here'
      : 'No operator message URL registered for this bot',
    disabled: !data.bot.canMessage,
    autocomplete: 'off',
  })
  const sendNote = h('p', { class: 'hint', id: 'operator-note', 'data-testid': 'operator-note' })
  const composer = h(
    'form',
    {
      class: 'composer',
      onsubmit: async (ev) => {
        ev.preventDefault()
        const text = input.value.trim()
        if (!text) return
        sendNote.textContent = 'Sending…'
        try {
          await postJson('api/operator-message', { bot, thread, text })
          input.value = ''
          sendNote.textContent = `Sent as ${bot}.`
        } catch (e) {
          sendNote.textContent = e.message
        }
      },
    },
    input,
    h(
      'button',
      { type: 'submit', class: 'primary', disabled: !data.bot.canMessage, 'data-testid': 'operator-send' },
      'Send',
    ),
  )
  const name = conversationName(user, thread)
  pane.replaceChildren(
    h(
      'div',
      { class: 'transcript-head', 'data-testid': 'transcript-head' },
      // One line: the title takes what the takeover controls leave, cut with an ellipsis only when it must.
      h(
        'div',
        { class: 'head-line' },
        h('h2', { 'data-testid': 'transcript-title', title: name }, name),
        h('div', { class: 'takeover', id: 'takeover' }),
      ),
      h(
        'div',
        { class: 'muted ids', 'data-testid': 'transcript-ids' },
        h('strong', { class: 'bot-name', 'data-testid': 'transcript-bot', title: `Bot ${bot}` }, bot),
        headPlatform(bot, data.messages),
        h(
          'span',
          { class: 'thread' },
          'thread ',
          h('code', { class: 'id', 'data-testid': 'thread-id', title: thread }, thread),
          copyButton(thread, 'copy-thread'),
        ),
        h('span', { id: 'transcript-count', 'data-testid': 'transcript-count' }, ''),
      ),
      llmHead(data),
      h('div', { id: 'takeover-why' }),
      h('div', { class: 'alert', id: 'takeover-alert', 'data-testid': 'takeover-alert' }),
    ),
    h('div', { class: 'handoff-panel', id: 'handoff-panel', 'data-testid': 'handoff-panel' }),
    bubbles,
    h('div', {}, composer, sendNote),
  )
  $('#transcript-count').textContent = countLabel(c, bubbles)
  renderTakeover()
  bubbles.scrollTop = bubbles.scrollHeight
  highlightOpen()
  renderHandoffPanel().catch((e) => {
    $('#takeover-alert').textContent = e.message
  })
}

/**
 * The header's platform badge: the platform of the latest message that is not an event (an
 * event carries the value it was posted with, `generic` by default), and only when it says
 * more than the bot's name (a bot named `slack` on Slack shows no second "slack").
 */
function headPlatform(bot, messages) {
  const badge = platformBadgeBeside(bot, messages.findLast((m) => m.direction !== 'event')?.platform)
  badge?.setAttribute('data-testid', 'transcript-platform')
  return badge
}

/** A live message of the open transcript. */
export function appendLive(m) {
  const bubbles = $('#bubbles')
  const c = state.current
  if (!bubbles || !c) return
  const atBottom = bubbles.scrollHeight - bubbles.scrollTop - bubbles.clientHeight < 40
  bubbles.append(bubble(m))
  $('#transcript-count').textContent = countLabel(c, bubbles)
  if (atBottom) bubbles.scrollTop = bubbles.scrollHeight
}

export function highlightOpen() {
  for (const li of document.querySelectorAll('#conversations li[data-testid=conversation]'))
    li.classList.toggle(
      'on',
      !!state.current && li.dataset.bot === state.current.bot && li.dataset.thread === state.current.thread,
    )
}
