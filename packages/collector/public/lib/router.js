// Hash routing (#/<view>/<params…>?<range>) over the view registry (views/index.js).
import { VIEWS } from '../views/index.js'
import { debounce } from './dom.js'
import { DEFAULT_RANGE, rangeQuery, readRange, sameRange } from './range.js'
import { state } from './state.js'

const byName = new Map(VIEWS.map((v) => [v.name, v]))

// The home is the overview.
const current = () => byName.get(state.view) ?? byName.get('overview')

/**
 * Reads the range from the hash query. A link without one (the nav, a transcript link) keeps the
 * current range, which is written back into the URL so it stays shareable. A new range fires
 * `rangechange` on document (the sidebar's numbers and the firehose reload on it).
 */
function syncRange(path, query) {
  const range = query ? readRange(query) : state.range
  if (!query && range.key !== DEFAULT_RANGE) history.replaceState(null, '', `#/${path}?${rangeQuery(range)}`)
  if (sameRange(range, state.range)) return
  state.range = range
  document.dispatchEvent(new CustomEvent('rangechange'))
}

/** Routes whose load has not ended (`<body data-routing>`). */
let routing = 0

/**
 * Loads and refreshes of views that have not ended, numbered in the order they began. A view
 * draws only its latest call's answer (lib/latest.js), so a call may end undrawn because a later
 * one of the same view will draw: the marks below wait for those (`settled`), not for earlier
 * calls nor other views'.
 */
const inflight = new Map()
let began = 0
function track(view, call) {
  const n = ++began
  const p = report(call)
  inflight.set(p, { view, n })
  p.finally(() => inflight.delete(p))
  return p.then(() => settled(view, n))
}
async function settled(view, n) {
  for (;;) {
    const later = [...inflight].filter(([, c]) => c.view === view && c.n > n).map(([p]) => p)
    if (later.length === 0) return
    await Promise.all(later)
  }
}

/**
 * Shows the view the hash names and loads it once. Once the load has drawn, `<body
 * data-loaded>` is the hash it loaded (range written back) — unless the hash changed meanwhile:
 * a later route marks its own load, and an earlier one ending after it does not mark over it.
 * `<body data-routing>` is how many loads have not ended (0: every route has settled). Tests wait
 * on them before checking that something is absent, so the check sees this load's page, not the
 * one before it.
 */
export function route() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?')
  syncRange(path, query)
  const hash = location.hash
  const parts = path.split('/')
  const view = byName.has(parts[0]) ? parts[0] : 'overview'
  state.view = view
  for (const el of document.querySelectorAll('.view')) el.classList.toggle('on', el.id === `view-${view}`)
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('on', a.dataset.view === view)
  document.body.dataset.routing = String(++routing)
  return track(view, current().load(parts.slice(1))).then(() => {
    if (location.hash === hash) document.body.dataset.loaded = hash
    document.body.dataset.routing = String(--routing)
  })
}

/** Reloads what the current view shows (new records arrived, the bot filter changed). */
export function refreshView() {
  const v = current()
  return track(v.name, (v.refresh ?? v.load)([]))
}

/**
 * Live records arrive in bursts: one refresh per burst. Once it has finished, `<body
 * data-refreshed-through>` is the id of the newest live message it covered: tests (and scripts)
 * wait on it to know the page has caught up, instead of sleeping past the debounce.
 */
export const scheduleRefresh = debounce((also) => {
  const through = state.lastLiveId
  // Reported, not thrown: a refresh may meet a 503 while the collector's database restarts.
  Promise.all([refreshView(), report(also?.())]).then(() => {
    document.body.dataset.refreshedThrough = String(
      Math.max(through, Number(document.body.dataset.refreshedThrough ?? 0)),
    )
  })
}, 600)

/** The window was resized: views that draw to its width redraw, once it settles. */
export const resized = debounce(() => report(current().onResize?.()), 200)

function report(p) {
  return Promise.resolve(p).catch((e) => console.error(`dashboard view "${state.view}": ${e.message}`))
}
