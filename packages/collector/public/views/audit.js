// Audit log: who paused, resumed, messaged, connected or erased what (newest first).
import { getJson } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { dateTime, table } from '../lib/format.js'
import { latest } from '../lib/latest.js'

const detailText = (detail) =>
  detail
    ? Object.entries(detail)
        .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : v}`)
        .join(', ')
    : ''

const turn = latest()

async function load() {
  const mine = turn()
  const rows = await getJson('api/audit?limit=200')
  if (!mine()) return
  table(
    $('#audit-log'),
    [['When'], ['Who'], ['Action'], ['Bot'], ['Conversation / user / page'], ['Details']],
    rows.length
      ? rows.map((r) =>
          h(
            'tr',
            { 'data-testid': 'audit-row' },
            h('td', { class: 'muted' }, dateTime(r.ts)),
            h('td', {}, r.actor),
            h('td', {}, r.action),
            h('td', {}, r.bot ?? ''),
            h('td', {}, r.target ?? ''),
            h('td', {}, detailText(r.detail)),
          ),
        )
      : [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'Nothing yet.'))],
  )
}

export default { name: 'audit', load, refresh: load }
