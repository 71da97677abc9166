import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import express, { type Request, type Router } from 'express'
import type { Logger } from 'pino'
import { scopeOf } from '../access/auth'
import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import { intParam } from '../http/query-params'
import type { LiveFeed } from '../live/live-feed'
import type { RecordStore } from '../store/store'

const requiredQuery = (req: Request, name: string): string => {
  const v = req.query[name]
  if (typeof v !== 'string' || v === '')
    throw new RequestError(400, 'invalid_request', `query \`${name}\` is required`, name)
  return v
}

/**
 * Erases one end user of one bot and tells open dashboards to drop what they show of them.
 *
 * @example const { removed } = await eraseUser(store, feed, 'shop', 'u-42')
 */
export async function eraseUser(
  store: RecordStore,
  feed: LiveFeed,
  bot: string,
  userId: string,
): Promise<{ removed: number; messages: number }> {
  const result = await store.eraseUser(bot, userId)
  feed.publish('erase', { bot, userId, threads: result.threads }, bot)
  return { removed: result.removed, messages: result.messages }
}

/**
 * Data lifecycle routes: `DELETE /api/users/:userId?bot=` (erasure, `{ removed, messages }`),
 * `GET /api/export?bot=&user=` (one user's records as NDJSON, streamed page by page) and
 * `GET /api/audit` (the audit log, newest first, the caller's bots only). Access is checked
 * by the gate (`access-rules.ts`).
 *
 * @example app.use('/api', lifecycleApi({ store, feed, bots }))
 */
export function lifecycleApi(deps: { store: RecordStore; feed: LiveFeed; bots: BotRegistry }): Router {
  const api = express.Router()
  api.delete('/users/:userId', async (req, res) => {
    // A bot no longer registered may still hold records: erasure works on it too.
    const bot = requiredQuery(req, 'bot')
    res.json(await eraseUser(deps.store, deps.feed, bot, req.params.userId as string))
  })
  api.get('/export', async (req, res) => {
    const bot = requiredQuery(req, 'bot')
    const user = requiredQuery(req, 'user')
    res.setHeader('content-type', 'application/x-ndjson; charset=utf-8')
    res.setHeader('content-disposition', `attachment; filename="convotrack-${encodeURIComponent(bot)}-export.ndjson"`)
    const store = deps.store
    async function* lines() {
      for await (const r of store.exportUser(bot, user)) {
        let raw: unknown = r.raw
        try {
          raw = JSON.parse(r.raw)
        } catch {}
        yield `${JSON.stringify({ id: r.id, bot: r.bot, platform: r.platform, type: r.type, v: r.v, receivedAt: r.receivedAt, raw })}\n`
      }
      // Operators' notes about the user's conversations: one line each, `type: 'note'`.
      for (const n of await store.userNotes(bot, user))
        yield `${JSON.stringify({ type: 'note', id: n.id, bot: n.bot, thread: n.thread, author: n.author, text: n.text, ts: n.ts })}\n`
    }
    // pipeline: the store is read only as fast as the client takes the lines (bounded memory).
    await pipeline(Readable.from(lines(), { highWaterMark: 16 }), res).catch((e) => {
      if (!res.headersSent) throw e
      res.destroy()
    })
  })
  api.get('/audit', async (req, res) => {
    const bot = typeof req.query.bot === 'string' && req.query.bot !== '' ? req.query.bot : undefined
    const scope = scopeOf(res)
    const bots = bot !== undefined ? [bot] : scope
    // A `limit` or `beforeId` that is not a number is a 400, as on every other list route.
    const limit = intParam(req, 'limit') ?? 200
    const beforeId = intParam(req, 'beforeId')
    res.json(
      await deps.store.audit({
        ...(bots ? { bots } : {}),
        limit,
        ...(beforeId !== undefined ? { beforeId } : {}),
      }),
    )
  })
  return api
}

/**
 * Retention: every `intervalMs` (and once at start) deletes records older than each bot's
 * `retainDays` (or the global one), a few hundred at a time with a turn of the event loop
 * between steps, so ingest never waits long for it.
 *
 * @example const sweeper = startRetention({ store, bots, retainDays: 30, intervalMs: 3_600_000, feed, log })
 */
export function startRetention(deps: {
  store: RecordStore
  feed: LiveFeed
  retainDays: number | undefined
  perBot: () => Array<{ name: string; retainDays?: number }>
  intervalMs: number
  log: Logger
  now?: () => number
}): { sweep(): Promise<number>; stop(): Promise<void> } {
  const STEP = 500
  let running: Promise<number> | undefined
  let stopped = false
  const now = deps.now ?? Date.now
  const drain = async (opts: { before: number; bot?: string; exceptBots?: string[] }) => {
    let total = 0
    while (!stopped) {
      const n = await deps.store.deleteOlderThan({ ...opts, limit: STEP })
      total += n
      if (n < STEP) break
      await new Promise((r) => setImmediate(r))
    }
    return total
  }
  const sweepOnce = async () => {
    let total = 0
    const own = deps.perBot().filter((b) => typeof b.retainDays === 'number' && b.retainDays > 0)
    for (const b of own) {
      const before = now() - (b.retainDays as number) * 86_400_000
      const n = await drain({ before, bot: b.name })
      if (n) deps.feed.publish('expire', { bot: b.name, before }, b.name)
      total += n
    }
    if (deps.retainDays !== undefined && deps.retainDays > 0) {
      const before = now() - deps.retainDays * 86_400_000
      const n = await drain({ before, exceptBots: own.map((b) => b.name) })
      if (n)
        for (const b of deps.perBot())
          if (!own.includes(b)) deps.feed.publish('expire', { bot: b.name, before }, b.name)
      total += n
    }
    if (total) deps.log.info({ removed: total }, 'retention sweep')
    return total
  }
  const sweep = () => {
    running ??= sweepOnce()
      .catch((e) => {
        deps.log.error({ err: e }, 'retention sweep failed')
        return 0
      })
      .finally(() => {
        running = undefined
      })
    return running
  }
  // Always ticking (bots added later may have a retainDays); a sweep with nothing to do is a no-op.
  const timer = setInterval(() => void sweep(), deps.intervalMs)
  timer.unref()
  if (deps.retainDays !== undefined || deps.perBot().some((b) => b.retainDays !== undefined))
    setImmediate(() => {
      if (!stopped) void sweep()
    })
  return {
    sweep,
    stop: async () => {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
