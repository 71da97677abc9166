/** Plain node:http plumbing for the example: servers on 127.0.0.1, bodies, botbuilder's Request/Response. */
import type http from 'node:http'
import type { Request, Response } from 'botbuilder'

export { type Served, serve } from '../../serve'

export function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('error', reject)
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'))
      } catch (error) {
        reject(error)
      }
    })
  })
}

/** botbuilder's `Request`/`Response` over Node's own objects (what Express or restify would give it). */
export function botRequest(req: http.IncomingMessage, body: Record<string, unknown>): Request {
  return { body, headers: req.headers, method: req.method }
}

export function botResponse(res: http.ServerResponse): Response {
  const response: Response = {
    socket: res.socket,
    status(code: number) {
      res.statusCode = code
      return response
    },
    header(name: string, value: unknown) {
      res.setHeader(name, String(value))
      return response
    },
    send(body?: unknown) {
      if (body !== undefined) res.write(typeof body === 'string' ? body : JSON.stringify(body))
      return response
    },
    end() {
      res.end()
    },
  }
  return response
}
