/**
 * A local stand-in for Slack in Socket Mode: one HTTP server on 127.0.0.1 (port 0) that answers
 * the Web API under `/api/` and accepts the Socket Mode WebSocket on `/link`.
 *
 * Bolt's SocketModeReceiver runs @slack/socket-mode 3, whose client is undici's `WebSocket` (it
 * does not use the `ws` package, so `ws` is not a dependency here). The server side is the small
 * part of RFC 6455 that Slack's protocol needs: the upgrade handshake, unfragmented text frames,
 * ping → pong and the close handshake. The real undici client checks all of it, so a mistake here
 * fails the test, it cannot hide one.
 */
import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export const BOT_USER_ID = 'U0BOT'
export const BOT_ID = 'B0BOT'

/** One Web API call that reached the fake: method, the bearer token it carried, its arguments. */
export interface ApiCall {
  method: string
  token: string
  args: Record<string, string>
}

/** A Socket Mode envelope, as Slack sends it on the WebSocket. */
export interface Envelope {
  envelope_id: string
  type: string
  accepts_response_payload: boolean
  payload: Record<string, unknown>
  retry_attempt?: number
  retry_reason?: string
}

export interface FakeSocketModeSlack {
  /** For `clientOptions.slackApiUrl`. */
  apiUrl: string
  /** Every Web API call, in order. */
  calls: ApiCall[]
  /** The arguments of each `chat.postMessage`, in order. */
  readonly posted: Array<Record<string, string>>
  /** Every JSON message the client sent on the WebSocket (acks), in order. */
  received: Array<Record<string, unknown>>
  /** Sends `envelope` to the connected client; resolves with the client's ack for its `envelope_id`. */
  send(envelope: Envelope, timeoutMs?: number): Promise<Record<string, unknown>>
  /** Resolves once the client has sent its close frame (and got ours back). */
  clientClosed(timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'
const OP = { text: 0x1, close: 0x8, ping: 0x9, pong: 0xa } as const

/** Starts the fake. `teamNames` answers `team.info` (default `Team <id>`). */
export async function startFakeSocketModeSlack(
  opts: { teamNames?: Record<string, string> } = {},
): Promise<FakeSocketModeSlack> {
  const calls: ApiCall[] = []
  const received: Array<Record<string, unknown>> = []
  const acks = new Map<string, { resolve: (ack: Record<string, unknown>) => void; reject: (e: Error) => void }>()
  const sockets = new Set<Socket>()
  let link: Socket | undefined
  let closedByClient = false
  const closeWaiters: Array<() => void> = []
  let ts = 0

  const answer = (method: string, args: Record<string, string>, port: number): Record<string, unknown> => {
    switch (method) {
      case 'apps.connections.open':
        return { ok: true, url: `ws://127.0.0.1:${port}/link` }
      case 'auth.test':
        return { ok: true, user_id: BOT_USER_ID, bot_id: BOT_ID, team_id: 'T1', team: 'Acme', user: 'bot' }
      case 'chat.postMessage':
        ts++
        return {
          ok: true,
          channel: args.channel,
          ts: `1700000100.${String(ts).padStart(6, '0')}`,
          message: { type: 'message', text: args.text, user: BOT_USER_ID },
        }
      case 'team.info': {
        const team = args.team ?? ''
        return { ok: true, team: { id: team, name: opts.teamNames?.[team] ?? `Team ${team}`, domain: 'acme' } }
      }
      default:
        return { ok: false, error: 'unknown_method' }
    }
  }

  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => {
      raw += c
    })
    req.on('end', () => {
      const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0] ?? ''
      const args = req.headers['content-type']?.includes('json')
        ? (JSON.parse(raw || '{}') as Record<string, string>)
        : Object.fromEntries(new URLSearchParams(raw))
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '')
      calls.push({ method, token, args })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer(method, args, port)))
    })
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })

  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    const key = req.headers['sec-websocket-key']
    if (req.url !== '/link' || typeof key !== 'string') {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
      return
    }
    const accept = createHash('sha1')
      .update(key + WS_GUID)
      .digest('base64')
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    )
    link = socket
    let buffered: Buffer = Buffer.from(head)
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      try {
        for (let frame = readFrame(buffered); frame; frame = readFrame(buffered)) {
          buffered = buffered.subarray(frame.size)
          if (frame.opcode === OP.ping) socket.write(frameOf(OP.pong, frame.payload))
          else if (frame.opcode === OP.close) {
            closedByClient = true
            socket.end(frameOf(OP.close, frame.payload))
            for (const w of closeWaiters.splice(0)) w()
          } else if (frame.opcode === OP.text) {
            const message = JSON.parse(frame.payload.toString('utf8')) as Record<string, unknown>
            received.push(message)
            const waiter = acks.get(String(message.envelope_id))
            acks.delete(String(message.envelope_id))
            waiter?.resolve(message)
          }
        }
      } catch (error) {
        // A frame this fake cannot read: fail whoever waits for an ack instead of hanging.
        socket.destroy()
        for (const waiter of acks.values()) waiter.reject(error as Error)
        acks.clear()
      }
    })
    // Slack's greeting: the client reports itself connected (app.start() resolves) on `hello`.
    socket.write(
      frameOf(
        OP.text,
        Buffer.from(
          JSON.stringify({
            type: 'hello',
            num_connections: 1,
            debug_info: { host: 'fake-slack', approximate_connection_time: 3600 },
            connection_info: { app_id: 'A1' },
          }),
        ),
      ),
    )
  })

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port

  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    get posted() {
      return calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.args)
    },
    received,
    // Timeouts here detect a hang; a loaded machine is slow, not broken.
    send(envelope, timeoutMs = 60_000) {
      const socket = link
      if (!socket) return Promise.reject(new Error('no Socket Mode client is connected'))
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ack for ${envelope.envelope_id} in ${timeoutMs} ms`)),
          timeoutMs,
        )
        acks.set(envelope.envelope_id, {
          resolve: (ack) => {
            clearTimeout(timer)
            resolve(ack)
          },
          reject: (error) => {
            clearTimeout(timer)
            reject(error)
          },
        })
        socket.write(frameOf(OP.text, Buffer.from(JSON.stringify(envelope))))
      })
    },
    clientClosed(timeoutMs = 60_000) {
      if (closedByClient) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the client sent no close frame in ${timeoutMs} ms`)),
          timeoutMs,
        )
        closeWaiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    },
    close() {
      for (const s of sockets) s.destroy()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/** One complete frame at the start of `buf` (client frames are masked), or undefined if more bytes are needed. */
function readFrame(buf: Buffer): { opcode: number; payload: Buffer; size: number } | undefined {
  if (buf.length < 2) return undefined
  const first = buf[0] as number
  const second = buf[1] as number
  if ((first & 0x80) === 0) throw new Error('fake Slack: fragmented frames are not expected from the client')
  let length = second & 0x7f
  let offset = 2
  if (length === 126) {
    if (buf.length < 4) return undefined
    length = buf.readUInt16BE(2)
    offset = 4
  } else if (length === 127) {
    if (buf.length < 10) return undefined
    length = Number(buf.readBigUInt64BE(2))
    offset = 10
  }
  const masked = (second & 0x80) !== 0
  const start = offset + (masked ? 4 : 0)
  if (buf.length < start + length) return undefined
  const payload = Buffer.from(buf.subarray(start, start + length))
  if (masked)
    for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (buf[offset + (i % 4)] as number)
  return { opcode: first & 0x0f, payload, size: start + length }
}

/** A final, unmasked server frame. */
function frameOf(opcode: number, payload: Buffer): Buffer {
  const n = payload.length
  const header =
    n < 126
      ? Buffer.from([0x80 | opcode, n])
      : n < 65536
        ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(n)])
  return Buffer.concat([header, payload])
}

function bigLength(n: number): Buffer {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt(n))
  return b
}
