// convotrack collector dashboard: plain DOM, no build step. Every value from a record is put
// in the page with textContent (never innerHTML): records are untrusted input.

const state = {
  bot: '',
  bots: [],
  view: 'live',
  current: null, // { bot, thread, paused, info }
  bucket: 'minute',
  firehoseCount: 0,
}

const $ = (sel) => document.querySelector(sel)

/** Tiny element builder: h('div', { class: 'x', onclick }, 'text', child). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'class') el.className = v
    else if (k === 'dataset') Object.assign(el.dataset, v)
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue
    el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  }
  return el
}

const SVG = 'http://www.w3.org/2000/svg'
function s(tag, attrs = {}, text) {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  if (text !== undefined) el.textContent = text
  return el
}

async function getJson(path) {
  const res = await fetch(path)
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`)
  return body
}

async function postJson(path, payload) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  })
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`)
  return body
}

const q = (params) => {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v))
  const str = p.toString()
  return str ? `?${str}` : ''
}

const time = (ts) =>
  new Date(ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
const dateTime = (ts) =>
  new Date(ts).toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
const ARROWS = { incoming: '→', outgoing: '←', event: '★' }
const safeUrl = (u) => (typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null)

function platformBadge(platform) {
  return h('span', { class: `badge platform-${platform}` }, platform)
}

function intentTag(m) {
  if (!m.intent) return null
  const conf = typeof m.confidence === 'number' ? ` ${Math.round(m.confidence * 100)}%` : ''
  return h(
    'span',
    { class: `intent${m.intent === 'NotHandled' ? ' not-handled' : ''}`, 'data-testid': 'intent' },
    m.intent + conf,
  )
}

function describe(m) {
  if (m.event) {
    const amount = typeof m.event.amount === 'number' ? ` · ${m.event.amount}` : ''
    return `${m.event.type}: ${m.event.name}${amount}`
  }
  return m.text ?? (m.images.length ? '[image]' : '')
}

const matchesBot = (bot) => state.bot === '' || state.bot === bot

// ------------------------------------------------------------------ routing

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/')
  const view = parts[0] || 'live'
  state.view = view
  for (const el of document.querySelectorAll('.view')) el.classList.toggle('on', el.id === `view-${view}`)
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('on', a.dataset.view === view)
  if (view === 'conversations') {
    loadConversations()
    if (parts[1] && parts[2]) openTranscript(decodeURIComponent(parts[1]), decodeURIComponent(parts.slice(2).join('/')))
  }
  refreshView()
}

function refreshView() {
  switch (state.view) {
    case 'live':
      return loadChart()
    case 'conversations':
      return loadConversations()
    case 'not-handled':
      return loadNotHandled()
    case 'intents':
      return loadIntents()
    case 'events':
      return loadEvents()
    case 'audience':
      return loadSegments()
    case 'connect':
      return loadPages()
  }
}

let refreshTimer
function scheduleRefresh() {
  clearTimeout(refreshTimer)
  refreshTimer = setTimeout(() => {
    // A refresh that fails (the collector's database restarting: 503) waits for the next event.
    Promise.allSettled([refreshView(), loadCounts()])
  }, 600)
}

const transcriptHref = (bot, thread) => `#/conversations/${encodeURIComponent(bot)}/${encodeURIComponent(thread)}`

// ------------------------------------------------------------------ live: firehose + chart

function firehoseItem(m, fresh) {
  return h(
    'li',
    {
      class: fresh ? 'fresh' : '',
      'data-testid': 'firehose-item',
      dataset: { bot: m.bot, thread: m.thread },
      title: 'Open the transcript',
      onclick: () => {
        location.hash = transcriptHref(m.bot, m.thread)
      },
    },
    h('span', { class: 'time' }, time(m.ts)),
    h('span', { class: 'badge' }, m.bot),
    platformBadge(m.platform),
    h('span', { class: `dir ${m.direction}`, title: m.direction }, ARROWS[m.direction] ?? ''),
    h('span', { class: 'user' }, m.userId),
    h('span', { class: 'text' }, describe(m)),
    intentTag(m) ?? h('span'),
  )
}

function addToFirehose(m, fresh) {
  if (!matchesBot(m.bot)) return
  const list = $('#firehose')
  list.prepend(firehoseItem(m, fresh))
  while (list.children.length > 200) list.lastChild.remove()
  $('#firehose-empty').style.display = 'none'
}

async function loadFirehose() {
  const list = $('#firehose')
  list.replaceChildren()
  const messages = await getJson(`api/messages${q({ bot: state.bot, limit: 100 })}`)
  for (const m of messages) addToFirehose(m, false)
  $('#firehose-empty').style.display = list.children.length ? 'none' : ''
}

async function loadChart() {
  const bucketMs = state.bucket === 'hour' ? 3_600_000 : 60_000
  const count = state.bucket === 'hour' ? 24 : 60
  const now = Date.now()
  const start = Math.floor(now / bucketMs) * bucketMs - (count - 1) * bucketMs
  const rows = await getJson(`api/reports/timeline${q({ bot: state.bot, bucket: state.bucket, since: start })}`)
  const byT = new Map(rows.map((r) => [r.t, r]))
  const buckets = Array.from({ length: count }, (_, i) => {
    const t = start + i * bucketMs
    const r = byT.get(t)
    return { t, incoming: r?.incoming ?? 0, outgoing: r?.outgoing ?? 0 }
  })
  const box = $('#chart')
  const width = Math.max(320, box.clientWidth || 640)
  const height = 180
  const pad = { l: 34, r: 8, t: 10, b: 22 }
  const max = Math.max(1, ...buckets.map((b) => b.incoming + b.outgoing))
  const niceMax = max <= 5 ? max : Math.ceil(max / 5) * 5
  const plotW = width - pad.l - pad.r
  const plotH = height - pad.t - pad.b
  const bw = plotW / count
  const y = (v) => pad.t + plotH - (v / niceMax) * plotH
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'Messages over time' })
  const ticks = niceMax >= 2 && niceMax % 2 === 0 ? [0, niceMax / 2, niceMax] : [0, niceMax]
  for (const v of ticks) {
    svg.append(s('line', { x1: pad.l, x2: width - pad.r, y1: y(v), y2: y(v), stroke: '#e4e6ee' }))
    svg.append(
      s('text', { x: pad.l - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#6b7185' }, String(v)),
    )
  }
  buckets.forEach((b, i) => {
    const x = pad.l + i * bw + 1
    const w = Math.max(1, bw - 2)
    if (b.incoming)
      svg.append(s('rect', { x, y: y(b.incoming), width: w, height: y(0) - y(b.incoming), fill: '#22a5c3', rx: 1.5 }))
    if (b.outgoing) {
      const top = y(b.incoming + b.outgoing)
      svg.append(s('rect', { x, y: top, width: w, height: y(b.incoming) - top, fill: '#4f46e5', rx: 1.5 }))
    }
    if (i % (state.bucket === 'hour' ? 4 : 10) === 0 || i === count - 1) {
      const label = new Date(b.t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      svg.append(
        s('text', { x: x + w / 2, y: height - 6, 'text-anchor': 'middle', 'font-size': 10, fill: '#6b7185' }, label),
      )
    }
    const title = s('title', {}, `${new Date(b.t).toLocaleTimeString()}: ${b.incoming} in, ${b.outgoing} out`)
    const hit = s('rect', { x, y: pad.t, width: w, height: plotH, fill: 'transparent' })
    hit.append(title)
    svg.append(hit)
  })
  const legend = h(
    'div',
    { class: 'legend' },
    h('span', {}, h('i', { style: 'background:#22a5c3' }), 'incoming'),
    h('span', {}, h('i', { style: 'background:#4f46e5' }), 'outgoing'),
    h(
      'span',
      { 'data-testid': 'chart-total' },
      `${buckets.reduce((t, b) => t + b.incoming + b.outgoing, 0)} messages in view`,
    ),
  )
  box.replaceChildren(svg, legend)
}

// ------------------------------------------------------------------ transcripts

async function loadConversations() {
  const list = $('#conversations')
  const rows = await getJson(`api/conversations${q({ bot: state.bot })}`)
  $('#conv-count').textContent = `${rows.length}`
  list.replaceChildren(
    ...rows.map((c) =>
      h(
        'li',
        {
          class: state.current && state.current.bot === c.bot && state.current.thread === c.thread ? 'on' : '',
          'data-testid': 'conversation',
          dataset: { bot: c.bot, thread: c.thread },
          onclick: () => {
            location.hash = transcriptHref(c.bot, c.thread)
          },
        },
        h(
          'div',
          { class: 'row' },
          h('span', { class: 'who' }, c.userId === c.thread ? c.userId : `${c.thread} · ${c.userId}`),
          h('span', { class: 'muted' }, time(c.lastTs)),
        ),
        h(
          'div',
          { class: 'row' },
          h('span', { class: 'last' }, c.lastText ?? ''),
          h(
            'span',
            { class: 'tags' },
            c.paused ? h('span', { class: 'badge paused-badge' }, 'paused') : null,
            state.bot === '' ? h('span', { class: 'badge' }, c.bot) : null,
            platformBadge(c.platform),
          ),
        ),
      ),
    ),
  )
  if (!rows.length) list.append(h('li', { class: 'empty' }, 'No conversations yet.'))
}

function bubble(m) {
  const images = m.images.map(safeUrl).filter(Boolean)
  const raw = h('div', { class: 'raw-slot' })
  const rawBtn = h(
    'button',
    {
      type: 'button',
      class: 'raw-toggle',
      'data-testid': 'raw-toggle',
      onclick: async () => {
        if (raw.firstChild) {
          raw.replaceChildren()
          rawBtn.textContent = 'raw JSON'
          return
        }
        const record = await getJson(`api/records/${m.recordId}`)
        raw.replaceChildren(h('pre', { class: 'raw', 'data-testid': 'raw-json' }, JSON.stringify(record.raw, null, 2)))
        rawBtn.textContent = 'hide JSON'
      },
    },
    'raw JSON',
  )
  return h(
    'div',
    { class: `msg ${m.direction}`, 'data-testid': 'transcript-message', dataset: { direction: m.direction, id: m.id } },
    m.text || m.event ? h('div', { class: 'bubble' }, describe(m)) : null,
    images.length
      ? h(
          'div',
          { class: 'chips' },
          images.map((src) => h('img', { src, alt: 'image', loading: 'lazy' })),
        )
      : null,
    m.buttons.length
      ? h(
          'div',
          { class: 'chips' },
          m.buttons.map((b) => h('span', { class: 'chip', title: b.value ?? '' }, b.label)),
        )
      : null,
    h('div', { class: 'meta' }, time(m.ts), platformBadge(m.platform), intentTag(m), rawBtn),
    raw,
  )
}

function renderTakeover() {
  const c = state.current
  const box = $('#takeover')
  if (!c || !box) return
  const info = c.info
  const stateEl = h(
    'span',
    { class: `state ${c.paused ? 'paused' : 'running'}`, 'data-testid': 'pause-state' },
    c.paused ? 'Paused — you are in control' : 'Bot answering',
  )
  const btn = h(
    'button',
    {
      type: 'button',
      class: `action ${c.paused ? '' : 'pause'}`,
      'data-testid': 'pause-button',
      disabled: !info.canPause || c.busy,
      title: info.canPause ? '' : 'Register a pauseWebhookUrl for this bot to pause it',
      onclick: () => togglePause(),
    },
    c.busy ? (c.paused ? 'Unpausing…' : 'Pausing…') : c.paused ? 'Unpause' : 'Pause',
  )
  box.replaceChildren(stateEl, btn)
}

async function togglePause() {
  const c = state.current
  if (!c || c.busy) return
  c.busy = true
  $('#takeover-alert').textContent = ''
  renderTakeover()
  try {
    const result = await postJson('api/pause', { bot: c.bot, thread: c.thread, paused: !c.paused })
    if (state.current === c) c.paused = result.paused
  } catch (e) {
    $('#takeover-alert').textContent = e.message
  } finally {
    c.busy = false
    renderTakeover()
  }
}

async function openTranscript(bot, thread) {
  const pane = $('#transcript')
  let data
  try {
    data = await getJson(`api/transcript${q({ bot, thread })}`)
  } catch (e) {
    pane.replaceChildren(h('p', { class: 'empty' }, e.message))
    return
  }
  state.current = { bot, thread, paused: data.paused, info: data.bot, busy: false }
  const bubbles = h('div', { class: 'bubbles', id: 'bubbles', 'data-testid': 'bubbles' }, data.messages.map(bubble))
  const input = h('input', {
    id: 'operator-text',
    'data-testid': 'operator-input',
    placeholder: data.bot.canMessage
      ? 'Type a message to send as the bot…'
      : 'No operator message URL registered for this bot',
    disabled: !data.bot.canMessage,
    autocomplete: 'off',
  })
  const sendNote = h('p', { class: 'hint', id: 'operator-note', 'data-testid': 'operator-note' })
  const composer = h(
    'form',
    {
      class: 'composer',
      onsubmit: async (ev) => {
        ev.preventDefault()
        const text = input.value.trim()
        if (!text) return
        sendNote.textContent = 'Sending…'
        try {
          await postJson('api/operator-message', { bot, thread, text })
          input.value = ''
          sendNote.textContent = `Sent as ${bot}.`
        } catch (e) {
          sendNote.textContent = e.message
        }
      },
    },
    input,
    h(
      'button',
      { type: 'submit', class: 'primary', disabled: !data.bot.canMessage, 'data-testid': 'operator-send' },
      'Send',
    ),
  )
  const last = data.messages.at(-1)
  pane.replaceChildren(
    h(
      'div',
      { class: 'transcript-head' },
      h(
        'div',
        {},
        h('h2', { 'data-testid': 'transcript-title' }, thread),
        h(
          'div',
          { class: 'muted' },
          h('span', { class: 'badge' }, bot),
          ' ',
          last ? platformBadge(last.platform) : null,
          ' ',
          h('span', { id: 'transcript-count' }, `${data.messages.length} messages`),
        ),
      ),
      h(
        'div',
        {},
        h('div', { class: 'takeover', id: 'takeover' }),
        h('div', { class: 'alert', id: 'takeover-alert', 'data-testid': 'takeover-alert' }),
      ),
    ),
    bubbles,
    h('div', {}, composer, sendNote),
  )
  renderTakeover()
  bubbles.scrollTop = bubbles.scrollHeight
  for (const li of document.querySelectorAll('#conversations li'))
    li.classList.toggle('on', li.dataset.bot === bot && li.dataset.thread === thread)
}

// ------------------------------------------------------------------ reports

function table(el, head, rows) {
  el.replaceChildren(
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map(([label, num]) => h('th', { class: num ? 'num' : '' }, label)),
      ),
    ),
    h('tbody', {}, rows),
  )
}

const barCell = (value, max, bad) =>
  h(
    'td',
    { class: 'bar-cell' },
    h('div', { class: `bar${bad ? ' bad' : ''}`, style: `width:${Math.max(1, (value / Math.max(1, max)) * 100)}%` }),
  )

async function loadNotHandled() {
  const rows = await getJson(`api/reports/not-handled${q({ bot: state.bot })}`)
  const max = Math.max(1, ...rows.map((r) => r.count))
  table(
    $('#not-handled'),
    [['Input'], ['Count', true], [''], ['Users', true], ['Last seen'], ['Bots']],
    rows.length
      ? rows.map((r) =>
          h(
            'tr',
            { 'data-testid': 'not-handled-row' },
            h('td', { 'data-testid': 'not-handled-text' }, r.text || '(empty)'),
            h('td', { class: 'num', 'data-testid': 'not-handled-count' }, r.count),
            barCell(r.count, max, true),
            h('td', { class: 'num' }, r.users),
            h('td', { class: 'muted' }, dateTime(r.lastTs)),
            h('td', {}, r.bots.join(', ')),
          ),
        )
      : [
          h(
            'tr',
            {},
            h('td', { colspan: 6, class: 'empty' }, 'Nothing marked NotHandled yet — your bot understood everything.'),
          ),
        ],
  )
}

async function loadIntents() {
  const rows = await getJson(`api/reports/intents${q({ bot: state.bot })}`)
  const max = Math.max(1, ...rows.map((r) => r.count))
  table(
    $('#intents'),
    [['Intent'], ['Count', true], [''], ['In', true], ['Out', true], ['Avg confidence', true]],
    rows.length
      ? rows.map((r) =>
          h(
            'tr',
            { 'data-testid': 'intent-row' },
            h('td', {}, intentTag({ intent: r.intent })),
            h('td', { class: 'num' }, r.count),
            barCell(r.count, max, r.intent === 'NotHandled'),
            h('td', { class: 'num' }, r.incoming),
            h('td', { class: 'num' }, r.outgoing),
            h('td', { class: 'num' }, r.avgConfidence === null ? '—' : `${Math.round(r.avgConfidence * 100)}%`),
          ),
        )
      : [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No intents yet.'))],
  )
}

function barsList(items, label, value) {
  if (!items.length) return h('p', { class: 'muted' }, 'none yet')
  const max = Math.max(1, ...items.map(value))
  return h(
    'ul',
    { class: 'bars' },
    items.map((it) =>
      h(
        'li',
        {},
        h('span', { class: 'label', title: label(it) }, label(it)),
        h('div', { class: 'bar', style: `width:${(value(it) / max) * 100}%` }),
        h('span', { class: 'n' }, value(it)),
      ),
    ),
  )
}

async function loadEvents() {
  const r = await getJson(`api/reports/events${q({ bot: state.bot })}`)
  const money = (n) => n.toLocaleString(undefined, { maximumFractionDigits: 2 })
  $('#events').replaceChildren(
    h(
      'div',
      { class: 'card', 'data-testid': 'revenue' },
      h('h2', {}, 'Revenue'),
      h('div', { class: 'kpi', 'data-testid': 'revenue-total' }, money(r.revenue.total)),
      h('div', { class: 'muted' }, `${r.revenue.count} revenue events`),
      barsList(
        r.revenue.byName,
        (x) => x.name,
        (x) => x.total,
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Shares'),
      h('div', { class: 'kpi' }, r.shares.count),
      barsList(
        r.shares.byName,
        (x) => x.name,
        (x) => x.count,
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Custom events'),
      barsList(
        r.custom,
        (x) => x.name,
        (x) => x.count,
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Page launches'),
      barsList(
        r.pageLaunches,
        (x) => x.page,
        (x) => x.count,
      ),
    ),
    h(
      'div',
      { class: 'card', 'data-testid': 'referrals' },
      h('h2', {}, 'Referrals by source'),
      barsList(
        r.referrals,
        (x) => x.source,
        (x) => x.count,
      ),
    ),
  )
}

async function loadSegments() {
  const segments = await getJson(`api/reports/segments${q({ bot: state.bot })}`)
  const box = $('#segments')
  if (!segments.length) {
    box.replaceChildren(
      h(
        'div',
        { class: 'card' },
        h('p', { class: 'empty' }, 'No user metadata yet: send platformUserJson with your records.'),
      ),
    )
    return
  }
  box.replaceChildren(
    ...segments.map((seg) =>
      h(
        'div',
        { class: 'card', 'data-testid': 'segment' },
        h('h2', {}, seg.field),
        barsList(
          seg.values,
          (v) => v.value,
          (v) => v.users,
        ),
      ),
    ),
  )
}

async function loadPages() {
  const data = await getJson('api/messenger-pages')
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

async function loadBots() {
  state.bots = await getJson('api/bots')
  const select = $('#bot-filter')
  const current = select.value
  select.replaceChildren(
    h('option', { value: '' }, 'All bots'),
    ...state.bots.map((b) => h('option', { value: b.name }, b.name)),
  )
  select.value = state.bots.some((b) => b.name === current) ? current : ''
}

async function loadCounts() {
  const c = await getJson('api/stats')
  $('#counts').textContent = `${c.records} records · ${c.messages} messages`
}

// ------------------------------------------------------------------ live stream

function connectStream() {
  const live = $('#live-state')
  const es = new EventSource('api/stream')
  es.addEventListener('open', () => {
    live.className = 'live-state on'
    live.querySelector('.label').textContent = 'live'
  })
  es.addEventListener('error', () => {
    live.className = 'live-state off'
    live.querySelector('.label').textContent = 'reconnecting…'
  })
  es.addEventListener('message', (ev) => {
    const m = JSON.parse(ev.data)
    addToFirehose(m, true)
    const c = state.current
    if (c && c.bot === m.bot && c.thread === m.thread && state.view === 'conversations') {
      const bubbles = $('#bubbles')
      if (bubbles) {
        const atBottom = bubbles.scrollHeight - bubbles.scrollTop - bubbles.clientHeight < 40
        bubbles.append(bubble(m))
        $('#transcript-count').textContent = `${bubbles.children.length} messages`
        if (atBottom) bubbles.scrollTop = bubbles.scrollHeight
      }
    }
    scheduleRefresh()
  })
  es.addEventListener('pause', (ev) => {
    const p = JSON.parse(ev.data)
    const c = state.current
    if (c && c.bot === p.bot && c.thread === p.thread && !c.busy) {
      c.paused = p.paused
      renderTakeover()
    }
    if (state.view === 'conversations') scheduleRefresh()
  })
  es.addEventListener('messenger', () => {
    loadBots()
    if (state.view === 'connect') loadPages()
  })
}

// ------------------------------------------------------------------ wiring

$('#bot-filter').addEventListener('change', (ev) => {
  state.bot = ev.target.value
  loadFirehose()
  refreshView()
})

for (const b of document.querySelectorAll('[data-bucket]')) {
  b.addEventListener('click', () => {
    state.bucket = b.dataset.bucket
    for (const x of document.querySelectorAll('[data-bucket]')) x.classList.toggle('on', x === b)
    loadChart()
  })
}

$('#connect-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const form = ev.target
  const data = Object.fromEntries(new FormData(form))
  const msg = $('#connect-msg')
  try {
    const r = await postJson('api/messenger-pages', data)
    msg.textContent = `Connected page ${r.pageId} to bot ${r.bot}.`
    form.reset()
    loadPages()
    loadBots()
  } catch (e) {
    msg.textContent = e.message
  }
})

window.addEventListener('hashchange', route)
window.addEventListener('resize', () => state.view === 'live' && loadChart())

await loadBots()
await Promise.all([loadFirehose(), loadCounts()])
connectStream()
route()
