// The live feed (server-sent events): messages, pause changes, operator sends, new pages.
import conversations from '../views/conversations.js'
import { renderHandoffPanel } from '../views/handoff-panel.js'
import handoffs from '../views/handoffs.js'
import { addToFirehose } from '../views/live.js'
import { appendLive, claimOperatorSend, operatorSent, renderTakeover } from '../views/transcript.js'
import { sawRecordFrom } from './bot-filter.js'
import { $ } from './dom.js'
import { scheduleRefresh } from './router.js'
import { state } from './state.js'

/** Opens the stream; `onRecords` runs (debounced) after each burst of messages, `onBots` when bots change. */
export function connectStream({ onRecords, onBots, onPages }) {
  const live = $('#live-state')
  const es = new EventSource('api/stream')
  es.addEventListener('open', () => {
    live.className = 'live-state on'
    live.querySelector('.label').textContent = 'live'
  })
  es.addEventListener('error', () => {
    live.className = 'live-state off'
    live.querySelector('.label').textContent = 'reconnecting…'
  })
  es.addEventListener('message', (ev) => {
    const m = claimOperatorSend(JSON.parse(ev.data))
    state.lastLiveId = Math.max(state.lastLiveId, Number(m.id) || 0)
    addToFirehose(m, true)
    sawRecordFrom(m.bot)
    const c = state.current
    if (c && c.bot === m.bot && c.thread === m.thread && state.view === 'conversations') appendLive(m)
    scheduleRefresh(onRecords)
  })
  es.addEventListener('operator', (ev) => operatorSent(JSON.parse(ev.data)))
  es.addEventListener('pause', (ev) => {
    const p = JSON.parse(ev.data)
    const c = state.current
    if (c && c.bot === p.bot && c.thread === p.thread && !c.busy) {
      c.paused = p.paused
      renderTakeover()
    }
    if (state.view === 'conversations') conversations.refresh()
  })
  // The handoff queue changed (any collector sharing the database), or a note was added.
  const handoffChanged = (ev) => {
    const d = JSON.parse(ev.data)
    const c = state.current
    if (c && c.bot === d.bot && c.thread === d.thread && state.view === 'conversations')
      renderHandoffPanel().catch(() => {})
    if (state.view === 'handoffs') handoffs.refresh().catch(() => {})
  }
  es.addEventListener('handoff', handoffChanged)
  es.addEventListener('note', handoffChanged)
  es.addEventListener('messenger', () => {
    onBots()
    if (state.view === 'connect') onPages()
  })
  return es
}
