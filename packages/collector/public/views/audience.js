// Audience: users by the fields of their metadata, latest value per user.
import { getJson, q } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { barsList } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { withRange } from '../lib/range.js'
import { state } from '../lib/state.js'

const turn = latest()

async function load() {
  const mine = turn()
  const segments = await getJson(`api/reports/segments${q(withRange({ bot: state.bot }))}`)
  if (!mine()) return
  const box = $('#segments')
  if (!segments.length) {
    box.replaceChildren(
      h(
        'div',
        { class: 'card' },
        h('p', { class: 'empty' }, 'No user metadata yet: send platformUserJson with your records.'),
      ),
    )
    return
  }
  box.replaceChildren(
    ...segments.map((seg) =>
      h(
        'div',
        { class: 'card', 'data-testid': 'segment' },
        h('h2', {}, seg.field),
        barsList(
          seg.values,
          (v) => v.value,
          (v) => v.users,
        ),
      ),
    ),
  )
}

export default { name: 'audience', load, refresh: load }
