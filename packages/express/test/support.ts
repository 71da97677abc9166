import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Express } from 'express'

export interface Served {
  url: string
  close(): Promise<void>
}

/** Serves an app (or a plain listener) on 127.0.0.1, port 0. */
export function serve(app: Express | http.RequestListener): Promise<Served> {
  return new Promise((resolve) => {
    const server = http.createServer(app as http.RequestListener)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections()
            server.close(() => r())
          }),
      })
    })
  })
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  json(): unknown
}

/** A POST (or any method) with exact bytes and headers; `chunked` leaves out Content-Length. */
export function send(
  url: string,
  options: { method?: string; body?: string | Buffer; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body)
    const headers: Record<string, string> = { ...options.headers }
    if (body && !options.chunked) headers['content-length'] = String(body.length)
    const req = http.request(url, { method: options.method ?? 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (body) {
      if (options.chunked) {
        // several writes so the body really arrives in chunks
        for (let i = 0; i < body.length; i += 8192) req.write(body.subarray(i, i + 8192))
      } else req.write(body)
    }
    req.end()
  })
}
