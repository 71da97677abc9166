// Shared by the Handoffs view and the transcript's handoff panel.
import { getJson } from '../lib/api.js'
import { h } from '../lib/dom.js'

export const REASONS = {
  asked: 'asked for a person',
  'not-handled': 'bot did not understand',
  feedback: 'negative feedback',
}

let who
/** The signed-in person (`local`, admin, when the collector has no sign-in). Asked once. */
export function me() {
  who ??= getJson('api/me').catch(() => ({ name: 'local', role: 'admin' }))
  return who
}

/** Operators and admins claim, release and write notes; viewers only read. */
export const canAct = (person) => person.role === 'operator' || person.role === 'admin'

/** How long ago `ts` was, e.g. `4m 05s`. */
export function ago(ts) {
  const s = Math.max(0, Math.floor((Date.now() - ts) / 1000))
  const m = Math.floor(s / 60)
  const hours = Math.floor(m / 60)
  if (hours > 0) return `${hours}h ${String(m % 60).padStart(2, '0')}m`
  return m > 0 ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`
}

/** A waiting time that counts up by itself (see `tick`). */
export const since = (ts) => h('span', { class: 'since', 'data-since': ts, 'data-testid': 'waiting-time' }, ago(ts))

// One timer for every waiting time on the page.
setInterval(() => {
  for (const el of document.querySelectorAll('[data-since]')) el.textContent = ago(Number(el.dataset.since))
}, 1000)
