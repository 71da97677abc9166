/**
 * A Messenger webhook bot on Express: `messengerWebhook(tracker)` after `express.json()` on the
 * webhook route, replies with `trackedSendApi` to the local Graph API stand-in (`graphApiUrl`).
 * Untracked, the same bot posts the same Send API request with plain `fetch`.
 */
import http from 'node:http'
import type { MessengerWebhookBody } from '@convotrack/core'
import { type MessengerSendBody, messengerWebhook, trackedSendApi } from '@convotrack/messenger'
import type Express from '../../../packages/messenger/node_modules/@types/express'
import { type AppFactory, idIn, listen, post, requireFrom } from './app'

const PAGE_ID = '104857600000009'
const ACCESS_TOKEN = 'EAA-resilience-page-token'

export const messengerApp: AppFactory = async ({ tracker, platform, client }) => {
  const express = requireFrom('messenger')('express') as typeof Express
  const graphApiUrl = `${platform.url}/v21.0`
  const send = tracker
    ? trackedSendApi(tracker, { accessToken: ACCESS_TOKEN, graphApiUrl })
    : async (message: MessengerSendBody) => {
        const res = await fetch(`${graphApiUrl}/me/messages?access_token=${ACCESS_TOKEN}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify(message),
        })
        return res.json()
      }
  const app = express()
  const bot: Express.RequestHandler = async (req, res, next) => {
    try {
      for (const entry of (req.body as MessengerWebhookBody).entry)
        for (const item of entry.messaging ?? []) {
          const text = item.message?.text
          if (!text || item.message?.is_echo) continue
          await send({
            recipient: { id: item.sender.id },
            messaging_type: 'RESPONSE',
            message: { text: `echo ${idIn(text)}` },
          })
        }
      res.status(200).send('EVENT_RECEIVED')
    } catch (error) {
      next(error)
    }
  }
  if (tracker) app.post('/webhook', express.json(), messengerWebhook(tracker), bot)
  else app.post('/webhook', express.json(), bot)
  const server = await listen(http.createServer(app))
  let mid = 0
  return {
    async send(user, id) {
      const timestamp = Date.now()
      const body = {
        object: 'page',
        entry: [
          {
            id: PAGE_ID,
            time: timestamp,
            messaging: [
              {
                sender: { id: `PSID_${user}` },
                recipient: { id: PAGE_ID },
                timestamp,
                message: { mid: `m_${++mid}`, seq: mid, text: `hello ${id}` },
              },
            ],
          },
        ],
      }
      const replied = platform.expect(id)
      await post(client, `${server.url}/webhook`, JSON.stringify(body))
      await replied
    },
    close: () => server.close(),
  }
}
