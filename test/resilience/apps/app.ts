/**
 * What each adapter's app under load provides to the driver, and the small plumbing they
 * share: framework loading (the frameworks are dependencies of the adapter packages, not of
 * the repository root, so they are required from the adapter's own folder), an undici client
 * for the load, and node:http helpers.
 */
import type http from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import type { Tracker } from '@convotrack/core'
import { type Agent, request } from 'undici'
import type { PlatformFake } from '../platform-fake'

export interface AppOptions {
  /** The tracker, or undefined for the same app without its tracking line. */
  tracker: Tracker | undefined
  platform: PlatformFake
  /** The load driver's HTTP client (its own connection pool, not the global one the bots use). */
  client: Agent
}

export interface AppUnderLoad {
  /** Sends message `id` from `user` through the real framework; resolves when the bot's reply to it was seen. */
  send(user: string, id: string): Promise<void>
  /** Hands over records an adapter still holds (Slack: team-name lookups) before `tracker.flush()`. */
  settle?(timeoutMs: number): Promise<void>
  close(): Promise<void>
}

export type AppFactory = (options: AppOptions) => Promise<AppUnderLoad>

/** `require` from an adapter package's folder, where its framework is installed. */
export function requireFrom(pkg: string): NodeJS.Require {
  return createRequire(new URL(`../../../packages/${pkg}/package.json`, import.meta.url))
}

/** The id (`rz-<n>`) in a message text. */
export function idIn(text: unknown): string {
  return typeof text === 'string' ? (/\b(rz[a-z]?-\d+)\b/.exec(text)?.[1] ?? 'none') : 'none'
}

export async function listen(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('error', reject)
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

/** POSTs `body` with the driver's client; rejects unless the status is 2xx. */
export async function post(
  client: Agent,
  url: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<string> {
  const res = await request(url, { method: 'POST', headers, body, dispatcher: client })
  const text = await res.body.text()
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`${url} answered ${res.statusCode}: ${text}`)
  return text
}
