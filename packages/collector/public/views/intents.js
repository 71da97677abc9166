// Intents: messages rolled up by intent, with the classifier's average confidence.
import { getJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { barCell, intentTag, table } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { withRange } from '../lib/range.js'
import { state } from '../lib/state.js'

const turn = latest()

async function load() {
  const mine = turn()
  const rows = await getJson(`api/reports/intents${q(withRange({ bot: state.bot }))}`)
  if (!mine()) return
  const max = Math.max(1, ...rows.map((r) => r.count))
  table(
    $('#intents'),
    [['Intent'], ['Count', true], [''], ['In', true], ['Out', true], ['Avg confidence', true]],
    rows.length
      ? rows.map((r) =>
          h(
            'tr',
            { 'data-testid': 'intent-row' },
            h('td', {}, intentTag({ intent: r.intent })),
            h('td', { class: 'num' }, r.count),
            barCell(r.count, max, r.intent === 'NotHandled'),
            h('td', { class: 'num' }, r.incoming),
            h('td', { class: 'num' }, r.outgoing),
            h('td', { class: 'num' }, r.avgConfidence === null ? '—' : `${Math.round(r.avgConfidence * 100)}%`),
          ),
        )
      : [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No intents yet.'))],
  )
}

export default { name: 'intents', load, refresh: load }
