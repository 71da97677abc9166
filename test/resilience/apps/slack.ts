/**
 * A Slack Bolt app (HTTPReceiver, acks before the listener runs, Bolt's default) tracked with
 * `app.use(slackTracking(tracker))`. User messages arrive as signed Events API requests over
 * HTTP; the reply is `say()`, i.e. `chat.postMessage` to the local Web API stand-in given as
 * `clientOptions.slackApiUrl`. The reply latency ends when that call arrives.
 */
import { createHmac } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { flushSlackTracking, slackTracking } from '@convotrack/slack'
import type * as Bolt from '../../../packages/slack/node_modules/@slack/bolt'
import { SLACK_TEAM } from '../platform-fake'
import { type AppFactory, idIn, post, requireFrom } from './app'

const SIGNING_SECRET = 'resilience-signing-secret'

export const slackApp: AppFactory = async ({ tracker, platform, client }) => {
  const { App, LogLevel } = requireFrom('slack')('@slack/bolt') as typeof Bolt
  const app = new App({
    token: 'xoxb-resilience',
    signingSecret: SIGNING_SECRET,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: `${platform.url}/api/` },
  })
  if (tracker) app.use(slackTracking(tracker)) // the one line
  app.message(async ({ message, say }) => {
    await say(`echo ${idIn((message as { text?: string }).text)}`)
  })
  const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server
  const eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`
  let seq = 0
  return {
    async send(user, id) {
      const now = Math.floor(Date.now() / 1000)
      seq++
      const raw = JSON.stringify({
        token: 'verification-token',
        team_id: SLACK_TEAM.id,
        api_app_id: 'A0RZ',
        type: 'event_callback',
        event_id: `Ev${seq}`,
        event_time: now,
        event: {
          type: 'message',
          channel: `D${user.toUpperCase()}`,
          user: `U${user.toUpperCase()}`,
          text: `hello ${id}`,
          ts: `${now}.${String(seq).padStart(6, '0')}`,
          team: SLACK_TEAM.id,
          channel_type: 'im',
        },
      })
      const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${now}:${raw}`).digest('hex')}`
      const replied = platform.expect(id)
      await post(client, eventsUrl, raw, {
        'content-type': 'application/json',
        'x-slack-request-timestamp': String(now),
        'x-slack-signature': signature,
      })
      await replied
    },
    async settle(timeoutMs) {
      // Records wait for the team name (team.info) before they reach the tracker.
      if (tracker) await flushSlackTracking(tracker, timeoutMs).then(() => undefined)
    },
    close: () => app.stop().then(() => undefined),
  }
}
