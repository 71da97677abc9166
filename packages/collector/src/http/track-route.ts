import express, { type NextFunction, type Request, type Response, type Router } from 'express'
import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import { ingest, type StoredHook } from '../ingest/ingest'
import { parseTrackQuery, type TrackQuery, validateRecord } from '../ingest/validate-record'
import type { LiveFeed } from '../live/live-feed'
import type { RecordStore } from '../store/store'
import { checkIdempotencyKey } from './idempotency-key'
import { answerStoreFailure } from './store-failure'
import { checkTrackHead } from './track-head'

export { isJsonContentType } from './track-head'

/**
 * `POST /track` (spec 4.1): query, key, media type, `Idempotency-Key`, size, JSON, shape — in
 * that order, each failure a 4xx `{ error: { code, message, path } }`. Accepted records answer
 * 201 `{ id }`; a repeated (bot, `Idempotency-Key`) answers 201 `{ id, duplicate: true }` with
 * the stored id and stores nothing. Every 2xx/4xx answer carries `advertise` (the
 * `Convotrack-Batch` header) when given.
 *
 * @example app.use(trackRoute({ bots, store, feed, maxBodyBytes: 1 << 20, advertise: 'max-records=500, max-bytes=4194304' }))
 */
export function trackRoute(deps: {
  bots: BotRegistry
  store: RecordStore
  feed: LiveFeed
  /** Told of what each record stored (the handoff queue); never awaited. */
  onStored?: StoredHook
  maxBodyBytes: number
  /** Value of the `Convotrack-Batch` header (batch endpoint limits); none when omitted. */
  advertise?: string
}): Router {
  const router = express.Router()
  const checkHead = (req: Request, res: Response, next: NextFunction) => {
    if (deps.advertise) res.setHeader('Convotrack-Batch', deps.advertise)
    const query = parseTrackQuery(new URL(req.originalUrl, 'http://collector').searchParams)
    const bot = checkTrackHead(deps.bots, query.apiKey, req.headers['content-type'], 'record')
    res.locals.idempotencyKey = checkIdempotencyKey(req.headers['idempotency-key'], 'idempotency-key')
    res.locals.query = query
    res.locals.bot = bot.name
    next()
  }
  router.post(
    '/track',
    checkHead,
    express.raw({ type: () => true, limit: deps.maxBodyBytes }),
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const query = res.locals.query as TrackQuery
        const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : ''
        let body: unknown
        try {
          body = JSON.parse(raw)
        } catch {
          throw new RequestError(400, 'invalid_json', 'the body is not valid JSON', '')
        }
        validateRecord(query.platform, query.type, body, query.v)
        let stored: { id: number; duplicate: boolean }
        try {
          stored = await ingest(
            deps.store,
            deps.feed,
            {
              bot: res.locals.bot as string,
              platform: query.platform,
              type: query.type,
              v: query.v,
              raw,
              body: body as Record<string, unknown>,
              idempotencyKey: res.locals.idempotencyKey as string | undefined,
            },
            deps.onStored,
          )
        } catch (e) {
          // A refusal of this record (422, 409) is answered as such; anything else: the store is down.
          if (e instanceof RequestError) throw e
          answerStoreFailure(res, e, 'record', 'the record store is unavailable; retry the record')
          return
        }
        const { id, duplicate } = stored
        res.status(201).json(duplicate ? { id, duplicate: true } : { id })
      } catch (e) {
        next(e)
      }
    },
  )
  return router
}
