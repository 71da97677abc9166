/**
 * A universal-shape bot on Express: `POST /chat` `{ userId, text, conversationId }` →
 * `{ replies }`, tracked with `tracker.universal` inside a turn, with the pause check.
 */
import http from 'node:http'
import { pauseKey } from '@convotrack/core'
import type Express from '../../../packages/messenger/node_modules/@types/express'
import { type AppFactory, idIn, listen, post, requireFrom } from './app'

export const universalApp: AppFactory = async ({ tracker, client }) => {
  const express = requireFrom('messenger')('express') as typeof Express
  const app = express()
  app.use(express.json())
  app.post('/chat', async (req, res) => {
    const { userId, text, conversationId } = req.body as { userId: string; text: string; conversationId: string }
    const reply = `echo ${idIn(text)}`
    if (!tracker) {
      res.json({ replies: [reply] })
      return
    }
    // The tracking: one turn, the incoming record, the pause check, the outgoing record.
    const replies = await tracker.withTurn(async () => {
      try {
        tracker.universal.logIncoming({ userId, text, conversationId }, { intent: { name: 'echo', confidence: 1 } })
      } catch (error) {
        tracker.reportError(error)
      }
      if (await tracker.isPaused(pauseKey({ userId, conversationId }))) return []
      tracker.universal.logOutgoing({ userId, text: reply, conversationId })
      return [reply]
    })
    res.json({ replies })
  })
  const server = await listen(http.createServer(app))
  return {
    async send(user, id) {
      const answer = await post(
        client,
        `${server.url}/chat`,
        JSON.stringify({ userId: user, text: `hello ${id}`, conversationId: `conv-${user}` }),
      )
      if (!answer.includes(id)) throw new Error(`no reply to ${id}: ${answer}`)
    },
    close: () => server.close(),
  }
}
