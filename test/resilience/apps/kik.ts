/**
 * A Kik bot on the real @kikinteractive/kik SDK tracked with `kik.configHandler(bot)` and
 * `bot.use(kik.logHandler)`. Messages arrive on its signed webhook; the SDK posts replies to
 * its `apiDomain`, here the local Kik API stand-in (so no nock is needed).
 */
import { createHmac } from 'node:crypto'
import http from 'node:http'
import { kikTracking } from '@convotrack/kik'
import { type AppFactory, idIn, listen, post, requireFrom } from './app'

const USERNAME = 'resilience.bot'
const KIK_API_KEY = '6d1c0c5e-2f6b-4a8e-9b53-0f5e8e3f2a72'

/** The SDK's parts used here (it ships no types). */
interface KikSdkIncoming {
  body?: string
  reply(message: string): Promise<unknown>
}
interface KikSdkBot {
  username: string
  apiKey: string
  send(...args: unknown[]): Promise<unknown>
  broadcast(...args: unknown[]): Promise<unknown>
  use(handler: (incoming: never, next: () => void) => void): void
  onTextMessage(handler: (incoming: KikSdkIncoming) => void): void
  incoming(): http.RequestListener
}
type KikSdk = new (options: Record<string, unknown>) => KikSdkBot

export const kikApp: AppFactory = async ({ tracker, platform, client }) => {
  const Bot = requireFrom('kik')('@kikinteractive/kik') as KikSdk
  const bot = new Bot({ username: USERNAME, apiKey: KIK_API_KEY, baseUrl: 'http://127.0.0.1', apiDomain: platform.url })
  if (tracker) {
    const kik = kikTracking(tracker)
    kik.configHandler(bot)
    bot.use(kik.logHandler)
  }
  bot.onTextMessage((incoming) => {
    // The bot's own send failures are its business; it must not leave them unhandled either.
    incoming.reply(`echo ${idIn(incoming.body)}`).catch(() => {})
  })
  const server = await listen(http.createServer(bot.incoming()))
  let seq = 0
  return {
    async send(user, id) {
      const body = JSON.stringify({
        messages: [
          {
            chatId: `chat-${user}`,
            id: `kik-${++seq}`,
            type: 'text',
            from: user,
            participants: [user],
            body: `hello ${id}`,
            timestamp: Date.now(),
            readReceiptRequested: false,
            mention: null,
          },
        ],
      })
      const replied = platform.expect(id)
      await post(client, `${server.url}/incoming`, body, {
        'content-type': 'application/json',
        'x-kik-username': USERNAME,
        'x-kik-signature': createHmac('sha1', KIK_API_KEY).update(body).digest('hex').toUpperCase(),
      })
      await replied
    },
    close: () => server.close(),
  }
}
