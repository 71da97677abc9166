// The sign-in page: posts the form as JSON and goes to the dashboard; without JS it posts the form.
const form = document.getElementById('login-form')
const msg = document.getElementById('login-msg')
if (new URLSearchParams(location.search).has('failed')) msg.textContent = 'Wrong name or password.'

form.addEventListener('submit', async (ev) => {
  ev.preventDefault()
  msg.textContent = ''
  const data = Object.fromEntries(new FormData(form))
  const res = await fetch('/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(data),
    credentials: 'same-origin',
  }).catch(() => undefined)
  if (res?.ok) {
    location.replace('/')
    return
  }
  const body = res ? await res.json().catch(() => ({})) : {}
  msg.textContent =
    res?.status === 429 ? 'Too many failed attempts: wait a moment.' : (body?.error?.message ?? 'Sign-in failed.')
  form.password.value = ''
})
