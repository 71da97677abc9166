/**
 * Helpers for the shared-collector tests: a local receiver that acknowledges every pause and
 * operator-message webhook, tracking through the real `POST /track`, raw HTTP requests with a
 * chosen Host header, and a live-stream reader.
 */
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hashPassword } from '../../src/access/password'

export interface Receiver {
  url: string
  calls: Array<{ path: string; body: unknown }>
  close(): Promise<void>
}

/** A bot's webhook routes: 200 to every POST, calls kept. */
export async function startReceiver(): Promise<Receiver> {
  const calls: Receiver['calls'] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      calls.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString() || 'null') })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r())
        server.closeAllConnections()
      }),
  }
}

/** Posts a universal incoming message through `POST /track`; resolves to the record id. */
export async function say(base: string, apiKey: string, userId: string, text: string): Promise<number> {
  const res = await fetch(`${base}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, userId }),
  })
  if (res.status !== 201) throw new Error(`track answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { id: number }).id
}

/** A raw HTTP request (fetch can't set Host). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      )
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** Reads a live stream (`GET /api/stream`): the events seen so far (`data` parsed as `D`), until closed. */
export async function openStream<D = unknown>(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ events: Array<{ event: string; data: D }>; status: number; close(): void }> {
  const ac = new AbortController()
  const res = await fetch(url, { headers, signal: ac.signal })
  const events: Array<{ event: string; data: D }> = []
  if (res.ok && res.body) {
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ''
    ;(async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += decoder.decode(value, { stream: true })
        let i = buffer.indexOf('\n\n')
        while (i >= 0) {
          const frame = buffer.slice(0, i)
          buffer = buffer.slice(i + 2)
          const event = /^event: (.*)$/m.exec(frame)?.[1]
          const data = /^data: (.*)$/m.exec(frame)?.[1]
          if (event && data) events.push({ event, data: JSON.parse(data) })
          i = buffer.indexOf('\n\n')
        }
      }
    })().catch(() => {})
  }
  return { events, status: res.status, close: () => ac.abort() }
}

let cachedHash: Promise<string> | undefined
/** The password every test user has, and its hash (computed once: scrypt is slow on purpose). */
export const PASSWORD = 'correct horse battery staple'
export const passwordHash = () => {
  cachedHash ??= hashPassword(PASSWORD)
  return cachedHash
}
