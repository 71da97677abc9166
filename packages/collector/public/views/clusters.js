// NotHandled clusters: unhandled inputs that say the same thing in other words or spellings,
// grouped (the method is in the collector README), largest first.
import { getJson } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { table } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { csvLink, reportQuery } from '../lib/report-links.js'

const turn = latest()

async function load() {
  const mine = turn()
  const { clusters } = await getJson(`api/reports/not-handled/clusters${reportQuery()}`)
  if (!mine()) return
  table(
    $('#clusters'),
    [['Cluster'], ['Messages', true], ['Users', true], ['Examples']],
    clusters.length
      ? clusters.map((c) =>
          h(
            'tr',
            { 'data-testid': 'cluster-row' },
            h('td', { 'data-testid': 'cluster-label' }, c.label),
            h('td', { class: 'num' }, c.count),
            h('td', { class: 'num' }, c.users),
            h('td', {}, h('ul', { class: 'examples' }, ...c.examples.map((e) => h('li', {}, e)))),
          ),
        )
      : [h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'Nothing unhandled in this range.'))],
  )
  $('#clusters-csv').replaceChildren(csvLink('api/reports/not-handled/clusters', 'not-handled-clusters'))
}

export default { name: 'clusters', load, refresh: load }
