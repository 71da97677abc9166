// The sidebar's numbers: records and messages stored, for the bot the filter shows.
import { getJson, q } from './api.js'
import { $, h } from './dom.js'
import { latest } from './latest.js'
import { withRange } from './range.js'
import { state } from './state.js'

const turn = latest()

export async function loadCounts() {
  const mine = turn()
  const c = await getJson(`api/stats${q(withRange({ bot: state.bot }))}`)
  // Another bot's or range's numbers, answered after the newer ones were asked: not shown.
  if (!mine()) return
  $('#counts').replaceChildren(
    h(
      'div',
      { class: 'counts-scope', 'data-testid': 'counts-scope' },
      state.bot === '' ? 'All bots' : `Bot ${state.bot}`,
    ),
    h(
      'dl',
      {},
      h('dt', { title: 'One POST /track (or one Messenger webhook delivery) is one record' }, 'Records'),
      h('dd', { 'data-testid': 'count-records' }, c.records.toLocaleString()),
      h('dt', { title: 'Incoming, outgoing and events: a record may carry several' }, 'Messages'),
      h('dd', { 'data-testid': 'count-messages' }, c.messages.toLocaleString()),
    ),
  )
}
