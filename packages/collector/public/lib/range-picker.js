// The sidebar's range picker: presets and a custom from–to pair of days. Picking writes the
// range into the hash query (lib/range.js); the router reads it back, so a reload, a shared
// link and the back button all show the same range.
import { $, h } from './dom.js'
import { DEFAULT_RANGE, describeRange, formatDay, PRESETS, parseDay, rangeQuery } from './range.js'
import { state } from './state.js'

/** Navigates to the current view with `range` (the router then reloads what shows). */
function go(range) {
  const path = location.hash.replace(/^#\/?/, '').split('?')[0] || 'live'
  location.hash = `#/${path}?${rangeQuery(range) || `range=${DEFAULT_RANGE}`}`
}

/** Builds the picker into #range-picker. */
export function mountRangePicker() {
  const select = h(
    'select',
    { id: 'range-select', 'data-testid': 'range-select', 'aria-label': 'Date range' },
    PRESETS.map((p) => h('option', { value: p.key }, p.label)),
    h('option', { value: 'custom' }, 'Custom…'),
  )
  const from = h('input', { type: 'date', 'data-testid': 'range-from', 'aria-label': 'From (first day)' })
  const to = h('input', { type: 'date', 'data-testid': 'range-to', 'aria-label': 'To (last day, included)' })
  const msg = h('p', { class: 'form-msg', role: 'status', 'data-testid': 'range-msg' })
  const custom = h(
    'form',
    {
      class: 'range-custom',
      'data-testid': 'range-custom',
      onsubmit: (ev) => {
        ev.preventDefault()
        if (parseDay(from.value) === null || parseDay(to.value) === null) msg.textContent = 'Pick both days.'
        else if (from.value > to.value) msg.textContent = 'The first day is after the last.'
        else {
          msg.textContent = ''
          go({ key: 'custom', from: from.value, to: to.value })
        }
      },
    },
    from,
    to,
    h('button', { type: 'submit', 'data-testid': 'range-apply' }, 'Apply'),
    msg,
  )
  select.addEventListener('change', () => {
    if (select.value !== 'custom') return go({ key: select.value })
    // Custom starts from the days the current range covers.
    const today = formatDay(Date.now())
    from.value ||= state.range.key === 'custom' ? state.range.from : today
    to.value ||= state.range.key === 'custom' ? state.range.to : today
    custom.hidden = false
  })
  $('#range-picker').replaceChildren(
    h('label', { for: 'range-select' }, 'Range'),
    select,
    custom,
    h('div', { class: 'muted', 'data-testid': 'range-label' }),
  )
  showRange()
}

/** Shows the current range in the picker (after the hash changed it). */
export function showRange() {
  const r = state.range
  $('#range-select').value = r.key
  const custom = $('[data-testid=range-custom]')
  custom.hidden = r.key !== 'custom'
  if (r.key === 'custom') {
    custom.querySelector('[data-testid=range-from]').value = r.from
    custom.querySelector('[data-testid=range-to]').value = r.to
  }
  $('[data-testid=range-label]').textContent = r.key === 'custom' ? describeRange(r) : ''
}
