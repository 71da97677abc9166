/**
 * A TCP proxy in front of the test's redis-server, so a test can cut connections and act at an
 * exact point of the protocol (when a client has sent a given command) instead of at a time.
 */
import net from 'node:net'

export interface ProxyConnection {
  /** Everything the client has sent so far, as text. */
  readonly sent: string
  /** Closes both sides at once, as a network failure would. */
  cut(): void
  /** Resolves once the client's side has closed. */
  readonly closed: Promise<void>
}

export interface TcpProxy {
  port: number
  /** Connections open now. */
  readonly connections: ReadonlySet<ProxyConnection>
  /** Called with each chunk a client sends, before it is forwarded to the server. */
  onClientData?: (connection: ProxyConnection, chunk: Buffer) => void
  close(): Promise<void>
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const connections = new Set<ProxyConnection>()
  // Half-open both ways: a client that ends its side still receives the answers in flight.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: targetPort, host: '127.0.0.1', allowHalfOpen: true })
    let sent = ''
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()))
    const connection: ProxyConnection = {
      get sent() {
        return sent
      },
      cut() {
        client.destroy()
        upstream.destroy()
      },
      closed,
    }
    connections.add(connection)
    client.on('data', (chunk: Buffer) => {
      sent += chunk.toString('latin1')
      proxy.onClientData?.(connection, chunk)
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (!client.destroyed) client.write(chunk)
    })
    client.on('end', () => upstream.end())
    upstream.on('end', () => client.end())
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('close', () => {
      upstream.destroy()
      connections.delete(connection)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxy: TcpProxy = {
    port: (server.address() as net.AddressInfo).port,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const c of connections) c.cut()
        server.close(() => resolve())
      }),
  }
  return proxy
}
