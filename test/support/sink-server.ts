/**
 * A real tracking endpoint for tests: an HTTP server on 127.0.0.1 that records every
 * `POST /track` (query + parsed body) and can misbehave on demand. Not a mock of our code:
 * the tracker talks to it over real sockets.
 * Its port is outside the kernel's ephemeral range (./stable-port.ts): nothing else is given it
 * while the sink is `down()`.
 */
import http from 'node:http'
import { listenOn, listenOnStablePort } from './stable-port'

export interface ReceivedRecord {
  platform: string | null
  type: string | null
  v: string | null
  apiKey: string | null
  query: URLSearchParams
  body: any
  raw: string
  headers: http.IncomingHttpHeaders
}

export interface Faults {
  /** Probability (0..1) of answering 500. */
  error500?: number
  /** Probability of answering 429 with Retry-After `retryAfterSec`. */
  error429?: number
  retryAfterSec?: number
  /** Probability of destroying the socket without answering. */
  reset?: number
  /** Delay before answering, ms. */
  latencyMs?: number
  /** Fixed status for every request (e.g. 400). */
  status?: number
}

export interface Sink {
  url: string
  port: number
  records: ReceivedRecord[]
  /** Every request that arrived, answered or not. */
  requests: number
  /** Requests that arrived and are not answered yet (held by `latencyMs`). */
  readonly pending: number
  /** Client connections open now. */
  readonly connections: number
  faults: Faults
  /** Stop listening (connections refused) — `up()` listens again on the same port. */
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
  /** Resolves once `n` records were accepted (rejects after `timeoutMs`, default 60 s: a hang detector). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRecord[]>
  clear(): void
}

export async function startSink(faults: Faults = {}, random: () => number = Math.random): Promise<Sink> {
  const records: ReceivedRecord[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const sockets = new Set<import('node:net').Socket>()
  const state = { requests: 0, pending: 0 }
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      state.requests++
      state.pending++
      const f = sink.faults
      const answer = () => {
        state.pending--
        if (f.reset && random() < f.reset) return req.socket.destroy()
        if (f.status) {
          const extra = f.status === 429 ? { 'retry-after': String(f.retryAfterSec ?? 1) } : {}
          res.writeHead(f.status, { 'content-type': 'application/json', ...extra })
          return res.end(JSON.stringify({ error: { code: 'forced', message: `forced ${f.status}` } }))
        }
        if (f.error500 && random() < f.error500) {
          res.writeHead(500)
          return res.end('boom')
        }
        if (f.error429 && random() < f.error429) {
          res.writeHead(429, { 'retry-after': String(f.retryAfterSec ?? 1) })
          return res.end('slow down')
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        const url = new URL(req.url ?? '/', 'http://x')
        let body: unknown
        try {
          body = JSON.parse(raw)
        } catch {
          body = undefined
        }
        records.push({
          platform: url.searchParams.get('platform'),
          type: url.searchParams.get('type'),
          v: url.searchParams.get('v'),
          apiKey: url.searchParams.get('apiKey'),
          query: url.searchParams,
          body,
          raw,
          headers: req.headers,
        })
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ ok: true, id: records.length }))
        for (const w of [...waiters]) if (records.length >= w.n) w.resolve()
      }
      if (f.latencyMs) setTimeout(answer, f.latencyMs)
      else answer()
    })
  }
  let server = http.createServer({ keepAlive: true }, handler)
  const track = (s: http.Server) =>
    s.on('connection', (sock) => {
      sockets.add(sock)
      sock.on('close', () => sockets.delete(sock))
    })
  track(server)
  const port = await listenOnStablePort(server)
  const sink: Sink = {
    url: `http://127.0.0.1:${port}`,
    port,
    records,
    get requests() {
      return state.requests
    },
    get pending() {
      return state.pending
    },
    get connections() {
      return sockets.size
    },
    faults,
    async down() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
    async up() {
      server = http.createServer({ keepAlive: true }, handler)
      track(server)
      await listenOn(server, port)
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
    waitFor(n, timeoutMs = 60_000) {
      if (records.length >= n) return Promise.resolve(records)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`sink got ${records.length}/${n} records in ${timeoutMs} ms`)),
          timeoutMs,
        )
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer)
            resolve(records)
          },
        })
      })
    },
    clear() {
      records.length = 0
    },
  }
  return sink
}
