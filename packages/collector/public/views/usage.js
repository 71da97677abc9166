// LLM usage: tokens (and cost, with the collector's llmPrices) per day and model.
import { getJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { table } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { withRange } from '../lib/range.js'
import { state } from '../lib/state.js'

const n = (x) => x.toLocaleString()
const dollars = (x) => (x == null ? '' : `$${x < 0.01 ? x.toFixed(4) : x.toFixed(2)}`)

const turn = latest()

async function load() {
  const mine = turn()
  const r = await getJson(`api/reports/usage${q(withRange({ bot: state.bot }))}`)
  if (!mine()) return
  table(
    $('#usage'),
    [
      ['Day'],
      ['Model'],
      ['Answers', true],
      ['Conversations', true],
      ['Input tokens', true],
      ['Output tokens', true],
      ['Cost', true],
    ],
    r.days.length
      ? r.days.map((l) =>
          h(
            'tr',
            { 'data-testid': 'usage-line' },
            h('td', {}, l.day),
            h('td', {}, l.model ?? '—'),
            h('td', { class: 'num' }, n(l.messages)),
            h('td', { class: 'num' }, n(l.conversations)),
            h('td', { class: 'num' }, n(l.inputTokens)),
            h('td', { class: 'num' }, n(l.outputTokens)),
            h('td', { class: 'num' }, dollars(l.cost)),
          ),
        )
      : h(
          'tr',
          {},
          h(
            'td',
            { colspan: 7, class: 'muted' },
            'No LLM answers with token counts yet: send OpenTelemetry traces to /v1/traces.',
          ),
        ),
  )
  const t = r.total
  $('#usage-total').textContent =
    `${n(t.inputTokens)} input and ${n(t.outputTokens)} output tokens in ${n(t.messages)} answers` +
    (t.cost == null ? '' : ` · ${dollars(t.cost)}`)
}

export default { name: 'usage', load, refresh: load }
