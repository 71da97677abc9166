import express, { type NextFunction, type Request, type Response, type Router } from 'express'
import type { BotRegistry } from '../access/bot-registry'
import { type CollectorErrorCode, RequestError } from '../errors'
import { type AcceptedRecord, ingestMany, type StoredHook } from '../ingest/ingest'
import { pacer } from '../ingest/take-turns'
import { parseTrackQuery, validateRecord } from '../ingest/validate-record'
import type { LiveFeed } from '../live/live-feed'
import type { RecordStore } from '../store/store'
import { batchBodySpans } from './batch-body-spans'
import { checkIdempotencyKey } from './idempotency-key'
import { answerStoreFailure } from './store-failure'
import { checkTrackHead, requireApiKey } from './track-head'

/** The batch limits a collector enforces and advertises. */
export interface BatchLimits {
  /** Most records in one batch. */
  maxRecords: number
  /** Largest batch body, in bytes. */
  maxBytes: number
}

/** Default limits: 500 records, 4 MiB. */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxRecords: 500, maxBytes: 4 * 1024 * 1024 }

/** The response header by which `/track` answers advertise `POST {baseUrl}/track/batch`. */
export const BATCH_HEADER = 'Convotrack-Batch'

/**
 * The value of the {@link BATCH_HEADER} header.
 *
 * @example batchAdvertisement({ maxRecords: 500, maxBytes: 4194304 }) // 'max-records=500, max-bytes=4194304'
 */
export function batchAdvertisement(limits: BatchLimits): string {
  return `max-records=${limits.maxRecords}, max-bytes=${limits.maxBytes}`
}

/** One entry of a batch answer's `results`, in input order. */
export type BatchResult =
  | { index: number; status: 'accepted' | 'duplicate'; id: number }
  | { index: number; status: 'refused'; error: { code: CollectorErrorCode; message: string; path: string } }

/** The 200 answer of `POST /track/batch`. `accepted` counts duplicates too (both are stored). */
export interface BatchAnswer {
  accepted: number
  refused: number
  results: BatchResult[]
}

type Obj = Record<string, unknown>

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

function tooLarge(limits: BatchLimits, got: string): RequestError {
  return new RequestError(
    413,
    'payload_too_large',
    `a batch holds at most ${limits.maxRecords} records and ${limits.maxBytes} bytes (${got}); send fewer records per batch`,
    '',
  )
}

/**
 * `POST /track/batch?apiKey=KEY`: `{ "records": [{ platform, type, v, idempotencyKey?, body }] }`,
 * many records of one bot. Envelope checks (key 401, media type 415, size 413, JSON 400
 * `invalid_json`, shape 400 `invalid_batch`) refuse the whole batch; then every record is
 * validated exactly as `POST /track` validates it and the answer is 200 with one result per
 * record, in order. Accepted records are stored in ONE store transaction, in array order; a
 * repeated (bot, idempotencyKey) is answered `duplicate` with the stored id and stored once.
 * A store failure is 503 with `Retry-After` (nothing of the batch stored).
 *
 * @example app.use(trackBatchRoute({ bots, store, feed, maxBodyBytes: 1 << 20, limits: DEFAULT_BATCH_LIMITS }))
 */
export function trackBatchRoute(deps: {
  bots: BotRegistry
  store: RecordStore
  feed: LiveFeed
  /** Told of what each record stored (the handoff queue); never awaited. */
  onStored?: StoredHook
  /** A record's body is held to the `/track` limit. */
  maxBodyBytes: number
  limits: BatchLimits
}): Router {
  const { limits } = deps
  const advertisement = batchAdvertisement(limits)
  const router = express.Router()

  const checkHead = (req: Request, res: Response, next: NextFunction) => {
    res.setHeader(BATCH_HEADER, advertisement)
    const apiKey = requireApiKey(new URL(req.originalUrl, 'http://collector').searchParams.get('apiKey'))
    const bot = checkTrackHead(deps.bots, apiKey, req.headers['content-type'], 'batch')
    res.locals.bot = bot.name
    res.locals.apiKey = apiKey
    next()
  }

  // The size error of the body reader, stated with the batch limits.
  const sizeError = (err: unknown, _req: Request, _res: Response, next: NextFunction) => {
    const e = err as { type?: string; length?: number }
    next(e?.type === 'entity.too.large' ? tooLarge(limits, `this body has ${e.length ?? 'more'} bytes`) : err)
  }

  router.post(
    '/track/batch',
    checkHead,
    express.raw({ type: () => true, limit: limits.maxBytes }),
    sizeError,
    async (req: Request, res: Response) => {
      const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : ''
      let envelope: unknown
      try {
        envelope = JSON.parse(text)
      } catch {
        throw new RequestError(400, 'invalid_json', 'the body is not valid JSON', '')
      }
      if (!isObj(envelope) || !Array.isArray(envelope.records))
        throw new RequestError(
          400,
          'invalid_batch',
          'the body must be `{ "records": [ { "platform", "type", "v", "idempotencyKey"?, "body" }, … ] }`',
          'records',
        )
      const records = envelope.records as unknown[]
      if (records.length === 0)
        throw new RequestError(400, 'invalid_batch', '`records` must hold at least one record', 'records')
      if (records.length > limits.maxRecords) throw tooLarge(limits, `this one has ${records.length} records`)

      let spans: ReturnType<typeof batchBodySpans>
      try {
        spans = batchBodySpans(text)
      } catch {
        spans = undefined
      }
      if (spans?.length !== records.length) spans = undefined

      // What `POST /track` answers for this body.
      const checkSize = (raw: string) => {
        if (raw.length * 3 > deps.maxBodyBytes && Buffer.byteLength(raw) > deps.maxBodyBytes)
          throw new RequestError(
            413,
            'payload_too_large',
            `the body is larger than the collector accepts (maxBodyBytes: ${deps.maxBodyBytes} bytes)`,
            '',
          )
      }
      const bot = res.locals.bot as string
      const apiKey = res.locals.apiKey as string
      // A big batch is checked a quarter megabyte at a time, other requests answered in between.
      const pace = pacer()
      await pace(text.length)
      const results: BatchResult[] = new Array(records.length)
      const accepted: AcceptedRecord[] = []
      const acceptedIndex: number[] = []
      for (let index = 0; index < records.length; index++) {
        const item = records[index]
        try {
          if (!isObj(item))
            throw new RequestError(
              400,
              'invalid_field',
              `\`records[${index}]\` must be an object { platform, type, v, idempotencyKey?, body }`,
              '',
            )
          // The same checks, messages and order as `POST /track`: query values, key, size, shape.
          const query = new URLSearchParams({ apiKey })
          for (const name of ['platform', 'type', 'v'] as const)
            if (typeof item[name] === 'string') query.set(name, item[name] as string)
          const { platform, type, v } = parseTrackQuery(query)
          const idempotencyKey = checkIdempotencyKey(item.idempotencyKey, 'idempotencyKey')
          const span = spans?.[index]
          const sent = span ? text.slice(span[0], span[1]) : undefined
          if (sent !== undefined) checkSize(sent)
          validateRecord(platform, type, item.body, v)
          // Without its span (a batch `batchBodySpans` could not map), the body as parsed: after
          // validation, which bounds its nesting, so serialising it cannot fail.
          const raw = sent ?? JSON.stringify(item.body ?? null)
          if (sent === undefined) checkSize(raw)
          accepted.push({ bot, platform, type, v, raw, body: item.body as Obj, idempotencyKey })
          acceptedIndex.push(index)
        } catch (e) {
          if (!(e instanceof RequestError)) throw e
          results[index] = { index, status: 'refused', error: e.toJSON().error }
        }
        const span = spans?.[index]
        await pace(span ? span[1] - span[0] : 1024)
      }

      let stored: Awaited<ReturnType<typeof ingestMany>>
      try {
        stored = await ingestMany(deps.store, deps.feed, accepted, {
          where: (i) => `batch record ${acceptedIndex[i]}`,
          onStored: deps.onStored,
        })
      } catch (e) {
        answerStoreFailure(
          res,
          e,
          'batch',
          'the record store is unavailable; nothing of this batch was stored, retry it',
        )
        return
      }
      let storedCount = 0
      for (const [i, result] of stored.entries()) {
        const index = acceptedIndex[i] as number
        if (result instanceof RequestError) {
          results[index] = { index, status: 'refused', error: result.toJSON().error }
          continue
        }
        storedCount++
        results[index] = { index, status: result.duplicate ? 'duplicate' : 'accepted', id: result.id }
      }
      const answer: BatchAnswer = { accepted: storedCount, refused: records.length - storedCount, results }
      res.status(200).json(answer)
    },
  )
  return router
}
