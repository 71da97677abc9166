/**
 * A Bot Framework bot (botbuilder `CloudAdapter`, authentication off as with the Emulator)
 * tracked with `adapter.use(new MessengerMiddleware(tracker))`, taking Messenger-channel
 * activities on `POST /api/messages`. Replies go to the activities' `serviceUrl`, the local
 * connector stand-in; `adapter.process` answers the HTTP request once the turn is done.
 */
import http from 'node:http'
import { MessengerMiddleware } from '@convotrack/messenger'
import type * as BotBuilder from '../../../packages/messenger/node_modules/botbuilder'
import { type AppFactory, idIn, listen, post, readBody, requireFrom } from './app'

const PAGE_ID = '104857600000010'

export const botbuilderApp: AppFactory = async ({ tracker, platform, client }) => {
  const bb = requireFrom('messenger')('botbuilder') as typeof BotBuilder
  const adapter = new bb.CloudAdapter(new bb.ConfigurationBotFrameworkAuthentication({}))
  if (tracker) adapter.use(new MessengerMiddleware(tracker)) // the one line
  adapter.onTurnError = async (context) => {
    await context.sendActivity('Something went wrong.')
  }
  const bot = new bb.ActivityHandler()
  bot.onMessage(async (context, next) => {
    await context.sendActivity(`echo ${idIn(context.activity.text)}`)
    await next()
  })

  const server = await listen(
    http.createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req)) as Record<string, unknown>
      const response: BotBuilder.Response = {
        socket: res.socket,
        status(code: number) {
          res.statusCode = code
          return response
        },
        header(name: string, value: unknown) {
          res.setHeader(name, String(value))
          return response
        },
        send(payload?: unknown) {
          if (payload !== undefined) res.write(typeof payload === 'string' ? payload : JSON.stringify(payload))
          return response
        },
        end() {
          res.end()
        },
      }
      await adapter.process({ body, headers: req.headers, method: req.method }, response, (context) => bot.run(context))
    }),
  )
  let n = 0
  return {
    async send(user, id) {
      const timestamp = Date.now()
      const psid = `PSID_${user}`
      const text = `hello ${id}`
      const activity = {
        type: 'message',
        id: `in-${++n}`,
        timestamp: new Date(timestamp).toISOString(),
        channelId: 'facebook',
        serviceUrl: `${platform.url}/`,
        from: { id: psid, name: user },
        recipient: { id: PAGE_ID, name: 'Resilience' },
        conversation: { id: `${psid}-${PAGE_ID}` },
        text,
        channelData: {
          sender: { id: psid },
          recipient: { id: PAGE_ID },
          timestamp,
          message: { mid: `m_in_${n}`, seq: 0, text },
        },
      }
      const replied = platform.expect(id)
      await post(client, `${server.url}/api/messages`, JSON.stringify(activity))
      await replied
    },
    close: () => server.close(),
  }
}
