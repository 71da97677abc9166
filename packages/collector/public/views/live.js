// Live: the firehose (every message as it arrives) and the messages-over-time chart.
import { getJson, q } from '../lib/api.js'
import { $, h, s } from '../lib/dom.js'
import {
  ARROWS,
  dateTime,
  describe,
  intentTag,
  operatorMark,
  platformBadgeBeside,
  transcriptHref,
  when,
} from '../lib/format.js'
import { latest } from '../lib/latest.js'
import { bounds, includesNow, startOfDay, timeZone, withRange } from '../lib/range.js'
import { conversationName, matchesBot, state, userOf } from '../lib/state.js'

/** Per bucket size: the longest range the chart shows, and the fewest bars. */
const RANGES = {
  minute: { ms: 60_000, max: 180, min: 10 },
  hour: { ms: 3_600_000, max: 168, min: 6 },
  day: { ms: 86_400_000, max: 92, min: 7 },
}

/** The start of the bucket `n` buckets after the one holding `t`: days are local calendar days (the `tz` the request names). */
function bucketAt(t, bucket, n = 0) {
  if (bucket === 'day') return startOfDay(t, n)
  const { ms } = RANGES[bucket]
  return (Math.floor(t / ms) + n) * ms
}
const COLORS = { incoming: '#22a5c3', outgoing: '#4f46e5', events: '#d97706' }

function firehoseItem(m, fresh) {
  const user = userOf(m)
  const name = conversationName(user, m.thread)
  return h(
    'li',
    {
      class: fresh ? 'fresh' : '',
      'data-testid': 'firehose-item',
      dataset: { bot: m.bot, thread: m.thread, id: m.id },
      title: `Open the transcript (${m.direction} · user ${m.userId} · thread ${m.thread})`,
      onclick: () => {
        location.hash = transcriptHref(m.bot, m.thread)
      },
    },
    h('span', { class: 'time' }, when(m.ts)),
    h('span', { class: 'badge' }, m.bot),
    // The platform's column stays, empty when the badge would only repeat the bot's name.
    platformBadgeBeside(m.bot, m.platform) ?? h('span'),
    h('span', { class: `dir ${m.direction}`, title: m.direction }, ARROWS[m.direction] ?? ''),
    h('span', { class: 'user', 'data-testid': 'firehose-who', title: name }, name),
    h('span', { class: 'text' }, describe(m), m.sentBy === 'operator' ? [' ', operatorMark()] : null),
    intentTag(m) ?? h('span'),
  )
}

export function addToFirehose(m, fresh) {
  // A range that ended before now does not take live messages.
  if (!matchesBot(m.bot) || (fresh && !includesNow(state.range))) return
  const list = $('#firehose')
  list.prepend(firehoseItem(m, fresh))
  while (list.children.length > 200) list.lastChild.remove()
  $('#firehose-empty').style.display = 'none'
}

const firehoseTurn = latest()
const chartTurn = latest()

export async function loadFirehose() {
  const list = $('#firehose')
  const mine = firehoseTurn()
  const messages = await getJson(`api/messages${q(withRange({ bot: state.bot, limit: 100 }))}`)
  if (!mine()) return
  list.replaceChildren()
  for (const m of messages) addToFirehose(m, false)
  $('#firehose-empty').style.display = list.children.length ? 'none' : ''
}

/**
 * The chart's window: it ends now, or at the end of a range in the past, reaches back at most
 * `max` buckets and not before the range's start.
 */
function chartWindow(bucket, now, range) {
  const end = bucketAt(Math.min(now, (range.to ?? Number.POSITIVE_INFINITY) - 1), bucket)
  const back = bucketAt(end, bucket, 1 - RANGES[bucket].max)
  return { end, earliest: range.from === undefined ? back : Math.max(back, bucketAt(range.from, bucket)) }
}

/** The first bucket of the chart: the oldest data in the window, at least `min` bars back. */
export function chartRange(rows, bucket, now, range = {}) {
  const { ms, min } = RANGES[bucket]
  const { end, earliest } = chartWindow(bucket, now, range)
  const first = rows.find((r) => r.incoming + r.outgoing + r.events > 0)?.t
  const firstData = first === undefined ? undefined : bucketAt(first, bucket)
  const start = Math.max(earliest, Math.min(bucketAt(end, bucket, 1 - min), firstData ?? end))
  const starts = [start]
  while (starts.at(-1) < end) starts.push(bucketAt(starts.at(-1), bucket, 1))
  return { start, end, ms, count: starts.length, starts }
}

function axisLabel(t, bucket, withDay) {
  const d = new Date(t)
  if (bucket === 'day') return d.toLocaleDateString([], { month: 'short', day: 'numeric' })
  const hm = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
  if (bucket === 'hour' && withDay) return `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${hm}`
  return hm
}

function span(ms) {
  const minutes = Math.round(ms / 60_000)
  if (minutes < 120) return `${minutes} min`
  const hours = Math.round(minutes / 60)
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`
}

async function loadChart() {
  const now = Date.now()
  const range = bounds(state.range, now)
  const { end, earliest } = chartWindow(state.bucket, now, range)
  const to = bucketAt(end, state.bucket, 1)
  const mine = chartTurn()
  const rows = await getJson(
    `api/reports/timeline${q({ bot: state.bot, bucket: state.bucket, since: earliest, from: earliest, to, tz: timeZone() })}`,
  )
  if (!mine()) return
  const { start, count, starts } = chartRange(rows, state.bucket, now, range)
  // Keyed by this page's bucket of each row: a collector without `tz` answers UTC days.
  const byT = new Map()
  for (const r of rows) {
    const t = bucketAt(r.t, state.bucket)
    const b = byT.get(t) ?? { t, incoming: 0, outgoing: 0, events: 0 }
    for (const part of ['incoming', 'outgoing', 'events']) b[part] += r[part] ?? 0
    byT.set(t, b)
  }
  const buckets = starts.map((t) => byT.get(t) ?? { t, incoming: 0, outgoing: 0, events: 0 })
  const box = $('#chart')
  const width = Math.max(320, box.clientWidth || 640)
  const height = 180
  const top = Math.max(1, ...buckets.map((b) => b.incoming + b.outgoing + b.events))
  const niceMax = top <= 5 ? top : Math.ceil(top / 5) * 5
  // Room for the longest tick label (a 90-day range counts in the millions).
  const pad = { l: Math.max(34, 12 + 6 * String(niceMax).length), r: 8, t: 10, b: 22 }
  const plotW = width - pad.l - pad.r
  const plotH = height - pad.t - pad.b
  const bw = plotW / count
  const y = (v) => pad.t + plotH - (v / niceMax) * plotH
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': 'Messages over time',
    'data-testid': 'chart-svg',
    'data-start': start,
    'data-end': end,
    'data-buckets': count,
  })
  const ticks = niceMax >= 2 && niceMax % 2 === 0 ? [0, niceMax / 2, niceMax] : [0, niceMax]
  for (const v of ticks) {
    svg.append(s('line', { x1: pad.l, x2: width - pad.r, y1: y(v), y2: y(v), stroke: '#e4e6ee' }))
    svg.append(
      s('text', { x: pad.l - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#6b7185' }, String(v)),
    )
  }
  // About six labels, whatever the number of bars; the day is shown when the hours cross one.
  const every = Math.max(1, Math.ceil(count / 6))
  const crossesDay = new Date(start).toDateString() !== new Date(end).toDateString()
  buckets.forEach((b, i) => {
    const x = pad.l + i * bw + 1
    const w = Math.max(1, bw - 2)
    let base = 0
    for (const part of ['incoming', 'outgoing', 'events']) {
      if (!b[part]) continue
      const y0 = y(base)
      const y1 = y(base + b[part])
      svg.append(s('rect', { x, y: y1, width: w, height: y0 - y1, fill: COLORS[part], rx: 1.5, 'data-part': part }))
      base += b[part]
    }
    if ((count - 1 - i) % every === 0) {
      svg.append(
        s(
          'text',
          { x: x + w / 2, y: height - 6, 'text-anchor': 'middle', 'font-size': 10, fill: '#6b7185' },
          axisLabel(b.t, state.bucket, crossesDay),
        ),
      )
    }
    const title = s(
      'title',
      {},
      `${new Date(b.t).toLocaleString()}: ${b.incoming} incoming, ${b.outgoing} outgoing, ${b.events} events`,
    )
    const hit = s('rect', { x, y: pad.t, width: w, height: plotH, fill: 'transparent' })
    hit.append(title)
    svg.append(hit)
  })
  const total = buckets.reduce((t, b) => t + b.incoming + b.outgoing + b.events, 0)
  const legend = h(
    'div',
    { class: 'legend' },
    h('span', {}, h('i', { style: `background:${COLORS.incoming}` }), 'incoming'),
    h('span', {}, h('i', { style: `background:${COLORS.outgoing}` }), 'outgoing'),
    h('span', {}, h('i', { style: `background:${COLORS.events}` }), 'events'),
    h(
      'span',
      { 'data-testid': 'chart-total', title: 'Incoming, outgoing and events in the chart’s range' },
      includesNow(state.range, now)
        ? `${total} messages in the last ${span(to - start)}`
        : `${total} messages, ${dateTime(start)} – ${dateTime(to)}`,
    ),
  )
  box.replaceChildren(svg, legend)
}

export default {
  name: 'live',
  load: loadChart,
  refresh: loadChart,
  onResize: loadChart,
}
