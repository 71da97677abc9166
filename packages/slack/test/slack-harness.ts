/**
 * A real Bolt App on 127.0.0.1 (HTTP receiver, port 0) fed signed Events API and interactivity
 * requests, with Slack's Web API answered by nock. Only slack.com is faked; the app, its
 * receiver, its WebClient and our middleware are the real thing.
 */
import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { App, LogLevel } from '@slack/bolt'
import nock from 'nock'

export const SIGNING_SECRET = 'test-signing-secret'
export const BOT_USER_ID = 'U0BOT'
export const BOT_ID = 'B0BOT'

export interface FakeSlackApi {
  /** chat.postMessage calls that reached "Slack", in order. */
  posted: Array<Record<string, string>>
  /** team.info calls, by team id. */
  teamInfoCalls: string[]
  done(): void
}

/** Answers auth.test, chat.postMessage and team.info like Slack does. */
export function fakeSlackApi(
  opts: {
    teamNames?: Record<string, string>
    teamInfoDelayMs?: number
    /** team.info answers only once this resolves (a slow Slack the test controls, not a timer). */
    teamInfoGate?: Promise<void>
    teamInfoStatus?: 'ok' | 'missing_scope'
  } = {},
): FakeSlackApi {
  const posted: FakeSlackApi['posted'] = []
  const teamInfoCalls: string[] = []
  const form = (body: unknown): Record<string, string> =>
    typeof body === 'string' ? Object.fromEntries(new URLSearchParams(body)) : ((body ?? {}) as Record<string, string>)
  let ts = 0
  const scope = nock('https://slack.com')
    .persist()
    .post('/api/auth.test')
    .reply(200, { ok: true, user_id: BOT_USER_ID, bot_id: BOT_ID, team_id: 'T1', team: 'Acme' })
    .post('/api/chat.postMessage')
    .reply(200, (_uri, body) => {
      const args = form(body)
      posted.push(args)
      ts++
      return {
        ok: true,
        channel: args.channel,
        ts: `1700000100.${String(ts).padStart(6, '0')}`,
        message: { type: 'message', text: args.text, user: BOT_USER_ID },
      }
    })
    .post('/api/team.info')
    .delay(opts.teamInfoDelayMs ?? 0)
    .reply(async (_uri, body) => {
      const team = form(body).team ?? ''
      teamInfoCalls.push(team)
      await opts.teamInfoGate
      if (opts.teamInfoStatus === 'missing_scope')
        return [200, { ok: false, error: 'missing_scope', needed: 'team:read' }]
      return [200, { ok: true, team: { id: team, name: opts.teamNames?.[team] ?? `Team ${team}`, domain: 'acme' } }]
    })
  return { posted, teamInfoCalls, done: () => scope.persist(false) }
}

export interface RunningApp {
  app: App
  url: string
  /** Errors that reached Bolt's error handler. */
  errors: Error[]
  /** Posts a signed Events API request; resolves with the HTTP status and the time to the answer. */
  sendEvent(event: Record<string, unknown>, extra?: Record<string, unknown>): Promise<{ status: number; ms: number }>
  /** Posts a signed interactivity request (form-encoded `payload`). */
  sendInteraction(payload: Record<string, unknown>): Promise<{ status: number; body: string }>
  /** Posts a signed slash command (form-encoded fields). */
  sendCommand(fields: Record<string, string>): Promise<{ status: number; body: string }>
  close(): Promise<void>
}

export function sign(secret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`
}

let eventSeq = 0

/** Starts a real App with its HTTP receiver on 127.0.0.1:0; `setup` adds middleware and listeners. */
export async function startApp(
  setup: (app: App) => void,
  options: { processBeforeResponse?: boolean } = {},
): Promise<RunningApp> {
  const app = new App({
    token: 'xoxb-test-token',
    signingSecret: SIGNING_SECRET,
    processBeforeResponse: options.processBeforeResponse ?? true,
    logLevel: LogLevel.ERROR,
  })
  const errors: Error[] = []
  app.error(async (error) => {
    errors.push(error)
  })
  setup(app)
  const server = (await app.start({ port: 0, host: '127.0.0.1' })) as http.Server
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`
  const post = async (raw: string, contentType: string) => {
    const timestamp = Math.floor(Date.now() / 1000)
    const started = performance.now()
    const res = await request(url, raw, {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': sign(SIGNING_SECRET, timestamp, raw),
    })
    return { ...res, ms: performance.now() - started }
  }
  return {
    app,
    url,
    errors,
    async sendEvent(event, extra = {}) {
      eventSeq++
      const body = {
        token: 'verification-token',
        team_id: 'T1',
        api_app_id: 'A1',
        type: 'event_callback',
        event_id: `Ev${eventSeq}`,
        event_time: 1700000000,
        authorizations: [{ team_id: 'T1', user_id: BOT_USER_ID, is_bot: true }],
        event,
        ...extra,
      }
      const { status, ms } = await post(JSON.stringify(body), 'application/json')
      return { status, ms }
    },
    async sendInteraction(payload) {
      const { status, body } = await post(
        new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
        'application/x-www-form-urlencoded',
      )
      return { status, body }
    },
    async sendCommand(fields) {
      const { status, body } = await post(new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded')
      return { status, body }
    },
    close: () => app.stop() as Promise<void>,
  }
}

/** A plain node:http POST (its own agent, so no keep-alive socket outlives the test). */
function request(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          text += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** A user's message event in channel `channel`. */
export function messageEvent(
  channel: string,
  text: string,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: 'message',
    channel,
    user: 'U1',
    text,
    ts: '1700000000.000100',
    team: 'T1',
    channel_type: 'channel',
    ...more,
  }
}

/** A local stand-in for Slack's response_url endpoint (respond() posts there). */
export async function startResponseUrlServer(): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8')
    })
    req.on('end', () => {
      bodies.push(JSON.parse(raw))
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/actions/T1/123/abc`
  return {
    url,
    bodies,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
