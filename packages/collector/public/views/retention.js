// Retention: users first seen in each day / week / month of the range, and how many of them
// were active 0, 1, 2… periods later.
import { getJson } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { csvLink, reportQuery } from '../lib/report-links.js'

let period = 'week'

const label = (t) =>
  new Date(t).toLocaleDateString([], {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    ...(period === 'month' ? { day: undefined } : {}),
  })

async function load() {
  const r = await getJson(`api/reports/retention${reportQuery({ period })}`)
  const width = Math.max(1, ...r.cohorts.map((c) => c.active.length))
  const head = h(
    'tr',
    {},
    h('th', {}, 'Cohort'),
    h('th', { class: 'num' }, 'Users'),
    ...Array.from({ length: width }, (_, k) => h('th', { class: 'num' }, `${period} ${k}`)),
  )
  const rows = r.cohorts.map((c) =>
    h(
      'tr',
      { 'data-testid': 'cohort-row' },
      h('td', {}, label(c.start)),
      h('td', { class: 'num', 'data-testid': 'cohort-users' }, c.users),
      ...Array.from({ length: width }, (_, k) => {
        const n = c.active[k]
        if (n === undefined) return h('td', {})
        const share = c.users ? n / c.users : 0
        return h(
          'td',
          {
            class: 'num cohort-cell',
            style: `--share:${share.toFixed(3)}`,
            title: `${Math.round(share * 100)}%`,
            'data-testid': 'cohort-active',
          },
          n,
        )
      }),
    ),
  )
  $('#retention').replaceChildren(
    h('thead', {}, head),
    h(
      'tbody',
      {},
      rows.length
        ? rows
        : [h('tr', {}, h('td', { colspan: width + 2, class: 'empty' }, 'No new users in this range.'))],
    ),
  )
  $('#retention-csv').replaceChildren(csvLink('api/reports/retention', 'retention', { period }))
}

for (const b of document.querySelectorAll('[data-period]'))
  b.addEventListener('click', () => {
    period = b.dataset.period
    for (const x of document.querySelectorAll('[data-period]')) x.classList.toggle('on', x === b)
    load()
  })

export default { name: 'retention', load, refresh: load }
