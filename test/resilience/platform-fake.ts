/**
 * The platforms' own APIs the bots reply through, answered by one local HTTP server (the
 * real ones cannot be reached from here): Slack's Web API (`/api/*`, given to Bolt as
 * `clientOptions.slackApiUrl`), Facebook's Graph Send API (`/v21.0/me/messages`, given to
 * `trackedSendApi` as `graphApiUrl`), the Bot Framework connector (`/v3/conversations/…`,
 * the activities' `serviceUrl`) and Kik's API (`/v1/message`, the SDK's `apiDomain`). A real
 * server rather than nock, so interception costs nothing extra in the latency figures.
 * Each reply carries the message id it answers; `expect(id)` resolves when it arrives.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { ID_PATTERN } from './fault-server'

export const SLACK_TEAM = { id: 'T0RESILIENCE', name: 'Resilience Workspace' }
export const SLACK_BOT_USER = 'U0RZBOT'

export interface PlatformFake {
  url: string
  /** Resolves when a reply carrying `id` reaches any of the APIs. Call before sending the message. */
  expect(id: string): Promise<void>
  /** Forgets a waiter (the message timed out). */
  forget(id: string): void
  close(): Promise<void>
}

export async function startPlatformFake(): Promise<PlatformFake> {
  const waiters = new Map<string, () => void>()
  let n = 0
  const replied = (text: unknown) => {
    const id = typeof text === 'string' ? ID_PATTERN.exec(text)?.[1] : undefined
    if (!id) return
    const done = waiters.get(id)
    if (done) {
      waiters.delete(id)
      done()
    }
  }

  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const path = new URL(req.url ?? '/', 'http://fake').pathname
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      const form = (): Record<string, unknown> => {
        if ((req.headers['content-type'] ?? '').includes('json')) return JSON.parse(raw || '{}')
        return Object.fromEntries(new URLSearchParams(raw))
      }
      // Slack Web API
      if (path === '/api/auth.test')
        return json(200, { ok: true, user_id: SLACK_BOT_USER, bot_id: 'B0RZBOT', team_id: SLACK_TEAM.id })
      if (path === '/api/team.info') return json(200, { ok: true, team: { ...SLACK_TEAM, domain: 'resilience' } })
      if (path === '/api/chat.postMessage') {
        const args = form()
        replied(args.text)
        return json(200, {
          ok: true,
          channel: args.channel,
          ts: `${Math.floor(Date.now() / 1000)}.${String(++n).padStart(6, '0')}`,
          message: { type: 'message', text: args.text, user: SLACK_BOT_USER },
        })
      }
      // Graph Send API
      if (path === '/v21.0/me/messages') {
        const body = JSON.parse(raw || '{}') as { recipient?: { id?: string }; message?: { text?: string } }
        replied(body.message?.text)
        return json(200, { recipient_id: body.recipient?.id, message_id: `m_rz_${++n}` })
      }
      // Bot Framework connector
      if (path.startsWith('/v3/conversations/')) {
        const activity = JSON.parse(raw || '{}') as { text?: string }
        replied(activity.text)
        return json(200, { id: `bf-${++n}` })
      }
      // Kik API
      if (path === '/v1/message' || path === '/v1/broadcast') {
        const body = JSON.parse(raw || '{}') as { messages?: Array<{ body?: string }> }
        for (const m of body.messages ?? []) replied(m.body)
        return json(200, {})
      }
      json(404, { ok: false, error: 'unknown_method' })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    expect: (id) => new Promise<void>((resolve) => waiters.set(id, resolve)),
    forget: (id) => void waiters.delete(id),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
