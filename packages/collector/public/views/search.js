// Search: messages whose text matches the header's search box (words, "quoted phrases",
// prefix*), newest first; a hit opens its transcript at that message.
import { getJson } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { dateTime, transcriptHref } from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { csvLink, reportQuery } from '../lib/report-links.js'
import { state } from '../lib/state.js'

let query = ''
/** Which load the list belongs to: a page answered after a newer query (or refresh) began is dropped. */
const turn = latest()

function hitItem(hit) {
  return h(
    'li',
    { class: 'hit-item' },
    h(
      'a',
      {
        href: transcriptHref(hit.bot, hit.thread),
        'data-testid': 'search-hit',
        dataset: { id: hit.id },
        onclick: () => {
          state.focusMessage = hit.id
        },
      },
      h('span', { class: 'badge' }, hit.bot),
      ' ',
      h('span', { class: 'muted' }, `${hit.userId} · ${hit.direction} · ${dateTime(hit.ts)}`),
      h('div', {}, hit.text),
    ),
  )
}

async function page(next, mine) {
  const body = await getJson(`api/search${reportQuery({ q: query, next })}`)
  // A newer search (or a refresh of this one) began while this page was asked: it is not shown
  // under the newer title, nor appended to the newer list.
  if (!mine()) return
  const list = $('#search-hits')
  if (!next) list.replaceChildren()
  list.append(...body.hits.map(hitItem))
  $('#search-note').textContent = list.children.length ? '' : `Nothing matches “${query}”.`
  const more = $('#search-more')
  more.replaceChildren(
    body.next
      ? h('button', { type: 'button', 'data-testid': 'search-more', onclick: () => page(body.next, mine) }, 'More')
      : '',
  )
}

/** Opened from the URL: the header's box shows the query searched. */
async function load(params) {
  query = decodeURIComponent(params.join('/'))
  $('#search-input').value = query
  await show()
}

/**
 * The hits of the current query, from their first page. A refresh (live messages arrived) comes
 * here without touching the header's box: someone typing the next query keeps what they typed.
 */
async function show() {
  const mine = turn()
  $('#search-title').textContent = query ? `Search: ${query}` : 'Search'
  if (!query) {
    $('#search-hits').replaceChildren()
    return
  }
  await page(undefined, mine)
  if (!mine()) return
  $('#search-csv').replaceChildren(csvLink('api/search', 'search', { q: query }))
}

$('#search-form').addEventListener('submit', (ev) => {
  ev.preventDefault()
  const q = $('#search-input').value.trim()
  if (q) location.hash = `#/search/${encodeURIComponent(q)}`
})

export default { name: 'search', load, refresh: show }
