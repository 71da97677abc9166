// Events: custom events, revenue, shares, page launches and referrals.
import { getJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { barsList } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { withRange } from '../lib/range.js'
import { state } from '../lib/state.js'

const turn = latest()

async function load() {
  const mine = turn()
  const r = await getJson(`api/reports/events${q(withRange({ bot: state.bot }))}`)
  if (!mine()) return
  const money = (n) => n.toLocaleString(undefined, { maximumFractionDigits: 2 })
  const card = (title, attrs, ...children) => h('div', { class: 'card', ...attrs }, h('h2', {}, title), ...children)
  $('#events').replaceChildren(
    card(
      'Revenue',
      { 'data-testid': 'revenue' },
      h('div', { class: 'kpi', 'data-testid': 'revenue-total' }, money(r.revenue.total)),
      h('div', { class: 'muted' }, `${r.revenue.count} revenue events`),
      barsList(
        r.revenue.byName,
        (x) => x.name,
        (x) => x.total,
      ),
    ),
    card(
      'Shares',
      {},
      h('div', { class: 'kpi' }, r.shares.count),
      barsList(
        r.shares.byName,
        (x) => x.name,
        (x) => x.count,
      ),
    ),
    card(
      'Custom events',
      {},
      barsList(
        r.custom,
        (x) => x.name,
        (x) => x.count,
      ),
    ),
    card(
      'Page launches',
      {},
      barsList(
        r.pageLaunches,
        (x) => x.page,
        (x) => x.count,
      ),
    ),
    card(
      'Referrals by source',
      { 'data-testid': 'referrals' },
      barsList(
        r.referrals,
        (x) => x.source,
        (x) => x.count,
      ),
    ),
  )
}

export default { name: 'events', load, refresh: load }
