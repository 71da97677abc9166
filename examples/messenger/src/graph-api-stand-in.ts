/**
 * A stand-in for Facebook's Graph API Send endpoint on 127.0.0.1 (Facebook cannot run here):
 * answers `POST /v21.0/me/messages` like the real one — `{ recipient_id, message_id }`, or its
 * error body for an unknown recipient — and keeps what the bot sent.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SentMessage {
  recipientId: string
  text: string | undefined
  accessToken: string | null
}

export interface GraphApiStandIn {
  /** Base to give `trackedSendApi({ graphApiUrl })`. */
  graphApiUrl: string
  sent: SentMessage[]
  close(): Promise<void>
}

export async function startGraphApiStandIn(): Promise<GraphApiStandIn> {
  const sent: SentMessage[] = []
  let n = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://graph')
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }
      if (req.method !== 'POST' || url.pathname !== '/v21.0/me/messages')
        return answer(404, { error: { message: 'Unknown path components', type: 'OAuthException', code: 2500 } })
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
      const recipientId: unknown = body?.recipient?.id
      if (typeof recipientId !== 'string' || !recipientId.startsWith('PSID_'))
        return answer(400, {
          error: {
            message: '(#100) No matching user found',
            type: 'OAuthException',
            code: 100,
            error_subcode: 2018001,
          },
        })
      if (body.message)
        sent.push({ recipientId, text: body.message.text, accessToken: url.searchParams.get('access_token') })
      answer(
        200,
        body.message ? { recipient_id: recipientId, message_id: `m_example_${++n}` } : { recipient_id: recipientId },
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    graphApiUrl: `http://127.0.0.1:${port}/v21.0`,
    sent,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
