// The handoff part of an open transcript: who has the conversation (Claim / Release), and the
// operators' internal notes with a box to add one. Notes are never sent to the user.
import { getJson, postJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { dateTime } from '../lib/format.js'
import { state } from '../lib/state.js'
import { canAct, me, REASONS, since } from './handoff-common.js'

/** Renders the panel of the open transcript (`#handoff-panel`), fresh from the API. */
export async function renderHandoffPanel() {
  const c = state.current
  const box = $('#handoff-panel')
  if (!c || !box) return
  const [who, queue, notes] = await Promise.all([
    me(),
    getJson(`api/handoffs${q({ bot: c.bot, thread: c.thread, state: 'all' })}`),
    getJson(`api/notes${q({ bot: c.bot, thread: c.thread })}`),
  ])
  if (state.current !== c) return
  const entry = queue.handoffs[0]
  const msg = h('p', { class: 'hint', 'data-testid': 'handoff-msg', role: 'status' })
  const act = (path) => async () => {
    msg.textContent = ''
    try {
      await postJson(path, { bot: c.bot, thread: c.thread })
      await renderHandoffPanel()
    } catch (e) {
      msg.textContent = e.message
    }
  }
  let status
  if (entry?.state === 'assigned') {
    const mine = entry.assignee === who.name
    status = h(
      'div',
      { class: 'handoff-status assigned' },
      h('span', { 'data-testid': 'handoff-assignee' }, mine ? 'Assigned to you' : `Assigned to ${entry.assignee}`),
      canAct(who) && (mine || who.role === 'admin')
        ? h(
            'button',
            { type: 'button', class: 'action', 'data-testid': 'release-button', onclick: act('api/handoffs/release') },
            'Release',
          )
        : null,
    )
  } else {
    status = h(
      'div',
      { class: `handoff-status ${entry ? 'waiting' : ''}` },
      h(
        'span',
        { 'data-testid': 'handoff-assignee' },
        entry ? `Waiting for a person — ${REASONS[entry.reason] ?? 'queued'}, ` : 'Not in the handoff queue',
        entry ? since(entry.since) : null,
      ),
      canAct(who)
        ? h(
            'button',
            { type: 'button', class: 'action', 'data-testid': 'claim-button', onclick: act('api/handoffs/claim') },
            'Claim',
          )
        : null,
    )
  }
  const list = h(
    'ul',
    { class: 'notes', 'data-testid': 'notes' },
    notes.notes.map((n) =>
      h(
        'li',
        { class: `note ${n.author === 'system' ? 'system' : ''}`, 'data-testid': 'note' },
        h('span', { class: 'note-text' }, n.text),
        h('span', { class: 'muted' }, ` — ${n.author}, ${dateTime(n.ts)}`),
      ),
    ),
  )
  const input = h('input', {
    'data-testid': 'note-input',
    placeholder: 'Internal note (never sent to the user)',
    autocomplete: 'off',
  })
  const form = canAct(who)
    ? h(
        'form',
        {
          class: 'composer note-form',
          onsubmit: async (ev) => {
            ev.preventDefault()
            const text = input.value.trim()
            if (!text) return
            // Taken out of the box before it is sent: a render on the note's own live event
            // (which may come before this answer) must not bring it back as a draft.
            input.value = ''
            try {
              await postJson('api/notes', { bot: c.bot, thread: c.thread, text })
              await renderHandoffPanel()
            } catch (e) {
              // Not stored: the text goes back into the box as it is now (a render may have replaced it).
              const now = box.querySelector('[data-testid="note-input"]') ?? input
              if (!now.value) now.value = text
              const shown = box.querySelector('[data-testid="handoff-msg"]') ?? msg
              shown.textContent = e.message
            }
          },
        },
        input,
        h('button', { type: 'submit', class: 'primary', 'data-testid': 'note-add' }, 'Add note'),
      )
    : null
  // A render while the operator is typing (the queue or the notes changed: a live event) keeps
  // their draft, its caret and the focus: the panel is this conversation's until it is reopened.
  const draft = box.querySelector('[data-testid="note-input"]')
  const typing = draft !== null && document.activeElement === draft
  if (draft) input.value = draft.value
  box.replaceChildren(status, msg, list, form)
  if (typing && form) {
    input.focus()
    input.setSelectionRange(draft.selectionStart, draft.selectionEnd)
  }
}
