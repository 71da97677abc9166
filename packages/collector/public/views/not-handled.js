// NotHandled: what users said that the bot did not understand, grouped and counted.
import { getJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { barCell, dateTime, table } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { withRange } from '../lib/range.js'
import { state } from '../lib/state.js'

const turn = latest()

async function load() {
  const mine = turn()
  const rows = await getJson(`api/reports/not-handled${q(withRange({ bot: state.bot }))}`)
  if (!mine()) return
  const max = Math.max(1, ...rows.map((r) => r.count))
  table(
    $('#not-handled'),
    [['Input'], ['Count', true], [''], ['Users', true], ['Last seen'], ['Bots']],
    rows.length
      ? rows.map((r) =>
          h(
            'tr',
            { 'data-testid': 'not-handled-row' },
            h('td', { 'data-testid': 'not-handled-text' }, r.text || '(empty)'),
            h('td', { class: 'num', 'data-testid': 'not-handled-count' }, r.count),
            barCell(r.count, max, true),
            h('td', { class: 'num' }, r.users),
            h('td', { class: 'muted' }, dateTime(r.lastTs)),
            h('td', {}, r.bots.join(', ')),
          ),
        )
      : [
          h(
            'tr',
            {},
            h('td', { colspan: 6, class: 'empty' }, 'Nothing marked NotHandled yet — your bot understood everything.'),
          ),
        ],
  )
}

export default { name: 'not-handled', load, refresh: load }
