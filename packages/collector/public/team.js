// Team features of the dashboard, kept apart from the views: who is signed in and sign-out, and
// dropping erased or expired users' lines from the live views (the audit log is views/audit.js).

const $ = (sel) => document.querySelector(sel)
const el = (tag, attrs = {}, text) => {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  if (text !== undefined) e.textContent = text
  return e
}

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
  if (location.hash.startsWith('#/audit')) window.dispatchEvent(new HashChangeEvent('hashchange'))
})
es.addEventListener('expire', () => {
  window.dispatchEvent(new HashChangeEvent('hashchange'))
})
