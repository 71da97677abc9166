// Funnel: build a sequence of steps from the intents and event names the bot has seen; the
// answer is how many users did each step after the one before.
import { getJson, getReport } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { latest } from '../lib/latest.js'
import { countingNote, csvLink, reportQuery } from '../lib/report-links.js'

/** The steps being built: 'intent:NAME' / 'event:NAME'. */
const steps = []

async function choices() {
  const [intents, events] = await Promise.all([
    getJson(`api/reports/intents${reportQuery()}`),
    getJson(`api/reports/events${reportQuery()}`),
  ])
  const names = new Set([
    ...events.custom.map((e) => e.name),
    ...events.revenue.byName.map((e) => e.name),
    ...events.shares.byName.map((e) => e.name),
  ])
  return [
    ...intents.filter((i) => i.incoming > 0).map((i) => `intent:${i.intent}`),
    ...[...names].sort().map((n) => `event:${n}`),
  ]
}

function renderSteps() {
  $('#funnel-steps').replaceChildren(
    ...steps.map((s, i) =>
      h(
        'li',
        { 'data-testid': 'funnel-step' },
        `${s} `,
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => {
              steps.splice(i, 1)
              renderSteps()
            },
          },
          'remove',
        ),
      ),
    ),
  )
}

/** The pending re-ask while the funnel is counted (a new run replaces it). */
let retry
/** The latest run: an earlier one answered after it (other steps, a slower count) is not shown. */
const runTurn = latest()
/** The latest load: the step choices of another range, answered late, are not shown. */
const loadTurn = latest()
/** Runs whose answer came back, shown or not (`data-answered` on the result: tests wait on it). */
let answered = 0

/**
 * The report. A funnel over a large audience is counted off the request path: 202 the first
 * time (`Retry-After` says when to ask again), later the previous answer while a newer one is
 * counted (`refreshing`, `asOf`).
 */
const fetchReport = () => getReport(`api/reports/funnel${reportQuery({ steps: steps.join(',') })}`)

/** Asks again in `seconds` (a failed re-ask waits for the next run). */
function askAgain(seconds) {
  retry = setTimeout(() => run().catch(() => {}), seconds * 1000)
}

async function run() {
  clearTimeout(retry)
  const mine = runTurn()
  if (steps.length === 0) return
  const { body, retryS } = await fetchReport().finally(() => {
    $('#funnel-result').dataset.answered = String(++answered)
  })
  if (!mine()) return
  const note = countingNote(
    body,
    'funnel',
    'Counting this funnel: it follows every user of its first step, which takes a while over a large audience. The table fills in when it is done.',
  )
  if (body.preparing || body.refreshing) askAgain(retryS)
  if (body.preparing) return $('#funnel-result').replaceChildren(note)
  const lines = body.steps
  const top = Math.max(1, lines[0]?.users ?? 0)
  $('#funnel-result').replaceChildren(
    note,
    h(
      'table',
      { class: 'report' },
      h(
        'tr',
        {},
        h('th', {}, 'Step'),
        h('th', { class: 'num' }, 'Users'),
        h('th', { class: 'num' }, 'Of step 1'),
        h('th', {}, ''),
      ),
      ...lines.map((l) =>
        h(
          'tr',
          { 'data-testid': 'funnel-row' },
          h('td', {}, l.step),
          h('td', { class: 'num', 'data-testid': 'funnel-users' }, l.users),
          h('td', { class: 'num' }, `${Math.round((l.users / top) * 100)}%`),
          h('td', {}, h('div', { class: 'bar', style: `width:${Math.round((l.users / top) * 100)}%` })),
        ),
      ),
    ),
    csvLink('api/reports/funnel', 'funnel', { steps: steps.join(',') }),
  )
}

async function load() {
  const select = $('#funnel-choice')
  const mine = loadTurn()
  const options = await choices()
  if (!mine()) return
  // A refresh (live messages) keeps the step being picked.
  const picked = select.value
  select.replaceChildren(...options.map((c) => h('option', { value: c }, c)))
  if (options.includes(picked)) select.value = picked
  renderSteps()
  await run()
}

$('#funnel-add').addEventListener('click', () => {
  const v = $('#funnel-choice').value
  if (v && steps.length < 8) steps.push(v)
  renderSteps()
})
$('#funnel-run').addEventListener('click', () => run())

export default { name: 'funnel', load, refresh: load }
