import type { ServerResponse } from 'node:http'
import { DEFAULT_TOLERANCE_SECONDS, ReplayGuard, verifyPauseWebhook } from '@convotrack/core'
import { sendJsonError } from './json-error'
import { bodyAlreadyConsumed, keptRawBody, type ReceiverRequest, readRawBody } from './raw-body'

/** Default largest body accepted: 64 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024

/**
 * Remembers verified webhook ids so a captured request can't be replayed inside the tolerance
 * window. Core's in-memory `ReplayGuard` is the default; `RedisReplayGuard` from
 * `@convotrack/redis` shares the ids between instances.
 */
export interface WebhookReplayGuard {
  /** True when `id` is new (and records it); false when it was seen within the window. */
  check(id: string, timestampSec: number, toleranceSec: number): boolean | Promise<boolean>
  /** Forgets `id`, so a delivery that failed on our side can be retried with the same id. Optional. */
  forget?(id: string): void | Promise<void>
}

/** Options shared by {@link pauseReceiver} and {@link operatorMessageReceiver}. */
export interface SignedWebhookOptions {
  /**
   * The webhook secret (`whsec_…`), or several during a rotation (any one verifies). Without one,
   * unsigned calls are accepted (spec: signed "if one is provided") and a warning is logged once.
   */
  secret?: string | readonly string[] | undefined
  /** Allowed clock skew both ways, in seconds. Default 300. */
  toleranceSeconds?: number
  /** Largest body accepted, in bytes; larger ones get 413. Default 65 536. */
  maxBodyBytes?: number
  /** Where verified ids are remembered. Default: a new in-memory `ReplayGuard` per receiver. */
  replayGuard?: WebhookReplayGuard
  /** Called when the store or your callback fails (the caller gets a 5xx and may retry). Default: `logger.warn`. */
  onError?: (error: Error) => void
  /** Where the start-up warning (no secret) and default `onError` write. Default `console`. */
  logger?: Pick<Console, 'warn'>
}

/** A verified (or, without a secret, accepted) JSON body and its webhook id. */
export interface AcceptedWebhook {
  body: unknown
  /** The `webhook-id` header; undefined for unsigned calls. */
  id: string | undefined
  /** True for a verified id already processed within the window: acknowledge, change nothing. */
  duplicate: boolean
  /** Call after a failure on our side so the sender's retry (same id) is processed. */
  release(): Promise<void>
}

export interface SignedJsonReader {
  /** Checks and parses the request; on any problem answers it and resolves undefined. */
  (req: ReceiverRequest, res: ServerResponse): Promise<AcceptedWebhook | undefined>
  readonly onError: (error: Error) => void
}

/**
 * Lets a custom guard without `forget` accept one retry of an id whose processing failed on
 * our side: the id stays recorded, so only that one retry gets through. Core's `ReplayGuard`
 * and `RedisReplayGuard` have `forget` and are used as they are.
 */
function withForget(inner: WebhookReplayGuard): Required<WebhookReplayGuard> {
  if (inner.forget) return inner as Required<WebhookReplayGuard>
  const retryable = new Set<string>()
  return {
    check: (id, timestampSec, toleranceSec) => {
      if (retryable.delete(id)) return true
      return inner.check(id, timestampSec, toleranceSec)
    },
    forget: (id) => {
      if (retryable.size >= 10_000) retryable.clear()
      retryable.add(id)
    },
  }
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/

function normalizeSecrets(secret: SignedWebhookOptions['secret'], receiver: string): string[] {
  if (secret === undefined || secret === null || secret === '') return []
  const list = typeof secret === 'string' ? [secret] : secret
  if (!Array.isArray(list)) throw new TypeError(`${receiver}: secret must be a string (whsec_…) or an array of strings`)
  for (const s of list) {
    if (typeof s !== 'string' || s.length === 0 || s === 'whsec_')
      throw new TypeError(`${receiver}: every secret must be a non-empty string such as whsec_<base64 key>`)
    if (s.startsWith('whsec_') && Buffer.from(s.slice(6), 'base64').length === 0)
      throw new TypeError(`${receiver}: secret ${s.slice(0, 8)}… is not whsec_ followed by a base64 key`)
  }
  return [...list]
}

function contentTypeProblem(header: string | undefined): string | undefined {
  if (!header) return 'Content-Type must be application/json'
  const [type = '', ...params] = header.split(';')
  if (!JSON_TYPE.test(type.trim().toLowerCase())) return 'Content-Type must be application/json'
  for (const p of params) {
    const [k, v] = p.split('=')
    if (k?.trim().toLowerCase() === 'charset' && !/^"?utf-?8"?$/i.test(v?.trim() ?? ''))
      return 'the body must be UTF-8 JSON (charset=utf-8)'
  }
  return undefined
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The checks both receivers share, in order: method (405), media type (415), size (413), raw
 * bytes present (500 when mis-mounted), signature and timestamp (401, before any parsing),
 * replay, then JSON (400).
 */
export function createSignedJsonReader(options: SignedWebhookOptions, receiver: string): SignedJsonReader {
  const secrets = normalizeSecrets(options.secret, receiver)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const guard = withForget(options.replayGuard ?? new ReplayGuard())
  const logger = options.logger ?? console
  const onError =
    options.onError ??
    ((error: Error) => logger.warn(`[convotrack] ${receiver}: ${error.message} (answered 5xx so the sender retries)`))
  if (secrets.length === 0)
    logger.warn(
      `[convotrack] ${receiver}: no webhook secret configured, so unsigned requests are accepted. Set the secret the service signs with (whsec_…).`,
    )

  const read = async (req: ReceiverRequest, res: ServerResponse): Promise<AcceptedWebhook | undefined> => {
    if (req.method !== 'POST') {
      sendJsonError(res, 405, 'method_not_allowed', `${receiver} accepts POST only`, { allow: 'POST' })
      return undefined
    }
    const typeProblem = contentTypeProblem(req.headers['content-type'])
    if (typeProblem) {
      sendJsonError(res, 415, 'unsupported_media_type', typeProblem)
      return undefined
    }
    const encoding = req.headers['content-encoding']
    if (encoding && encoding.toLowerCase() !== 'identity') {
      sendJsonError(
        res,
        415,
        'unsupported_media_type',
        'Content-Encoding is not supported: send the JSON body uncompressed',
      )
      return undefined
    }
    const tooLarge = `the body is larger than ${limit} bytes`
    let raw = keptRawBody(req)
    if (raw === undefined) {
      if (bodyAlreadyConsumed(req)) {
        sendJsonError(
          res,
          500,
          'raw_body_unavailable',
          `${receiver} needs the raw request bytes to check the signature, but a body parser already read them. ` +
            'Mount the receiver before any body parser, or keep the bytes with app.use(express.json({ verify: captureRawBody })).',
        )
        return undefined
      }
      const declared = Number(req.headers['content-length'])
      if (Number.isFinite(declared) && declared > limit) {
        req.resume()
        sendJsonError(res, 413, 'body_too_large', tooLarge, { connection: 'close' })
        return undefined
      }
      const result = await readRawBody(req, limit)
      if (!result.ok) {
        if (result.reason === 'too_large') sendJsonError(res, 413, 'body_too_large', tooLarge, { connection: 'close' })
        return undefined
      }
      raw = result.body
    }
    const size = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength
    if (size > limit) {
      sendJsonError(res, 413, 'body_too_large', tooLarge)
      return undefined
    }

    let id: string | undefined
    if (secrets.length > 0) {
      let timestamp: number
      try {
        ;({ id, timestamp } = verifyPauseWebhook({
          secret: secrets,
          headers: req.headers,
          rawBody: raw,
          toleranceSeconds: tolerance,
        }))
      } catch {
        // Same answer whatever failed: never tell a caller which check it missed.
        sendJsonError(res, 401, 'invalid_signature', 'webhook signature verification failed')
        return undefined
      }
      let fresh: boolean
      try {
        fresh = await guard.check(id, timestamp, tolerance)
      } catch (error) {
        onError(error as Error)
        // The check may still land later (a command queued for a reconnect): let the retry through.
        await Promise.resolve(guard.forget(id)).catch(() => {})
        sendJsonError(res, 503, 'store_unavailable', 'could not check the webhook id for replays; retry later')
        return undefined
      }
      // A redelivery of a message already applied: acknowledge it, change nothing.
      if (!fresh) return { body: undefined, id, duplicate: true, release: async () => {} }
    }
    const release = async () => {
      if (id !== undefined) {
        try {
          await guard.forget(id)
        } catch (error) {
          onError(error as Error)
        }
      }
    }

    let body: unknown
    try {
      body = JSON.parse(typeof raw === 'string' ? raw : utf8.decode(raw))
    } catch {
      await release()
      sendJsonError(res, 400, 'invalid_json', 'the body is not valid UTF-8 JSON')
      return undefined
    }
    return { body, id, duplicate: false, release }
  }
  return Object.assign(read, { onError })
}

/** Returns a field problem (`userId` must be…) or undefined. */
export function describeFieldProblem(
  body: unknown,
  fields: Record<string, 'string' | 'boolean' | 'object?'>,
): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object'
  const o = body as Record<string, unknown>
  for (const [name, kind] of Object.entries(fields)) {
    const v = Object.hasOwn(o, name) ? o[name] : undefined
    if (kind === 'string' && (typeof v !== 'string' || v.length === 0)) return `\`${name}\` must be a non-empty string`
    if (kind === 'boolean' && typeof v !== 'boolean') return `\`${name}\` must be a boolean`
    if (kind === 'object?' && v !== undefined && (typeof v !== 'object' || v === null || Array.isArray(v)))
      return `\`${name}\` must be an object when present`
  }
  return undefined
}
