/**
 * A Microsoft Bot Framework bot (botbuilder CloudAdapter) tracked with one line:
 * `adapter.use(new MessengerMiddleware(tracker))`. Messenger users come through the
 * `facebook` channel (Messenger records), Web Chat users through `webchat` (universal records).
 * `say()` posts real activities over HTTP to the bot's /api/messages endpoint.
 */
import { createTracker } from '@convotrack/core'
import { pauseReceiver } from '@convotrack/express'
import { MessengerMiddleware } from '@convotrack/messenger'
import { ActivityHandler, CloudAdapter, ConfigurationBotFrameworkAuthentication } from 'botbuilder'
import type { ExampleBot, ExampleBotOptions } from '../../contract'
import { startConnectorStandIn } from './connector-stand-in'
import { botRequest, botResponse, readJson, type Served, serve } from './http'

const PAGE_ID = '104857600000002'

/** The bot's logic: a small store assistant. */
class StoreBot extends ActivityHandler {
  constructor(tracker: ReturnType<typeof createTracker>) {
    super()
    this.onMessage(async (context, next) => {
      const text = (context.activity.text ?? '').trim()
      const order = /order\s*#?(\d+)/i.exec(text)
      if (/^(hi|hello|hey)\b/i.test(text)) {
        tracker.setUserMetadata({ firstName: context.activity.from.name ?? 'friend' })
        tracker.setOutgoingIntent({ name: 'greet' })
        await context.sendActivity({ type: 'typing' })
        await context.sendActivity(`Hi ${context.activity.from.name ?? 'there'}! Ask me where an order is.`)
      } else if (order?.[1]) {
        tracker.setOutgoingIntent({ name: 'order_status' })
        tracker.logEvent(
          {
            type: 'customEvent',
            name: 'order_lookup',
            userId: context.activity.from.id,
            extraInfo: { order: order[1] },
          },
          { platform: context.activity.channelId === 'facebook' ? 'facebook' : 'universal' },
        )
        await context.sendActivity(`Order ${order[1]} ships tomorrow.`)
      } else {
        tracker.setNotHandled()
        await context.sendActivity("Sorry, I didn't get that.")
      }
      await next()
    })
  }
}

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const print = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl })
  const connector = await startConnectorStandIn()

  // No MicrosoftAppId: authentication off, as with the Bot Framework Emulator on a dev machine.
  const adapter = new CloudAdapter(new ConfigurationBotFrameworkAuthentication({}))
  adapter.use(new MessengerMiddleware(tracker)) // the one line
  adapter.onTurnError = async (context, error) => {
    print(`  (turn error: ${(error as Error).message})`)
    await context.sendActivity('Something went wrong.')
  }
  const bot = new StoreBot(tracker)

  const server = await serve(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/api/messages') {
      res.writeHead(404).end()
      return
    }
    const body = await readJson(req)
    await adapter.process(botRequest(req, body), botResponse(res), (context) => bot.run(context))
  })

  let pauseServer: Served | undefined
  if (options.webhookSecret) {
    const receive = pauseReceiver({ store: tracker.pauses, secret: options.webhookSecret })
    pauseServer = await serve((req, res) => void receive(req, res))
  }

  let n = 0
  /** One user message as the channel would deliver it. Ids starting `web` use Web Chat, others Messenger. */
  async function say(userId: string, text: string): Promise<string[]> {
    const timestamp = Date.now()
    const facebook = !userId.startsWith('web')
    const conversationId = facebook ? `${userId}-${PAGE_ID}` : `webchat-${userId}`
    const activity = {
      type: 'message',
      id: `in-${++n}`,
      timestamp: new Date(timestamp).toISOString(),
      channelId: facebook ? 'facebook' : 'webchat',
      serviceUrl: `${connector.url}/`,
      from: { id: userId, name: userId === 'PSID_ADA' ? 'Ada' : userId },
      recipient: { id: facebook ? PAGE_ID : 'store-bot', name: 'Store' },
      conversation: { id: conversationId },
      text,
      ...(facebook && {
        channelData: {
          sender: { id: userId },
          recipient: { id: PAGE_ID },
          timestamp,
          message: { mid: `m_in_${n}`, seq: 0, text },
        },
      }),
    }
    const before = connector.replies.length
    const res = await fetch(`${server.url}/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(activity),
    })
    if (res.status >= 300) throw new Error(`/api/messages answered ${res.status}`)
    const replies = connector.replies
      .slice(before)
      .filter((r) => r.conversationId === conversationId && r.activity.type === 'message')
      .map((r) => String(r.activity.text ?? ''))
    print(`${userId} (${activity.channelId}): ${text}`)
    for (const r of replies) print(`  bot: ${r}`)
    if (replies.length === 0) print('  (no answer: paused)')
    return replies
  }

  return {
    name: 'botbuilder',
    tracker,
    say,
    async converse() {
      await say('PSID_ADA', 'hi')
      await say('PSID_ADA', 'where is order 1234?')
      await say('PSID_ADA', 'sing me a song')
      await say('web-user-7', 'hello')
      await say('web-user-7', 'what is the meaning of life')
    },
    pauseWebhookUrl: pauseServer ? `${pauseServer.url}/convotrack/pause` : undefined,
    async close() {
      await tracker.close()
      await server.close()
      await pauseServer?.close()
      await connector.close()
    },
  }
}
