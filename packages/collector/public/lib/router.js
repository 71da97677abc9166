// Hash routing (#/<view>/<params…>) over the view registry (views/index.js).
import { VIEWS } from '../views/index.js'
import { debounce } from './dom.js'
import { state } from './state.js'

const byName = new Map(VIEWS.map((v) => [v.name, v]))

// The home is the overview.
const current = () => byName.get(state.view) ?? byName.get('overview')

/** Shows the view the hash names and loads it once. */
export function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/')
  const view = byName.has(parts[0]) ? parts[0] : 'overview'
  state.view = view
  for (const el of document.querySelectorAll('.view')) el.classList.toggle('on', el.id === `view-${view}`)
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('on', a.dataset.view === view)
  return report(current().load(parts.slice(1)))
}

/** Reloads what the current view shows (new records arrived, the bot filter changed). */
export function refreshView() {
  const v = current()
  return report((v.refresh ?? v.load)([]))
}

/** Live records arrive in bursts: one refresh per burst. */
export const scheduleRefresh = debounce((also) => {
  refreshView()
  // Reported, not thrown: a refresh may meet a 503 while the collector's database restarts.
  report(also?.())
}, 600)

/** The window was resized: views that draw to its width redraw, once it settles. */
export const resized = debounce(() => report(current().onResize?.()), 200)

function report(p) {
  return Promise.resolve(p).catch((e) => console.error(`dashboard view "${state.view}": ${e.message}`))
}
