import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import { SignatureError } from './errors'

/**
 * Pause-webhook signatures, the Standard Webhooks scheme: headers `webhook-id`,
 * `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`; secrets are `whsec_<base64 key>`. Framework-free: the Express
 * receiver, the collector and users' own tests all use these.
 */

/** Default tolerance between the signed timestamp and now, both ways: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** A signature must be plain base64: Buffer's decoder would otherwise skip junk characters. */
const STRICT_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** Header names of the scheme. */
export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const

function secretKey(secret: string): Buffer {
  if (typeof secret !== 'string' || secret.length === 0)
    throw new TypeError('webhook secret must be a non-empty string (whsec_…)')
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8')
}

function toBuffer(body: string | Uint8Array): Buffer {
  return typeof body === 'string'
    ? Buffer.from(body, 'utf8')
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
}

function hmac(key: Buffer, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest()
}

/** A new random secret in the scheme's `whsec_` form. */
export function generateWebhookSecret(): string {
  return `whsec_${Buffer.from(randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, ''), 'hex').toString('base64')}`
}

/** What {@link signPauseWebhook} takes. */
export interface SignOptions {
  /** One secret, or several (rotation): one signature each, space-separated. */
  secret: string | readonly string[]
  /** The exact bytes to send. */
  body: string | Uint8Array
  /** Message id; random when omitted. */
  id?: string
  /** Unix seconds; now when omitted. */
  timestamp?: number
}

/**
 * Signs a webhook body. Send the returned headers with exactly these body bytes.
 *
 * @example
 * const body = JSON.stringify({ userId: 'u1', paused: true })
 * await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signPauseWebhook({ secret, body }) } })
 */
export function signPauseWebhook(options: SignOptions): Record<string, string> {
  const id = options.id ?? `msg_${randomUUID()}`
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000))
  const body = toBuffer(options.body)
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret
  const signature = secrets.map((s) => `v1,${hmac(secretKey(s), id, timestamp, body).toString('base64')}`).join(' ')
  return { [WEBHOOK_HEADERS.id]: id, [WEBHOOK_HEADERS.timestamp]: timestamp, [WEBHOOK_HEADERS.signature]: signature }
}

/** What {@link verifyPauseWebhook} takes. */
export interface VerifyOptions {
  /** Every secret accepted (rotation). */
  secret: string | readonly string[]
  /** The request headers (any casing; Node's lower-cased `IncomingHttpHeaders` or a Fetch `Headers`). */
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null }
  /** The raw body bytes as received — never a re-serialized body. */
  rawBody: string | Uint8Array
  /** Seconds of allowed clock skew both ways (default 300). */
  toleranceSeconds?: number
  /** Clock in ms, injectable for tests. */
  now?: number
  /** Rejects a message id seen before within the tolerance window. */
  replayGuard?: ReplayGuard
}

/** The verified message: its id and timestamp. */
export interface VerifiedWebhook {
  id: string
  timestamp: number
}

function header(headers: VerifyOptions['headers'], name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(n: string): string | null }).get(name) ?? undefined
  const h = headers as Record<string, string | string[] | undefined>
  const v = h[name] ?? h[name.toLowerCase()] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1]
  return Array.isArray(v) ? v[0] : v
}

/**
 * Verifies a signed webhook on its raw bytes, comparing in constant time. Throws
 * {@link SignatureError} (code `invalid_signature`, or `replayed` for a repeated id) without
 * saying which check failed.
 *
 * @example
 * verifyPauseWebhook({ secret: process.env.CONVOTRACK_WEBHOOK_SECRET!, headers: req.headers, rawBody })
 */
export function verifyPauseWebhook(options: VerifyOptions): VerifiedWebhook {
  const id = header(options.headers, WEBHOOK_HEADERS.id)
  const ts = header(options.headers, WEBHOOK_HEADERS.timestamp)
  const sigHeader = header(options.headers, WEBHOOK_HEADERS.signature)
  if (!id || !ts || !sigHeader || id.length > 256 || sigHeader.length > 4096) throw new SignatureError()
  if (!/^\d{1,12}$/.test(ts)) throw new SignatureError()
  const timestamp = Number(ts)
  const nowSec = Math.floor((options.now ?? Date.now()) / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (Math.abs(nowSec - timestamp) > tolerance) throw new SignatureError()
  const body = toBuffer(options.rawBody)
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret
  if (secrets.length === 0) throw new SignatureError()
  const expected = secrets.map((s) => hmac(secretKey(s), id, ts, body))
  const given = sigHeader
    .split(' ')
    .filter((part) => part.startsWith('v1,') && STRICT_BASE64.test(part.slice(3)))
    .map((part) => Buffer.from(part.slice(3), 'base64'))
  let ok = false
  // Compare every pair: no early exit, so timing doesn't tell which secret or signature matched.
  for (const e of expected) for (const g of given) if (g.length === e.length && timingSafeEqual(g, e)) ok = true
  if (!ok) throw new SignatureError()
  if (options.replayGuard && !options.replayGuard.check(id, timestamp, tolerance))
    throw new SignatureError('webhook id already seen', 'replayed')
  return { id, timestamp }
}

/**
 * Remembers message ids seen within the tolerance window, so a captured webhook can't be
 * replayed. In memory, bounded; entries expire after the window.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>()
  constructor(private readonly maxEntries = 100_000) {}

  /** True when `id` is new (and records it); false when seen within the window. */
  check(id: string, timestampSec: number, toleranceSec: number, nowMs = Date.now()): boolean {
    const expires = (timestampSec + toleranceSec) * 1000
    const prev = this.seen.get(id)
    if (prev !== undefined && prev > nowMs) return false
    if (this.seen.size >= this.maxEntries) this.sweep(nowMs)
    if (this.seen.size >= this.maxEntries) this.seen.delete(this.seen.keys().next().value as string)
    this.seen.set(id, expires)
    return true
  }

  /** Forgets an id, so the sender's retry of a delivery that failed on our side is accepted. */
  forget(id: string): void {
    this.seen.delete(id)
  }

  private sweep(nowMs: number): void {
    for (const [k, exp] of this.seen) if (exp <= nowMs) this.seen.delete(k)
  }
}
