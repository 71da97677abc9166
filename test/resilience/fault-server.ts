/**
 * A misbehaving tracking service for the resilience suite: a real HTTP server on 127.0.0.1
 * (port 0) that answers `POST /track` after a fixed latency, with a seeded mix of 500s, 429s
 * (with `Retry-After`) and connection resets, and that can go down (connections refused) and
 * come back on the same port. It counts every record it accepts by the message id the load
 * driver put in the text (`rz-<n>`, see `messageId`), so losses and duplicates both show.
 * Ideas from test/support/sink-server.ts; this one keeps no bodies (memory stays flat at
 * thousands of records) and decides each fault once per request, mutually exclusive.
 */
import http from 'node:http'
import type { Socket } from 'node:net'
import { listenOn, listenOnStablePort } from '../support/stable-port'

/** What the server does to each request it receives. Probabilities are exclusive: 0.05 + 0.10 + 0.10 = 25 % failures. */
export interface FaultMix {
  /** Probability of destroying the socket without an answer (after reading the request). */
  reset: number
  /** Probability of answering 500. */
  error500: number
  /** Probability of answering 429 with `Retry-After: retryAfterSec`. */
  error429: number
  retryAfterSec: number
  /** Delay before every answer (also before a reset), ms. */
  latencyMs: number
  /** Probability of answering 200 WITHOUT counting the record: a loss the suite must notice (its self-test only). */
  blackhole?: number
}

/** The issue's mix: 10 % 500, 10 % 429 + Retry-After, 5 % resets, 200 ms latency. */
export const ISSUE_FAULTS: FaultMix = { reset: 0.05, error500: 0.1, error429: 0.1, retryAfterSec: 1, latencyMs: 200 }

/** The service once it is back: no faults, the same latency. */
export const HEALTHY: FaultMix = { reset: 0, error500: 0, error429: 0, retryAfterSec: 1, latencyMs: 200 }

/** Counters of one fault server. */
export interface FaultCounts {
  /** Requests read completely. */
  requests: number
  accepted: number
  reset: number
  error500: number
  error429: number
  /** Accepted records whose body carried no `rz…-<n>` id. */
  withoutId: number
}

export interface FaultServer {
  url: string
  port: number
  /** Current fault mix; replace it to change behaviour. */
  faults: FaultMix
  readonly isDown: boolean
  counts(): FaultCounts
  /** Distinct records accepted whose id starts with `prefix` (e.g. `rz-`), keyed `type:id`, and how many arrived more than once. */
  delivered(prefix: string): { distinct: number; duplicates: number; byType: Record<string, number> }
  /** Accepted-record count per id prefix key (`type:id` → times accepted). */
  readonly seen: ReadonlyMap<string, number>
  /** Stop listening and cut open connections: new connections are refused until `up()`. */
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
}

/** Message ids the load driver puts in each user message and the bot echoes in its reply. */
export const ID_PATTERN = /\b(rz[a-z]?-\d+)\b/

/** Small seeded PRNG (mulberry32), so a run's fault sequence is reproducible per request order. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export async function startFaultServer(
  faults: FaultMix = HEALTHY,
  options: { seed?: number; down?: boolean } = {},
): Promise<FaultServer> {
  const random = seededRandom(options.seed ?? 9)
  const counts: FaultCounts = { requests: 0, accepted: 0, reset: 0, error500: 0, error429: 0, withoutId: 0 }
  const seen = new Map<string, number>()
  const sockets = new Set<Socket>()
  let down = false

  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      counts.requests++
      const f = state.faults
      const answer = () => {
        if (req.socket.destroyed) return
        const roll = random()
        if (roll < f.reset) {
          counts.reset++
          req.socket.destroy()
          return
        }
        if (roll < f.reset + f.error500) {
          counts.error500++
          res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error')
          return
        }
        if (roll < f.reset + f.error500 + f.error429) {
          counts.error429++
          res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(f.retryAfterSec) }).end('slow down')
          return
        }
        if (f.blackhole && random() < f.blackhole) {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
          return
        }
        counts.accepted++
        const raw = Buffer.concat(chunks).toString('utf8')
        const id = ID_PATTERN.exec(raw)?.[1]
        const type = new URL(req.url ?? '/', 'http://x').searchParams.get('type') ?? '?'
        if (id) {
          const key = `${type}:${id}`
          seen.set(key, (seen.get(key) ?? 0) + 1)
        } else counts.withoutId++
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
      }
      if (f.latencyMs > 0) setTimeout(answer, f.latencyMs)
      else answer()
    })
  }

  let server = http.createServer({ keepAlive: true }, handler)
  const watch = (s: http.Server) =>
    s.on('connection', (sock) => {
      sockets.add(sock)
      sock.on('close', () => sockets.delete(sock))
    })
  watch(server)
  // Outside the ephemeral range: nothing else is given the port while the server is down.
  const port = await listenOnStablePort(server)

  const stop = async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  const state: FaultServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    faults,
    get isDown() {
      return down
    },
    counts: () => ({ ...counts }),
    seen,
    delivered(prefix) {
      let distinct = 0
      let duplicates = 0
      const byType: Record<string, number> = {}
      for (const [key, n] of seen) {
        const [type, id] = key.split(':') as [string, string]
        if (!id.startsWith(prefix)) continue
        distinct++
        duplicates += n - 1
        byType[type] = (byType[type] ?? 0) + 1
      }
      return { distinct, duplicates, byType }
    },
    async down() {
      if (down) return
      down = true
      await stop()
    },
    async up() {
      if (!down) return
      server = http.createServer({ keepAlive: true }, handler)
      watch(server)
      await listenOn(server, port)
      down = false
    },
    async close() {
      if (!down) await stop()
      down = true
    },
  }
  if (options.down) await state.down()
  return state
}
