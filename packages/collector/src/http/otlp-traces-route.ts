import express, { type NextFunction, type Request, type Response, type Router } from 'express'
import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import { type AcceptedRecord, ingestMany, type StoredHook } from '../ingest/ingest'
import { validateRecord } from '../ingest/validate-record'
import type { LiveFeed } from '../live/live-feed'
import type { CollectorMetrics } from '../ops/metrics'
import {
  chatTurns,
  decodeTraceBody,
  exportAnswer,
  GRPC,
  type OtlpAnswer,
  type OtlpEncoding,
  OtlpRequestError,
  otlpEncoding,
  statusAnswer,
  turnRecords,
} from '../otlp/index'
import { WaitingSpans } from '../otlp/waiting-spans'
import type { RecordStore } from '../store/store'

/** The OTLP/HTTP traces path (the OpenTelemetry exporters' default path under their endpoint). */
export const OTLP_TRACES_PATH = '/v1/traces'

/** Default largest OTLP body, on the wire and once decompressed: 8 MiB. */
export const DEFAULT_OTLP_MAX_BYTES = 8 * 1024 * 1024

/** The record version OTLP turns are stored with: the spec's universal shape. */
const V = '11.1.0-rest'

/**
 * The bot's tracking key from `Authorization: Bearer <key>` or `x-convotrack-api-key` (what the
 * OpenTelemetry exporters can send as headers), or undefined.
 */
function apiKeyOf(req: Request): string | undefined {
  const own = req.headers['x-convotrack-api-key']
  if (typeof own === 'string' && own !== '') return own
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
  return m?.[1]
}

function send(res: Response, status: number, answer: OtlpAnswer): void {
  res.status(status).setHeader('content-type', answer.contentType)
  res.end(answer.body)
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/**
 * `POST /v1/traces`: OTLP/HTTP trace exports (`application/x-protobuf` or `application/json`,
 * gzip allowed) from an app instrumented with OpenTelemetry, authenticated by the bot's tracking
 * key (`Authorization: Bearer <apiKey>` or `x-convotrack-api-key`). Spans that describe chat
 * turns become universal records of that bot, through the same ingest path as `/track/batch`
 * (validation, idempotency, live feed); the other spans are accepted and ignored, counted in
 * the answer's `partialSuccess.errorMessage` and in `/metrics`. Failures answer an OTLP
 * `Status` in the request's encoding: 400 unreadable body, 401 key, 413 size, 415 media type,
 * 503 with `Retry-After` when the store fails (nothing of the request stored).
 *
 * @example app.use(otlpTracesRoute({ bots, store, feed, metrics, maxBytes: DEFAULT_OTLP_MAX_BYTES, maxBodyBytes }))
 */
export function otlpTracesRoute(deps: {
  bots: BotRegistry
  store: RecordStore
  feed: LiveFeed
  metrics: CollectorMetrics
  /** Largest body, compressed and decompressed. */
  maxBytes: number
  /** One record's body is held to the `/track` limit. */
  maxBodyBytes: number
  /** Told of each stored record's messages (the handoff queue). */
  onStored?: StoredHook | undefined
}): Router {
  const router = express.Router()
  // A turn's model calls and tool spans that arrived before its head (one span per export).
  const waiting = new WaitingSpans()

  const head = (req: Request, res: Response, next: NextFunction) => {
    const encoding = otlpEncoding(req.headers['content-type'])
    res.locals.otlpEncoding = encoding
    const apiKey = apiKeyOf(req)
    if (!apiKey) {
      res.locals.errorCode = 'missing_api_key'
      return send(
        res,
        401,
        statusAnswer(
          encoding,
          GRPC.UNAUTHENTICATED,
          "send the bot's tracking key as `Authorization: Bearer <apiKey>` or `x-convotrack-api-key`",
        ),
      )
    }
    const bot = deps.bots.forKey(apiKey)
    if (!bot) {
      res.locals.errorCode = 'invalid_api_key'
      return send(
        res,
        401,
        statusAnswer(encoding, GRPC.UNAUTHENTICATED, 'the API key is not the key of a registered bot'),
      )
    }
    if (!encoding) {
      res.locals.errorCode = 'unsupported_media_type'
      return send(
        res,
        415,
        statusAnswer(
          undefined,
          GRPC.INVALID_ARGUMENT,
          'send OTLP as `Content-Type: application/x-protobuf` or `application/json`',
        ),
      )
    }
    res.locals.bot = bot.name
    next()
  }

  // The body reader's own errors (too large, aborted) in OTLP's terms.
  const bodyError = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const e = err as { type?: string; status?: number }
    const encoding = res.locals.otlpEncoding as OtlpEncoding | undefined
    if (e?.type === 'entity.too.large') {
      res.locals.errorCode = 'payload_too_large'
      return send(
        res,
        413,
        statusAnswer(
          encoding,
          GRPC.INVALID_ARGUMENT,
          `the body is larger than ${deps.maxBytes} bytes; export fewer spans per request`,
        ),
      )
    }
    if (e?.type === 'encoding.unsupported') {
      res.locals.errorCode = 'unsupported_media_type'
      return send(
        res,
        415,
        statusAnswer(encoding, GRPC.INVALID_ARGUMENT, 'Content-Encoding must be gzip, deflate or none'),
      )
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      res.locals.errorCode = 'invalid_request'
      return send(
        res,
        400,
        statusAnswer(encoding, GRPC.INVALID_ARGUMENT, 'the body could not be read (a broken gzip stream?)'),
      )
    }
    next(err)
  }

  router.post(
    OTLP_TRACES_PATH,
    head,
    // gzip / deflate are decompressed by the reader; `limit` bounds the decompressed bytes.
    express.raw({ type: () => true, limit: deps.maxBytes }),
    bodyError,
    async (req: Request, res: Response) => {
      const encoding = res.locals.otlpEncoding as OtlpEncoding
      const bot = res.locals.bot as string
      let spans: ReturnType<typeof decodeTraceBody>
      try {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
        spans = decodeTraceBody(raw, encoding)
      } catch (e) {
        if (!(e instanceof OtlpRequestError)) throw e
        res.locals.errorCode = 'invalid_json'
        return send(res, e.status, statusAnswer(encoding, GRPC.INVALID_ARGUMENT, e.message))
      }

      const all = waiting.join(bot, spans.spans)
      const found = chatTurns(all)
      const { turns } = found
      // Spans waiting for their parent are not ignored (yet): they join its export.
      const ignored = found.ignored - waiting.keep(bot, all, found.unused)
      const accepted: AcceptedRecord[] = []
      /** The turn (index) of each accepted record. */
      const turnOf: number[] = []
      let refusedTurns = 0
      let refusal = ''
      for (const [t, turn] of turns.entries()) {
        const records: AcceptedRecord[] = []
        try {
          for (const r of turnRecords(turn)) {
            const raw = JSON.stringify(r.body)
            if (Buffer.byteLength(raw) > deps.maxBodyBytes)
              throw new RequestError(
                413,
                'payload_too_large',
                `a message is larger than maxBodyBytes (${deps.maxBodyBytes})`,
                '',
              )
            validateRecord('universal', r.type, r.body, V)
            records.push({
              bot,
              platform: 'universal',
              type: r.type,
              v: V,
              raw,
              body: r.body,
              idempotencyKey: r.idempotencyKey,
            })
          }
          accepted.push(...records)
          for (const _ of records) turnOf.push(t)
        } catch (e) {
          if (!(e instanceof RequestError)) throw e
          refusedTurns++
          refusal ||= `trace ${turn.traceId} span ${turn.spanId}: ${e.message}`
        }
      }

      let stored: Awaited<ReturnType<typeof ingestMany>>
      try {
        stored = await ingestMany(deps.store, deps.feed, accepted, {
          where: (i) => `OTLP message ${i}`,
          onStored: deps.onStored,
        })
      } catch (e) {
        console.error('[convotrack-collector] store failed; OTLP export answered 503', (e as Error)?.message ?? e)
        // The exporter retries this export: the spans that joined it wait for it again.
        waiting.keep(bot, [], all.slice(spans.spans.length))
        res.locals.errorCode = 'store_unavailable'
        res.setHeader('retry-after', '1')
        return send(
          res,
          503,
          statusAnswer(
            encoding,
            GRPC.UNAVAILABLE,
            'the record store is unavailable; nothing of this export was stored, retry it',
          ),
        )
      }
      // A message the store refused for itself (a value it cannot keep) rejects its turn alone. A
      // key already used for another version of the message is not a refusal: the same message
      // of the same trace, described by another span of the turn (an agent span after its model
      // span, in a later export), was stored first.
      const refusedBy = new Set<number>()
      for (const [i, s] of stored.entries())
        if (s instanceof RequestError && s.code !== 'idempotency_key_reused') {
          refusal ||= s.message
          refusedBy.add(turnOf[i] as number)
        }
      refusedTurns += refusedBy.size
      const rejected = spans.invalid + refusedTurns
      deps.metrics.otlpSpans.inc({ outcome: 'turn' }, turns.length - refusedTurns)
      if (ignored > 0) deps.metrics.otlpSpans.inc({ outcome: 'ignored' }, ignored)
      if (rejected > 0) deps.metrics.otlpSpans.inc({ outcome: 'rejected' }, rejected)
      res.locals.accepted = stored.filter((s) => !(s instanceof RequestError) && !s.duplicate).length

      const notes: string[] = []
      if (ignored > 0)
        notes.push(
          `${plural(ignored, 'span is', 'spans are')} not part of a chat turn and ${ignored === 1 ? 'was' : 'were'} ignored`,
        )
      if (spans.invalid > 0)
        notes.push(
          `${plural(spans.invalid, 'span was', 'spans were')} rejected: a trace id must be 16 bytes and a span id 8`,
        )
      if (refusedTurns > 0)
        notes.push(`${plural(refusedTurns, 'chat turn was', 'chat turns were')} rejected (${refusal})`)
      send(res, 200, exportAnswer(encoding, rejected, notes.join('; ')))
    },
  )
  return router
}
