// Opening a transcript at one message (a search hit): older pages load until it is there, then
// it is scrolled into view and marked.

import { state } from '../lib/state.js'
import { loadOlder } from './transcript.js'

/** Pages the open transcript back until message `id` is shown (at most 40 pages), then shows it. */
export async function focusMessage(id) {
  const find = () => document.querySelector(`#bubbles [data-id="${Number(id)}"]`)
  for (let i = 0; i < 40 && !find() && state.current?.olderBeforeId != null; i++) await loadOlder()
  const el = find()
  if (!el) return false
  for (const old of document.querySelectorAll('#bubbles .hit')) old.classList.remove('hit')
  el.classList.add('hit')
  el.dataset.hit = 'true'
  el.scrollIntoView({ block: 'center' })
  return true
}
