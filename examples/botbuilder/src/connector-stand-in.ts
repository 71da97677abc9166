/**
 * A stand-in for the Bot Framework channel service (the "connector") on 127.0.0.1: the Azure
 * Facebook/Web Chat channels cannot run here. The bot's CloudAdapter posts replies to
 * `{serviceUrl}/v3/conversations/{id}/activities/{replyToId}`; this answers with the
 * `ResourceResponse` `{ id }` a channel returns and keeps the activities.
 */
import { readJson, type Served, serve } from './http'

export interface ConnectorStandIn extends Served {
  /** Activities the bot sent, with the id given to each. */
  replies: Array<{ id: string; conversationId: string; activity: Record<string, unknown> }>
}

export async function startConnectorStandIn(): Promise<ConnectorStandIn> {
  const replies: ConnectorStandIn['replies'] = []
  const served = await serve(async (req, res) => {
    const match = /^\/v3\/conversations\/([^/]+)\/activities(?:\/[^/]+)?$/.exec(req.url ?? '')
    if (req.method !== 'POST' || !match?.[1]) {
      res.writeHead(404).end()
      return
    }
    const activity = await readJson(req)
    const id = `bf-activity-${replies.length + 1}`
    replies.push({ id, conversationId: decodeURIComponent(match[1]), activity })
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }))
  })
  return { ...served, replies }
}
