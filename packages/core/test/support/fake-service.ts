/**
 * A local tracking service for delivery tests: node:http on 127.0.0.1, port 0. It speaks the
 * spec's `POST /track` and, when `batch` is on, the batch protocol (`Convotrack-Batch` discovery
 * header, `POST /track/batch`, per-record results, idempotency keys stored once). Faults are
 * switched on per test: latency, a token bucket, random 429s, 503 + Retry-After, lost answers,
 * never answering, refusing connections. Real sockets: the tracker is not mocked.
 */
import http from 'node:http'
import type { Socket } from 'node:net'
import { listenOn, listenOnStablePort } from '../../../../test/support/stable-port'
import { type Clock, realClock } from '../../src/clock'

export interface StoredRecord {
  platform: string
  type: string
  v: string
  key: string | undefined
  body: Record<string, unknown>
  raw: string
}

export interface FakeOptions {
  /** Advertise and serve batches. */
  batch?: boolean
  maxRecords?: number
  maxBytes?: number
  /** `/track/batch` answers 404 (an older service that advertises by mistake). */
  batchNotFound?: boolean
}

export interface Faults {
  latencyMs?: number
  /** Token bucket: this many requests per second (burst = one second's worth), 429 + Retry-After beyond. */
  bucketPerSec?: number
  /** Probability of 429 + Retry-After. */
  random429?: number
  retryAfterSec?: number
  /** Every request: 503 + Retry-After. */
  unavailable?: boolean
  /**
   * Per request, from its raw body: a number of ms after which it is answered 503 + Retry-After
   * (one instance that is unavailable), or undefined to serve it as usual.
   */
  unavailableIf?: (raw: string) => number | undefined
  /** Never answer (requests hang until the client gives up). */
  silent?: boolean
  /** Store the request's records, then destroy the socket without answering (this many times). */
  loseAnswers?: number
  /**
   * Per request, from its raw body: a number of ms after which its socket is destroyed, with
   * nothing stored and no answer (a reset); undefined to serve it as usual.
   */
  hangUp?: (raw: string) => number | Promise<unknown> | undefined
}

export interface FakeService {
  url: string
  stored: StoredRecord[]
  /** Requests by path (`/track`, `/track/batch`). */
  requests: { track: number; batch: number; limited: number }
  /** Most requests in flight at once, and now. */
  maxInFlight: number
  inFlight: number
  /**
   * Requests read in full whose answer (or reset) the service is holding back on purpose
   * (latency, silence, a delayed 503 or reset): with a driven clock, the world is
   * quiet when every request the tracker has out is one of these.
   */
  held: number
  /** Records per batch request. */
  batchSizes: number[]
  /** Every answer: when it left (the service's clock), its status, and the request's raw body. */
  answers: Array<{ at: number; status: number; raw: string }>
  /** Connections accepted in all, and most open at once. */
  connections: number
  maxSockets: number
  faults: Faults
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
}

function validate(
  platform: string,
  body: Record<string, unknown>,
): { code: string; message: string; path: string } | undefined {
  if (platform === 'universal' || platform === 'sms' || platform === 'generic') {
    if (typeof body.text !== 'string') return { code: 'missing_field', message: '`text` is required', path: 'text' }
    if (typeof body.userId !== 'string' || body.userId === '')
      return { code: 'missing_field', message: '`userId` is required', path: 'userId' }
  }
  return undefined
}

/** `clock`: the service's time (latency, delays, the token bucket, `answers[].at`), a driven one in some tests. */
export async function startFakeService(
  options: FakeOptions = {},
  faults: Faults = {},
  clock: Pick<Clock, 'now' | 'setTimeout'> = realClock,
): Promise<FakeService> {
  const maxRecords = options.maxRecords ?? 500
  const maxBytes = options.maxBytes ?? 4_194_304
  const byKey = new Map<string, number>()
  const sockets = new Set<Socket>()
  let tokens = 0
  let refilled = clock.now()
  const svc: FakeService = {
    url: '',
    stored: [],
    requests: { track: 0, batch: 0, limited: 0 },
    maxInFlight: 0,
    connections: 0,
    maxSockets: 0,
    inFlight: 0,
    held: 0,
    batchSizes: [],
    answers: [],
    faults,
    down: async () => {
      await new Promise<void>((r) => server.close(() => r()))
      for (const s of sockets) s.destroy()
    },
    up: () => listenOn(server, port),
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
  const store = (
    platform: string,
    type: string,
    v: string,
    key: string | undefined,
    body: Record<string, unknown>,
    raw: string,
  ) => {
    if (key !== undefined) {
      const seen = byKey.get(key)
      if (seen !== undefined) return { duplicate: true, id: seen }
    }
    svc.stored.push({ platform, type, v, key, body, raw })
    const id = svc.stored.length
    if (key !== undefined) byKey.set(key, id)
    return { duplicate: false, id }
  }
  const limited = (): boolean => {
    const f = svc.faults
    if (f.random429 && Math.random() < f.random429) return true
    if (f.bucketPerSec) {
      const now = clock.now()
      tokens = Math.min(f.bucketPerSec, tokens + ((now - refilled) * f.bucketPerSec) / 1000)
      refilled = now
      if (tokens < 1) return true
      tokens--
    }
    return false
  }
  const server = http.createServer((req, res) => {
    svc.inFlight++
    svc.maxInFlight = Math.max(svc.maxInFlight, svc.inFlight)
    res.on('close', () => svc.inFlight--)
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    // Counted in `held` from now until the returned release runs or the socket closes, once.
    const hold = (): (() => void) => {
      svc.held++
      let counted = true
      const release = () => {
        if (counted) svc.held--
        counted = false
      }
      res.on('close', release)
      return release
    }
    req.on('end', () => {
      const f = svc.faults
      if (f.silent) {
        hold()
        return
      }
      const unavailableMs = f.unavailableIf?.(Buffer.concat(chunks).toString('utf8'))
      if (unavailableMs !== undefined) {
        const release = hold()
        clock.setTimeout(() => {
          release()
          svc.answers.push({ at: clock.now(), status: 503, raw: Buffer.concat(chunks).toString('utf8') })
          res.writeHead(503, { 'content-type': 'application/json', 'retry-after': String(f.retryAfterSec ?? 1) })
          res.end('{"error":{"code":"unavailable"}}')
        }, unavailableMs)
        return
      }
      const hangUp = f.hangUp?.(Buffer.concat(chunks).toString('utf8'))
      if (typeof hangUp === 'number') {
        const release = hold()
        clock.setTimeout(() => {
          release()
          req.socket.destroy()
        }, hangUp)
        return
      }
      if (hangUp !== undefined) {
        const release = hold()
        void hangUp.then(() => {
          release()
          req.socket.destroy()
        })
        return
      }
      const answer = () => {
        const url = new URL(req.url ?? '/', 'http://x')
        const advertise: Record<string, string> = options.batch
          ? { 'convotrack-batch': `max-records=${maxRecords}, max-bytes=${maxBytes}` }
          : {}
        const raw = Buffer.concat(chunks).toString('utf8')
        const send = (status: number, json: unknown, extra: Record<string, string> = {}) => {
          svc.answers.push({ at: clock.now(), status, raw })
          res.writeHead(status, { 'content-type': 'application/json', ...extra })
          res.end(JSON.stringify(json))
        }
        if (url.pathname.endsWith('/track/batch')) svc.requests.batch++
        else svc.requests.track++
        if (f.unavailable)
          return send(503, { error: { code: 'unavailable' } }, { 'retry-after': String(f.retryAfterSec ?? 1) })
        if (limited()) {
          svc.requests.limited++
          return send(
            429,
            { error: { code: 'rate_limited' } },
            { 'retry-after': String(f.retryAfterSec ?? 1), ...advertise },
          )
        }
        const lose = () => {
          if (!f.loseAnswers) return false
          f.loseAnswers--
          req.socket.destroy()
          return true
        }
        if (url.pathname.endsWith('/track/batch')) {
          if (!options.batch || options.batchNotFound) return send(404, { error: { code: 'not_found' } })
          const parsed = JSON.parse(raw) as {
            records: Array<{
              platform: string
              type: string
              v: string
              idempotencyKey?: string
              body: Record<string, unknown>
            }>
          }
          if (parsed.records.length > maxRecords || Buffer.byteLength(raw) > maxBytes)
            return send(413, {
              error: { code: 'payload_too_large', message: `at most ${maxRecords} records and ${maxBytes} bytes` },
            })
          svc.batchSizes.push(parsed.records.length)
          let accepted = 0
          let refused = 0
          const results = parsed.records.map((r, index) => {
            const error = validate(r.platform, r.body)
            if (error) {
              refused++
              return { index, status: 'refused', error }
            }
            accepted++
            const s = store(r.platform, r.type, r.v, r.idempotencyKey, r.body, JSON.stringify(r.body))
            return { index, status: s.duplicate ? 'duplicate' : 'accepted', id: s.id }
          })
          if (lose()) return
          return send(200, { accepted, refused, results })
        }
        const platform = url.searchParams.get('platform') ?? ''
        const body = JSON.parse(raw) as Record<string, unknown>
        const error = validate(platform, body)
        if (error) return send(400, { error }, advertise)
        const key = req.headers['idempotency-key']
        const s = store(
          platform,
          url.searchParams.get('type') ?? '',
          url.searchParams.get('v') ?? '',
          typeof key === 'string' ? key : undefined,
          body,
          raw,
        )
        if (lose()) return
        send(201, s.duplicate ? { id: s.id, duplicate: true } : { id: s.id }, advertise)
      }
      if (f.latencyMs) {
        const release = hold()
        clock.setTimeout(() => {
          release()
          answer()
        }, f.latencyMs)
      } else answer()
    })
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    svc.connections++
    svc.maxSockets = Math.max(svc.maxSockets, sockets.size)
    s.on('close', () => sockets.delete(s))
  })
  // Outside the ephemeral range: nothing else is given the port while the service is down().
  const port = await listenOnStablePort(server)
  svc.url = `http://127.0.0.1:${port}`
  return svc
}
