import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A pass-through HTTP proxy in front of a collector that counts requests by path (query left
 * out), so a test can tell what a client really sent: `/track` singles or `/track/batch`.
 *
 * @example const proxy = await countingProxy(collector.url); createTracker({ baseUrl: proxy.url }); proxy.count('/track/batch')
 */
export async function countingProxy(target: string): Promise<{
  url: string
  count(path: string): number
  close(): Promise<void>
}> {
  const counts = new Map<string, number>()
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const to = new URL(target)
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? ''
    counts.set(path, (counts.get(path) ?? 0) + 1)
    const upstream = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' })
      res.end('{"error":{"code":"bad_gateway","message":"collector unreachable","path":""}}')
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise((resolve) => {
        agent.destroy()
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
