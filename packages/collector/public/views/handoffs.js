// Handoffs: conversations waiting for a person (oldest first, with why and for how long) with
// Claim, and the ones assigned to me. Updated live by `handoff` events.
import { getJson, postJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { transcriptHref } from '../lib/format.js'
import { conversationName, state } from '../lib/state.js'
import { canAct, me, REASONS, since } from './handoff-common.js'

function row(entry, who, withClaim) {
  const open = () => {
    location.hash = transcriptHref(entry.bot, entry.thread)
  }
  return h(
    'tr',
    { 'data-testid': 'handoff-row', dataset: { bot: entry.bot, thread: entry.thread } },
    h(
      'td',
      {},
      h('a', { href: transcriptHref(entry.bot, entry.thread) }, conversationName(entry.userId, entry.thread)),
    ),
    h('td', {}, entry.bot),
    h('td', { 'data-testid': 'handoff-reason' }, REASONS[entry.reason] ?? '—'),
    h('td', { class: 'muted' }, entry.text ?? ''),
    h('td', { class: 'num' }, since(entry.since)),
    h(
      'td',
      {},
      withClaim && canAct(who)
        ? h(
            'button',
            {
              type: 'button',
              class: 'action',
              'data-testid': 'claim-button',
              onclick: async (ev) => {
                ev.target.disabled = true
                try {
                  await postJson('api/handoffs/claim', { bot: entry.bot, thread: entry.thread })
                  open()
                } catch (e) {
                  $('#handoffs-msg').textContent = e.message
                  ev.target.disabled = false
                }
              },
            },
            'Claim',
          )
        : null,
    ),
  )
}

function fill(table, entries, who, withClaim, empty) {
  table.replaceChildren(
    h(
      'tr',
      {},
      ['Conversation', 'Bot', 'Why', 'Message', 'Waiting', ''].map((t) => h('th', {}, t)),
    ),
    ...(entries.length
      ? entries.map((e) => row(e, who, withClaim))
      : [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, empty))]),
  )
}

async function load() {
  const [who, waiting, mine] = await Promise.all([
    me(),
    getJson(`api/handoffs${q({ bot: state.bot, state: 'waiting' })}`),
    getJson(`api/handoffs${q({ bot: state.bot, state: 'assigned', mine: 1 })}`),
  ])
  fill($('#handoffs-waiting'), waiting.handoffs, who, true, 'Nobody is waiting for a person.')
  fill($('#handoffs-mine'), mine.handoffs, who, false, 'Nothing assigned to you.')
  $('#handoffs-count').textContent = waiting.handoffs.length ? `${waiting.handoffs.length} waiting` : ''
}

export default { name: 'handoffs', load, refresh: load }
