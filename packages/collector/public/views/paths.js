// Paths: how sessions begin — the most common sequences of the first incoming intents, drawn as
// a flow (each step a column; a band per path, as wide as its sessions).
import { getJson } from '../lib/api.js'
import { $, h, s } from '../lib/dom.js'
import { latest } from '../lib/latest.js'
import { csvLink, reportQuery } from '../lib/report-links.js'

let depth = 4

function flow(paths) {
  const total = paths.reduce((n, p) => n + p.sessions, 0) || 1
  const steps = Math.max(1, ...paths.map((p) => p.intents.length))
  const colW = 180
  const height = Math.max(120, paths.length * 28)
  const svg = s('svg', { viewBox: `0 0 ${steps * colW} ${height}`, class: 'flow', 'data-testid': 'paths-flow' })
  let y = 0
  for (const p of paths) {
    const band = Math.max(14, (p.sessions / total) * (height - 4))
    p.intents.forEach((intent, i) => {
      const x = i * colW
      svg.append(s('rect', { x, y, width: colW - 30, height: band - 4, rx: 4, class: 'flow-node' }))
      svg.append(s('text', { x: x + 6, y: y + Math.min(band - 8, 16), class: 'flow-label' }, intent))
      if (i > 0) svg.append(s('line', { x1: x - 30, y1: y + band / 2, x2: x, y2: y + band / 2, class: 'flow-link' }))
    })
    y += band
  }
  svg.setAttribute('viewBox', `0 0 ${steps * colW} ${Math.max(y, 40)}`)
  return svg
}

const turn = latest()

async function load() {
  const mine = turn()
  const { paths } = await getJson(`api/reports/paths${reportQuery({ depth })}`)
  if (!mine()) return
  const max = Math.max(1, ...paths.map((p) => p.sessions))
  $('#paths').replaceChildren(
    paths.length ? flow(paths) : h('p', { class: 'empty' }, 'No sessions with intents in this range.'),
    h(
      'table',
      { class: 'report' },
      h('tr', {}, h('th', {}, 'Path'), h('th', { class: 'num' }, 'Sessions'), h('th', {}, '')),
      ...paths.map((p) =>
        h(
          'tr',
          { 'data-testid': 'path-row' },
          h('td', { 'data-testid': 'path-intents' }, p.intents.join(' → ')),
          h('td', { class: 'num' }, p.sessions),
          h('td', {}, h('div', { class: 'bar', style: `width:${Math.round((p.sessions / max) * 100)}%` })),
        ),
      ),
    ),
    csvLink('api/reports/paths', 'paths', { depth }),
  )
}

for (const b of document.querySelectorAll('[data-depth]'))
  b.addEventListener('click', () => {
    depth = Number(b.dataset.depth)
    for (const x of document.querySelectorAll('[data-depth]')) x.classList.toggle('on', x === b)
    load()
  })

export default { name: 'paths', load, refresh: load }
