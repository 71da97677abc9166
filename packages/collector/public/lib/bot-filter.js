// The sidebar's bot filter. A bot that is configured but has sent nothing yet (the built-in
// `demo` bot, a bot whose key is not in use yet) stays listed, after the others, labelled so:
// knowing it exists is useful, mistaking it for a bot with traffic is not.
import { getJson } from './api.js'
import { $, h } from './dom.js'
import { state } from './state.js'

export const NO_RECORDS_YET = 'no records yet'

function render() {
  const select = $('#bot-filter')
  const current = select.value
  const idle = state.bots.filter((b) => b.records === 0)
  const active = state.bots.filter((b) => b.records !== 0)
  select.replaceChildren(
    h('option', { value: '' }, 'All bots'),
    ...active.map((b) => h('option', { value: b.name }, b.name)),
    ...idle.map((b) =>
      h(
        'option',
        { value: b.name, class: 'no-records', title: `Configured, but no record from ${b.name}'s key has arrived` },
        `${b.name} (${NO_RECORDS_YET})`,
      ),
    ),
  )
  select.value = state.bots.some((b) => b.name === current) ? current : ''
}

/** Loads the bots (with their record counts) and redraws the filter, keeping the selection. */
export async function loadBots() {
  state.bots = await getJson('api/bots')
  render()
}

/** A live message from `bot` arrived: a bot listed as having no records loses that label. */
export function sawRecordFrom(bot) {
  const b = state.bots.find((x) => x.name === bot)
  if (b?.records !== 0) return
  b.records = 1
  render()
}
