// Overview, the dashboard's home: how many people use the bot, how often it coped without a
// human, what they thought of it, with a sparkline per day.
import { getReport } from '../lib/api.js'
import { $, h, s } from '../lib/dom.js'
import { latest } from '../lib/latest.js'
import { countingNote, csvLink, reportQuery } from '../lib/report-links.js'

const pct = (x) => `${Math.round(x * 1000) / 10}%`

/** A small line of the values per day (no axes: the trend, not the numbers). */
function sparkline(days, field) {
  const values = days.map((d) => d[field])
  const w = 160
  const hgt = 32
  const max = Math.max(1, ...values)
  const step = values.length > 1 ? w / (values.length - 1) : 0
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(hgt - 2 - (v / max) * (hgt - 4)).toFixed(1)}`)
  const svg = s('svg', { viewBox: `0 0 ${w} ${hgt}`, class: 'spark', 'data-testid': `spark-${field}` })
  svg.dataset.values = values.join(',')
  if (points.length === 1) svg.append(s('circle', { cx: 0, cy: points[0].split(',')[1], r: 2 }))
  else svg.append(s('polyline', { points: points.join(' '), fill: 'none', 'stroke-width': 2 }))
  return svg
}

function tile(label, field, value, spark) {
  return h(
    'div',
    { class: 'card kpi' },
    h('div', { class: 'muted' }, label),
    h('div', { class: 'kpi-value', 'data-testid': `ov-${field}` }, value),
    spark ?? null,
  )
}

/** The pending re-ask while the overview is counted (a new load replaces it). */
let retry
const turn = latest()

async function load() {
  clearTimeout(retry)
  const mine = turn()
  // Counted off the request path over a large audience: 202 the first time, later an earlier answer while it is counted again.
  const { body: o, retryS } = await getReport(`api/reports/overview${reportQuery()}`)
  // Another range's (or an earlier refresh's) answer: neither drawn nor asked again.
  if (!mine()) return
  if (o.preparing || o.refreshing) retry = setTimeout(() => load().catch(() => {}), retryS * 1000)
  const note = countingNote(
    o,
    'overview',
    'Counting the overview of this range: its users are counted over every day of it, which takes a while over a large audience. The figures fill in when they are done.',
  )
  if (o.preparing) return $('#overview').replaceChildren(note)
  const days = o.days
  $('#overview').replaceChildren(
    note,
    h(
      'div',
      { class: 'kpis' },
      tile('Users', 'users', o.users),
      tile('New users', 'newUsers', o.newUsers),
      tile('Returning users', 'returningUsers', o.returningUsers),
      tile('Sessions', 'sessions', o.sessions, sparkline(days, 'sessions')),
      tile('New conversations', 'conversations', o.conversations),
      tile('Messages', 'messages', o.messages, sparkline(days, 'messages')),
      tile('Incoming', 'incoming', o.incoming, sparkline(days, 'incoming')),
      tile('Outgoing', 'outgoing', o.outgoing, sparkline(days, 'outgoing')),
      tile('NotHandled', 'notHandled', o.notHandled, sparkline(days, 'notHandled')),
      tile('NotHandled rate', 'notHandledRate', pct(o.notHandledRate)),
      tile('Handoffs', 'handoffs', o.handoffs),
      tile('Containment', 'containmentRate', pct(o.containmentRate)),
      tile(
        'Feedback',
        'feedback',
        o.feedback.count === 0 ? '—' : `${o.feedback.count} · avg ${o.feedback.average.toFixed(2)}`,
        sparkline(days, 'feedback'),
      ),
    ),
    csvLink('api/reports/overview', 'overview'),
  )
}

export default { name: 'overview', load, refresh: load }
