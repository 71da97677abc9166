// Team features of the dashboard, kept apart from the views: who is signed in and sign-out,
// the audit log view, and dropping erased or expired users' lines from the live views.

const $ = (sel) => document.querySelector(sel)
const el = (tag, attrs = {}, text) => {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  if (text !== undefined) e.textContent = text
  return e
}

// Nav link and view for the audit log (app.js shows `view-<hash>` for any `#/<hash>`).
const nav = $('nav')
if (nav) nav.append(el('a', { href: '#/audit', 'data-view': 'audit' }, 'Audit log'))
const view = el('section', { id: 'view-audit', class: 'view', 'data-testid': 'view-audit' })
const head = el('header', { class: 'view-head' })
head.append(el('h1', {}, 'Audit log'), el('p', {}, 'Who paused, resumed, messaged, connected or erased what.'))
const card = el('div', { class: 'card' })
const table = el('table', { class: 'report', 'data-testid': 'audit-log' })
card.append(table)
view.append(head, card)
$('main')?.append(view)

const time = (ts) => new Date(ts).toLocaleString()
async function loadAudit() {
  const res = await fetch('api/audit?limit=200')
  if (!res.ok) return
  const rows = await res.json()
  table.replaceChildren()
  const tr = el('tr')
  for (const h of ['When', 'Who', 'Action', 'Bot', 'Conversation / user / page', 'Details']) tr.append(el('th', {}, h))
  table.append(tr)
  for (const r of rows) {
    const line = el('tr', { 'data-testid': 'audit-row' })
    const detail = r.detail
      ? Object.entries(r.detail)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')
      : ''
    for (const v of [time(r.ts), r.actor, r.action, r.bot ?? '', r.target ?? '', detail]) line.append(el('td', {}, v))
    table.append(line)
  }
  if (rows.length === 0) table.append(el('tr', {}, 'Nothing yet.'))
}
const onHash = () => {
  if (location.hash.startsWith('#/audit')) loadAudit()
}
window.addEventListener('hashchange', onHash)
onHash()

// Who is signed in, and sign-out (only when the collector has sign-in).
fetch('api/me')
  .then((r) => (r.ok ? r.json() : undefined))
  .then((me) => {
    if (!me?.auth) return
    const foot = $('.sidebar-foot')
    const box = el('div', { class: 'who', 'data-testid': 'signed-in-as' })
    box.append(el('span', {}, `${me.name} · ${me.role}`))
    const out = el('button', { type: 'button', class: 'link', 'data-testid': 'sign-out' }, 'Sign out')
    out.addEventListener('click', async () => {
      await fetch('logout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      document.body.replaceChildren()
      location.replace('/login')
    })
    box.append(out)
    foot?.prepend(box)
  })

// The session ended elsewhere (expired, signed out in another tab): leave for the login page.
const nativeFetch = window.fetch.bind(window)
window.fetch = async (...args) => {
  const res = await nativeFetch(...args)
  if (res.status === 401) {
    document.body.replaceChildren()
    location.replace('/login')
  }
  return res
}

// Back button after sign-out: a page restored from the back/forward cache re-checks the session.
window.addEventListener('pageshow', (ev) => {
  if (ev.persisted) {
    document.body.style.visibility = 'hidden'
    nativeFetch('api/me').then((r) => {
      if (r.status === 401) {
        document.body.replaceChildren()
        location.replace('/login')
      } else document.body.style.visibility = ''
    })
  }
})

// Erased users and expired records leave the live views at once.
const es = new EventSource('api/stream')
es.addEventListener('erase', (ev) => {
  const { bot, userId, threads } = JSON.parse(ev.data)
  const gone = new Set([userId, ...(threads ?? [])])
  for (const li of document.querySelectorAll('[data-testid="firehose-item"]'))
    if (li.dataset.bot === bot && gone.has(li.dataset.thread)) li.remove()
  for (const li of document.querySelectorAll('[data-testid="conversations"] li'))
    if (li.dataset.bot === bot && gone.has(li.dataset.thread)) li.remove()
  const m = /^#\/conversations\/([^/]+)\/(.+)$/.exec(location.hash)
  if (m && decodeURIComponent(m[1]) === bot && gone.has(decodeURIComponent(m[2]))) location.hash = '#/conversations'
  if (location.hash.startsWith('#/audit')) loadAudit()
})
es.addEventListener('expire', () => {
  window.dispatchEvent(new HashChangeEvent('hashchange'))
})
