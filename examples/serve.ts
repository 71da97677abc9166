/** A server for the examples: listens on 127.0.0.1 on a free port; `close()` also drops kept-alive connections. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Served {
  url: string
  close(): Promise<void>
}

export async function serve(handler: http.RequestListener): Promise<Served> {
  const server = http.createServer(handler)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
