// Retention: users first seen in each day / week / month of the range, and how many of them
// were active 0, 1, 2… periods later.
import { getReport } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { latest } from '../lib/latest.js'
import { timeZone } from '../lib/range.js'
import { csvLink, reportQuery } from '../lib/report-links.js'

let period = 'week'
/** The pending re-ask while the zone's cohorts are prepared (a new load replaces it). */
let retry

/** The report; 202 while a zone kept on demand is prepared (`Retry-After` says when to ask again). */
const fetchReport = () => getReport(`api/reports/retention${reportQuery({ period })}`)

/** Shown instead of the table while the zone's cohorts are derived from the stored history. */
function preparing(r, retryS) {
  const pct = Math.floor((r.progress ?? 0) * 100)
  $('#retention').replaceChildren(
    h(
      'tbody',
      {},
      h(
        'tr',
        {},
        h(
          'td',
          { class: 'empty', 'data-testid': 'retention-preparing' },
          `Preparing the cohorts for ${r.tz ?? timeZone()} (${pct} %): the first time a time zone is asked for, `,
          'its history is counted in the background. This table fills in when it is done.',
        ),
      ),
    ),
  )
  // Reported like a refresh's: a failed re-ask waits for the next load.
  retry = setTimeout(() => load().catch(() => {}), retryS * 1000)
}

const label = (t) =>
  new Date(t).toLocaleDateString([], {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    ...(period === 'month' ? { day: undefined } : {}),
  })

const turn = latest()

async function load() {
  clearTimeout(retry)
  const mine = turn()
  const { body: r, retryS } = await fetchReport()
  if (!mine()) return
  $('#retention-csv').replaceChildren(csvLink('api/reports/retention', 'retention', { period }))
  if (r.preparing) return preparing(r, retryS)
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
}

for (const b of document.querySelectorAll('[data-period]'))
  b.addEventListener('click', () => {
    period = b.dataset.period
    for (const x of document.querySelectorAll('[data-period]')) x.classList.toggle('on', x === b)
    load()
  })

export default { name: 'retention', load, refresh: load }
