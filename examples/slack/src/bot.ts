/**
 * A small Slack Bolt bot tracked with @convotrack/slack. The App, its HTTP receiver, its
 * WebClient and the tracking middleware are real; what a workspace would do is played here:
 * user messages and button clicks arrive as signed Events API / interactivity requests over
 * HTTP, and Slack's Web API (auth.test, chat.postMessage, team.info) is answered by nock,
 * since no real workspace is reachable. `respond()` posts to a local response_url server.
 */
import { createHmac } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTracker } from '@convotrack/core'
import { pauseReceiver } from '@convotrack/express'
import { flushSlackTracking, slackTracking } from '@convotrack/slack'
import { App, LogLevel } from '@slack/bolt'
import nock from 'nock'
import type { ExampleBot, ExampleBotOptions } from '../../contract'

const SIGNING_SECRET = 'example-signing-secret'
const TEAM = { id: 'T0EXAMPLE', name: 'Example Workspace' }
const BOT_USER_ID = 'U0EXBOT'

/** The DM channel between the bot and `userId`: the conversation, and so the pause key. */
export function dmChannel(userId: string): string {
  return `D${userId.toUpperCase().replace(/[^A-Z0-9]/g, '')}`
}

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const log = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })
  const slack = simulateSlackWebApi()

  const app = new App({
    token: 'xoxb-example-token',
    signingSecret: SIGNING_SECRET,
    processBeforeResponse: true,
    logLevel: LogLevel.ERROR,
  })
  app.use(slackTracking(tracker)) // the one line

  app.message(async ({ message, say }) => {
    const m = message as { text?: string; user?: string; channel: string }
    const text = (m.text ?? '').trim()
    if (/^(hi|hello|hey)\b/i.test(text)) {
      tracker.setUserMetadata({ firstName: 'Ann', locale: 'en_GB', plan: 'trial' })
      await say({
        text: 'Hello! Ask me about the weather, or rate me.',
        blocks: [
          { type: 'section', text: { type: 'mrkdwn', text: 'Hello! Ask me about the weather, or rate me.' } },
          {
            type: 'actions',
            elements: [
              {
                type: 'button',
                action_id: 'rate_good',
                text: { type: 'plain_text', text: '👍 Good bot' },
                value: 'good',
              },
              { type: 'button', action_id: 'rate_bad', text: { type: 'plain_text', text: '👎 Meh' }, value: 'bad' },
            ],
          },
        ],
      })
      return
    }
    const weather = /weather(?: in ([a-z ]+))?/i.exec(text)
    if (weather) {
      const city = (weather[1] ?? 'London').trim()
      tracker.setOutgoingIntent({ name: 'weather.report', inputs: [{ name: 'city', value: city }], confidence: 0.92 })
      await say(`It is sunny in ${city}, 21°C.`)
      tracker.logEvent({
        type: 'customEvent',
        name: 'weather-asked',
        userId: m.user ?? m.channel,
        conversationId: m.channel,
        extraInfo: { city },
      })
      return
    }
    tracker.setNotHandled()
    await say("Sorry, I didn't get that. Try 'weather in Paris'.")
  })

  app.action(/^rate_/, async ({ ack, action, respond }) => {
    await ack()
    const good = (action as { value?: string }).value === 'good'
    tracker.setOutgoingIntent({ name: good ? 'feedback.positive' : 'feedback.negative' })
    await respond({ text: good ? 'Thanks, glad to help!' : 'Sorry, I will try harder.', replace_original: false })
  })

  const server = (await app.start({ port: 0, host: '127.0.0.1' })) as http.Server
  const eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`
  const responseUrl = await startResponseUrlServer()

  let pauseServer: http.Server | undefined
  let pauseWebhookUrl: string | undefined
  if (options.webhookSecret) {
    const handle = pauseReceiver({ store: tracker.pauses, secret: options.webhookSecret })
    pauseServer = http.createServer((req, res) => void handle(req, res))
    await new Promise<void>((resolve) => pauseServer?.listen(0, '127.0.0.1', resolve))
    pauseWebhookUrl = `http://127.0.0.1:${(pauseServer.address() as AddressInfo).port}/convotrack/pause`
  }

  let seq = 0
  /** Sends a signed request to the app and waits for its answer (processBeforeResponse: listeners are done by then). */
  const post = async (raw: string, contentType: string) => {
    const ts = Math.floor(Date.now() / 1000)
    const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${ts}:${raw}`).digest('hex')}`
    const res = await fetch(eventsUrl, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-slack-request-timestamp': String(ts), 'x-slack-signature': signature },
      body: raw,
    })
    if (res.status !== 200) throw new Error(`the app answered ${res.status}`)
    await res.text()
  }

  const say = async (userId: string, text: string): Promise<string[]> => {
    const channel = dmChannel(userId)
    const before = slack.posted.length
    seq++
    const event = {
      type: 'message',
      channel,
      user: userId,
      text,
      ts: `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`,
      team: TEAM.id,
      channel_type: 'im',
    }
    const body = {
      token: 'example-verification-token',
      team_id: TEAM.id,
      api_app_id: 'A0EXAMPLE',
      type: 'event_callback',
      event_id: `Ev${seq}`,
      event_time: Math.floor(Date.now() / 1000),
      event,
    }
    log(`  ${userId} → bot: ${text}`)
    await post(JSON.stringify(body), 'application/json')
    const replies = slack.posted
      .slice(before)
      .filter((p) => p.channel === channel)
      .map((p) => p.text ?? '')
    for (const r of replies) log(`  bot → ${userId}: ${r}`)
    if (replies.length === 0) log('  (no answer: paused)')
    return replies
  }

  const click = async (userId: string, actionId: string, value: string, label: string): Promise<string[]> => {
    const before = responseUrl.bodies.length
    seq++
    const payload = {
      type: 'block_actions',
      token: 'example-verification-token',
      team: { id: TEAM.id, domain: 'example' },
      user: { id: userId, username: userId, team_id: TEAM.id },
      api_app_id: 'A0EXAMPLE',
      channel: { id: dmChannel(userId), name: 'directmessage' },
      container: { type: 'message', channel_id: dmChannel(userId), message_ts: '1.000001' },
      response_url: responseUrl.url,
      trigger_id: `${seq}.trigger`,
      actions: [
        {
          type: 'button',
          action_id: actionId,
          block_id: 'rate',
          value,
          text: { type: 'plain_text', text: label },
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    }
    log(`  ${userId} clicks "${label}"`)
    await post(
      new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
      'application/x-www-form-urlencoded',
    )
    const replies = responseUrl.bodies.slice(before).map((b) => String((b as { text?: unknown }).text ?? ''))
    for (const r of replies) log(`  bot → ${userId} (respond): ${r}`)
    return replies
  }

  return {
    name: 'slack',
    tracker,
    say,
    pauseWebhookUrl,
    async converse() {
      await say('ann', 'hello')
      await click('ann', 'rate_good', 'good', '👍 Good bot')
      await say('ann', 'what is the weather in Paris?')
      await say('ann', 'sing me a song about turnips')
      await say('bob', 'hey there')
      await say('bob', 'weather')
      await flushSlackTracking(tracker, 5000)
    },
    async close() {
      await flushSlackTracking(tracker, 5000)
      await tracker.close(5000)
      await app.stop()
      await responseUrl.close()
      if (pauseServer) {
        const s = pauseServer
        s.closeAllConnections()
        await new Promise<void>((resolve) => s.close(() => resolve()))
      }
      slack.stop()
    },
  }
}

/** Slack's Web API as this bot uses it, answered in-process (only slack.com is intercepted). */
function simulateSlackWebApi(): { posted: Array<Record<string, string>>; stop(): void } {
  const posted: Array<Record<string, string>> = []
  const form = (body: unknown) =>
    typeof body === 'string' ? Object.fromEntries(new URLSearchParams(body)) : ((body ?? {}) as Record<string, string>)
  const scope = nock('https://slack.com').persist()
  const interceptors = [scope.post('/api/auth.test'), scope.post('/api/chat.postMessage'), scope.post('/api/team.info')]
  interceptors[0]?.reply(200, { ok: true, user_id: BOT_USER_ID, bot_id: 'B0EXBOT', team_id: TEAM.id, team: TEAM.name })
  interceptors[1]?.reply(200, (_uri, body) => {
    const args = form(body)
    posted.push(args)
    return {
      ok: true,
      channel: args.channel,
      ts: `${Date.now() / 1000}`,
      message: { type: 'message', text: args.text, user: BOT_USER_ID },
    }
  })
  interceptors[2]?.reply(200, { ok: true, team: { id: TEAM.id, name: TEAM.name, domain: 'example' } })
  return {
    posted,
    stop() {
      scope.persist(false)
      for (const i of interceptors) nock.removeInterceptor(i)
    },
  }
}

async function startResponseUrlServer(): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8')
    })
    req.on('end', () => {
      bodies.push(JSON.parse(raw || '{}'))
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/actions/${TEAM.id}/1/response`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
