import express, { type Router } from 'express'
import { inScope, principalOf, scopeOf } from '../access/auth'
import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import type { HandoffQueue } from '../live/handoff-queue'
import type { LiveFeed } from '../live/live-feed'
import { OperatorLog, takeoverMarks } from '../live/operator-log'
import type { Takeover } from '../live/takeover'
import type { LlmPrice, MessengerPageConfig } from '../options'
import { DAY_MS, dayStart, HOUR_MS } from '../reports/range'
import { isConversationCursor } from '../reports/report-queries'
import type { RecordStore } from '../store/store'
import { analyticsRoutes } from './analytics-api'
import { llmDetails } from './llm-details'
import { intParam } from './query-params'
import { col, filterOf, isoTime, readOf, sendReport } from './read-params'

/** Messages per `GET /api/transcript` page unless `limit` says otherwise. */
const TRANSCRIPT_PAGE = 500

const BUCKETS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }

function requiredString(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new RequestError(400, 'invalid_request', `\`${path}\` is required`, path)
  return value
}

/**
 * The dashboard's read API and takeover actions, under `/api`. JSON in, JSON out; errors are
 * `{ error: { code, message, path } }`. Sign-in, roles and bot scope are checked before, by the
 * access gate (`auth.ts`, `access-rules.ts`); list queries here are filtered to the caller's bots.
 *
 * @example app.use('/api', dashboardApi({ bots, store, feed, takeover, messenger }))
 */
export function dashboardApi(deps: {
  bots: BotRegistry
  store: RecordStore
  feed: LiveFeed
  takeover: Takeover
  /** The handoff queue: an operator message pauses the conversation first. */
  handoffs?: HandoffQueue
  messenger: {
    list(): Array<{ pageId: string; bot: string }>
    connect(page: MessengerPageConfig): Promise<{ pageId: string; bot: string }>
  }
  webhookUrl: () => string
  /** The trace link template (`traceUrl` option), sent with every transcript. */
  traceUrl?: string | undefined
  /** `llmPrices` option: cost next to tokens. */
  llmPrices?: Record<string, LlmPrice> | undefined
  /** `reportWaitMs` option: how long a funnel or overview request waits for its answer. */
  reportWaitMs?: number
}): Router {
  const api = express.Router()
  api.use(express.json({ limit: '64kb' }))
  const operator = new OperatorLog()

  // Each bot with its stored record count (all time): the bot filter marks a configured bot that has sent nothing yet.
  api.get('/bots', async (_req, res) => {
    const bots = deps.bots.list().filter((b) => inScope(res, b.name))
    res.json(
      await Promise.all(bots.map(async (b) => ({ ...b, records: (await deps.store.counts({ bot: b.name })).records }))),
    )
  })
  api.get('/stats', async (req, res) => {
    const filter = readOf(req, res)
    res.json({
      ...(await deps.store.counts(filter)),
      bot: filter.bot ?? null,
      streams: deps.feed.size,
      from: filter.from,
      to: filter.to,
      tz: filter.tz,
    })
  })
  api.get('/stream', (req, res) => {
    deps.feed.attach(req, res, filterOf(req, res).bot, { bots: scopeOf(res), session: principalOf(res).session?.id })
  })
  api.get('/messages', async (req, res) => {
    res.json(
      operator.mark(
        await deps.store.recent({
          ...readOf(req, res),
          limit: intParam(req, 'limit'),
          afterId: intParam(req, 'afterId'),
        }),
      ),
    )
  })
  api.get('/conversations', async (req, res) => {
    const cursor = typeof req.query.cursor === 'string' && req.query.cursor !== '' ? req.query.cursor : undefined
    if (cursor !== undefined && !isConversationCursor(cursor))
      throw new RequestError(400, 'invalid_request', "query `cursor` must be a row's `cursor`", 'cursor')
    const limit = intParam(req, 'limit')
    const rows = await deps.store.conversations({
      ...readOf(req, res),
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    })
    const last = rows[rows.length - 1]
    if (last && rows.length >= Math.min(Math.max(1, Math.floor(limit ?? 200)), 5000))
      res.setHeader('X-Next-Cursor', last.cursor)
    sendReport(req, res, 'conversations', rows, rows, [
      col('bot', (r) => r.bot),
      col('thread', (r) => r.thread),
      col('userId', (r) => r.userId),
      col('platform', (r) => r.platform),
      col('messages', (r) => r.messages),
      col('notHandled', (r) => r.notHandled),
      col('firstTs', (r) => isoTime(r.firstTs)),
      col('lastTs', (r) => isoTime(r.lastTs)),
      col('lastText', (r) => r.lastText),
      col('paused', (r) => r.paused),
    ])
  })
  api.get('/transcript', async (req, res) => {
    const bot = requiredString(req.query.bot, 'bot')
    const thread = requiredString(req.query.thread, 'thread')
    const info = deps.bots.list().find((b) => b.name === bot)
    if (!info) throw new RequestError(404, 'not_found', `no bot named "${bot}"`, 'bot')
    const limit = Math.min(Math.max(1, Math.floor(intParam(req, 'limit') ?? TRANSCRIPT_PAGE)), 5000)
    const beforeId = intParam(req, 'beforeId')
    // One more than asked tells whether an older page exists.
    const [page, paused, entries] = await Promise.all([
      deps.store.transcript(bot, thread, { limit: limit + 1, ...(beforeId !== undefined ? { beforeId } : {}) }),
      deps.store.paused(bot, thread),
      deps.store.audit({ bots: [bot], limit: 1000 }),
    ])
    const audited = operator.fromAudit(entries, bot, thread)
    const messages = page.length > limit ? page.slice(page.length - limit) : page
    const olderBeforeId = page.length > limit ? (messages[0]?.id ?? null) : null
    const llm = await llmDetails(deps.store, messages, deps.llmPrices)
    const marked = operator.mark(messages, audited).map((m) => {
      const otel = llm.byRecord.get(m.recordId)
      return otel ? { ...m, otel } : m
    })
    res.json({
      bot: info,
      thread,
      paused,
      messages: marked,
      olderBeforeId,
      // Pauses, resumes, claims and releases of this conversation, oldest first.
      takeovers: takeoverMarks(entries, thread),
      // LLM conversations: the tokens (and cost) of the messages of this page, and the trace link template.
      usage: llm.totals,
      traceUrl: deps.traceUrl ?? null,
    })
  })
  api.get('/records/:id', async (req, res) => {
    const record = await deps.store.record(Number(req.params.id))
    if (!record) throw new RequestError(404, 'not_found', `no record ${req.params.id}`, 'id')
    res.json({ ...record, raw: JSON.parse(record.raw) })
  })
  api.get('/reports/not-handled', async (req, res) => {
    const rows = await deps.store.notHandled(readOf(req, res))
    sendReport(req, res, 'not-handled', rows, rows, [
      col('text', (r) => r.text),
      col('count', (r) => r.count),
      col('users', (r) => r.users),
      col('lastTs', (r) => isoTime(r.lastTs)),
      col('bots', (r) => r.bots),
    ])
  })
  api.get('/reports/intents', async (req, res) => {
    const rows = await deps.store.intents(readOf(req, res))
    sendReport(req, res, 'intents', rows, rows, [
      col('intent', (r) => r.intent),
      col('count', (r) => r.count),
      col('incoming', (r) => r.incoming),
      col('outgoing', (r) => r.outgoing),
      col('avgConfidence', (r) => r.avgConfidence),
    ])
  })
  api.get('/reports/events', async (req, res) => {
    const filter = readOf(req, res)
    const events = await deps.store.events(filter)
    // CSV: one line per event type and name.
    const rows = [
      ...events.custom.map((e) => ({
        type: 'customEvent',
        name: e.name,
        count: e.count,
        total: null as number | null,
      })),
      ...events.revenue.byName.map((e) => ({ type: 'revenueEvent', name: e.name, count: e.count, total: e.total })),
      ...events.shares.byName.map((e) => ({ type: 'shareEvent', name: e.name, count: e.count, total: null })),
      ...events.pageLaunches.map((e) => ({ type: 'pageLaunchEvent', name: e.page, count: e.count, total: null })),
      ...events.referrals.map((e) => ({ type: 'referralEvent', name: e.source, count: e.count, total: null })),
    ]
    sendReport(req, res, 'events', { ...events, from: filter.from, to: filter.to, tz: filter.tz }, rows, [
      col('type', (r) => r.type),
      col('name', (r) => r.name),
      col('count', (r) => r.count),
      col('total', (r) => r.total),
    ])
  })
  api.get('/reports/segments', async (req, res) => {
    const segments = await deps.store.segments(readOf(req, res))
    const rows = segments.flatMap((s) => s.values.map((v) => ({ field: s.field, ...v })))
    sendReport(req, res, 'segments', segments, rows, [
      col('field', (r) => r.field),
      col('value', (r) => r.value),
      col('users', (r) => r.users),
    ])
  })
  api.get('/reports/usage', async (req, res) => {
    const filter = readOf(req, res)
    const daysQ = intParam(req, 'days')
    let since = filter.from
    if (daysQ !== undefined || (req.query.from === undefined && req.query.all === undefined)) {
      // `days`: whole days in `tz` (default UTC), today and the days before it.
      const days = Math.min(Math.max(1, Math.floor(daysQ ?? 30)), 3660)
      since = dayStart(filter.tz, dayStart(filter.tz, Date.now()) - (days - 1) * DAY_MS + 12 * HOUR_MS)
    }
    const lines = await deps.store.usage({ ...filter, from: since })
    const prices = deps.llmPrices ?? {}
    const priced = lines.map((l) => {
      const p = l.model === null ? undefined : prices[l.model]
      return { ...l, cost: p ? (l.inputTokens * p.input + l.outputTokens * p.output) / 1_000_000 : null }
    })
    const sum = (f: (l: (typeof priced)[number]) => number) => priced.reduce((n, l) => n + f(l), 0)
    const costs = priced.filter((l) => l.cost !== null)
    const total = {
      messages: sum((l) => l.messages),
      inputTokens: sum((l) => l.inputTokens),
      outputTokens: sum((l) => l.outputTokens),
      // The models llmPrices names; null when it names none of them.
      cost: costs.length > 0 ? costs.reduce((n, l) => n + (l.cost ?? 0), 0) : null,
    }
    res.json({ since, days: priced, total })
  })
  api.get('/reports/timeline', async (req, res) => {
    const name = typeof req.query.bucket === 'string' ? req.query.bucket : 'minute'
    const bucketMs = BUCKETS[name]
    if (!bucketMs)
      throw new RequestError(400, 'invalid_request', 'query `bucket` must be minute, hour or day', 'bucket')
    // Minute buckets read the messages themselves: by default the last day, at most 7 days.
    const fine = bucketMs < 3_600_000
    const filter = readOf(req, res, fine ? DAY_MS : undefined)
    const since = intParam(req, 'since')
    const start = Math.max(filter.from, since ?? 0)
    if (fine && (filter.to ?? Date.now()) - start > 7 * DAY_MS)
      throw new RequestError(
        400,
        'invalid_request',
        'query `bucket=minute` covers at most 7 days: use hour or day',
        'from',
      )
    const rows = await deps.store.timeline({ ...filter, bucketMs, since })
    sendReport(req, res, 'timeline', rows, rows, [
      col('t', (r) => isoTime(r.t)),
      col('incoming', (r) => r.incoming),
      col('outgoing', (r) => r.outgoing),
      col('events', (r) => r.events),
    ])
  })
  analyticsRoutes(api, deps.store, {
    changes: deps.feed,
    ...(deps.reportWaitMs === undefined ? {} : { reportWaitMs: deps.reportWaitMs }),
  })

  api.post('/pause', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    if (typeof body.paused !== 'boolean')
      throw new RequestError(400, 'invalid_request', '`paused` must be true or false', 'paused')
    res.json(
      await deps.takeover.setPaused(
        requiredString(body.bot, 'bot'),
        requiredString(body.thread, 'thread'),
        body.paused,
      ),
    )
  })
  api.post('/operator-message', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    const bot = requiredString(body.bot, 'bot')
    const thread = requiredString(body.thread, 'thread')
    const text = requiredString(body.text, 'text')
    // A person is writing: the bot must not answer over them (paused first, via the pause webhook).
    const { name, role } = principalOf(res)
    const paused = deps.handoffs ? await deps.handoffs.beforeOperatorMessage(bot, thread, { name, role }) : undefined
    const sent = { bot, thread, text, sentAt: Date.now() }
    // Remembered before the call: the bot tracks its copy while this request is still open.
    operator.sent(sent)
    let result: { attempts: number }
    try {
      result = await deps.takeover.sendMessage(bot, thread, text)
    } catch (e) {
      operator.forget(sent)
      throw e
    }
    deps.feed.publish('operator', sent, bot)
    res.json({ ...result, sentAt: sent.sentAt, ...(paused === undefined ? {} : { paused }) })
  })

  api.get('/messenger-pages', (_req, res) => {
    res.json({ webhookUrl: deps.webhookUrl(), pages: deps.messenger.list().filter((p) => inScope(res, p.bot)) })
  })
  api.post('/messenger-pages', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    const page: MessengerPageConfig = {
      pageId: requiredString(body.pageId, 'pageId'),
      appSecret: requiredString(body.appSecret, 'appSecret'),
      verifyToken: requiredString(body.verifyToken, 'verifyToken'),
    }
    if (typeof body.bot === 'string' && body.bot.trim() !== '') page.bot = body.bot.trim()
    const target = page.bot ?? `messenger-${page.pageId}`
    // A page already connected to another bot is that bot's: taken over only by a caller who
    // may act on both, and only when asked to move it.
    const owner = deps.messenger.list().find((p) => p.pageId === page.pageId)?.bot
    const moving = owner !== undefined && owner !== target
    if (moving && !inScope(res, owner)) {
      await deps.store.addAudit({
        ts: Date.now(),
        actor: principalOf(res).name,
        action: 'messenger-page-refused',
        bot: owner,
        target: page.pageId,
        detail: { requestedBot: target },
      })
      throw new RequestError(
        403,
        'forbidden',
        `page ${page.pageId} is connected to a bot outside your scope; it cannot be moved or replaced by you`,
        'pageId',
      )
    }
    if (moving && body.move !== true)
      throw new RequestError(
        409,
        'conflict',
        `page ${page.pageId} is connected to bot "${owner}"; send \`move: true\` to connect it to "${target}" instead`,
        'pageId',
      )
    const connected = await deps.messenger.connect(page)
    res.status(201).json({ ...connected, webhookUrl: deps.webhookUrl(), ...(moving ? { movedFrom: owner } : {}) })
  })

  api.use((_req, _res) => {
    throw new RequestError(404, 'not_found', 'no such API route', '')
  })
  return api
}
