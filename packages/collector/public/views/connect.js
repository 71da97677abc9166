// Connect a Messenger page: the form, the webhook URL, the connected pages.
import { getJson, postJson } from '../lib/api.js'
import { $, h } from '../lib/dom.js'
import { latest } from '../lib/latest.js'

const turn = latest()

async function load() {
  const mine = turn()
  const data = await getJson('api/messenger-pages')
  if (!mine()) return
  $('#webhook-url').textContent = data.webhookUrl
  $('#pages').replaceChildren(
    ...(data.pages.length
      ? data.pages.map((p) =>
          h(
            'li',
            { 'data-testid': 'page' },
            h('strong', {}, p.pageId),
            ' → bot ',
            h('span', { class: 'badge' }, p.bot),
          ),
        )
      : [h('li', { class: 'muted' }, 'No page connected.')]),
  )
}

/** Wires the form once; `onConnected` refreshes what depends on the list of bots. */
export function wireConnectForm(onConnected) {
  $('#connect-form').addEventListener('submit', async (ev) => {
    ev.preventDefault()
    const form = ev.target
    const data = Object.fromEntries(new FormData(form))
    const msg = $('#connect-msg')
    try {
      const r = await postJson('api/messenger-pages', data)
      msg.textContent = `Connected page ${r.pageId} to bot ${r.bot}.`
      form.reset()
      load()
      onConnected()
    } catch (e) {
      msg.textContent = e.message
    }
  })
}

export default { name: 'connect', load, refresh: load }
