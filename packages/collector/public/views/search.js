// Search: messages whose text matches the header's search box (words, "quoted phrases",
// prefix*), newest first; a hit opens its transcript at that message.
import { getJson } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { dateTime, transcriptHref } from '../lib/format.js'
import { csvLink, reportQuery } from '../lib/report-links.js'
import { state } from '../lib/state.js'

let query = ''

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

async function page(next) {
  const body = await getJson(`api/search${reportQuery({ q: query, next })}`)
  const list = $('#search-hits')
  if (!next) list.replaceChildren()
  list.append(...body.hits.map(hitItem))
  $('#search-note').textContent = list.children.length ? '' : `Nothing matches “${query}”.`
  const more = $('#search-more')
  more.replaceChildren(
    body.next
      ? h('button', { type: 'button', 'data-testid': 'search-more', onclick: () => page(body.next) }, 'More')
      : '',
  )
}

async function load(params) {
  query = decodeURIComponent(params.join('/'))
  $('#search-input').value = query
  $('#search-title').textContent = query ? `Search: ${query}` : 'Search'
  if (!query) {
    $('#search-hits').replaceChildren()
    return
  }
  await page()
  $('#search-csv').replaceChildren(csvLink('api/search', 'search', { q: query }))
}

$('#search-form').addEventListener('submit', (ev) => {
  ev.preventDefault()
  const q = $('#search-input').value.trim()
  if (q) location.hash = `#/search/${encodeURIComponent(q)}`
})

export default { name: 'search', load, refresh: () => load([encodeURIComponent(query)]) }
