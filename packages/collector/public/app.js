// convotrack collector dashboard: plain DOM and native ES modules, no build step.
//   lib/    shared helpers (DOM, API, state, router, counts, live stream)
//   views/  one module per view, listed in views/index.js
import { loadBots } from './lib/bot-filter.js'
import { loadCounts } from './lib/counts.js'
import { $ } from './lib/dom.js'
import { readRange } from './lib/range.js'
import { mountRangePicker, showRange } from './lib/range-picker.js'
import { refreshView, resized, route } from './lib/router.js'
import { state } from './lib/state.js'
import { connectStream } from './lib/stream.js'
import connect, { wireConnectForm } from './views/connect.js'
import live, { loadFirehose } from './views/live.js'

$('#bot-filter').addEventListener('change', (ev) => {
  state.bot = ev.target.value
  // Another bot's transcript does not stay open under a filter that hides it.
  if (
    state.current &&
    state.bot !== '' &&
    state.current.bot !== state.bot &&
    location.hash.startsWith('#/conversations/')
  )
    location.hash = '#/conversations'
  loadFirehose()
  loadCounts()
  refreshView()
})

for (const b of document.querySelectorAll('[data-bucket]')) {
  b.addEventListener('click', () => {
    state.bucket = b.dataset.bucket
    for (const x of document.querySelectorAll('[data-bucket]')) x.classList.toggle('on', x === b)
    live.refresh()
  })
}

// The sidebar's numbers and the firehose follow the range too (the view reloads through route()).
document.addEventListener('rangechange', () => {
  showRange()
  loadFirehose()
  loadCounts()
})

wireConnectForm(loadBots)
window.addEventListener('hashchange', route)
window.addEventListener('resize', resized)

state.range = readRange(location.hash.split('?')[1] ?? '')
mountRangePicker()
await loadBots()
await Promise.all([loadFirehose(), loadCounts()])
connectStream({ onRecords: loadCounts, onBots: loadBots, onPages: connect.load })
route()
