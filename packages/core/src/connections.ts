import { Client } from 'undici'

/**
 * The keep-alive connections to the tracking service: one undici `Client` (one socket, no
 * pipelining) per request in flight. A request takes the connection answered last (warm, its
 * socket open) and gives it back when its answer is read, so the sockets open follow the
 * concurrency limit: at most the highest number of requests in flight, and a connection given
 * back while more are open than the limit needs is closed. (undici's `Pool` scans its clients
 * for one not flagged busy on every request, and opens another when the one just answered is
 * still flagged: about twice the sockets the limit needs.)
 */
export class Connections {
  /** Connections waiting for a request, the one freed last at the end. */
  private readonly idle: Client[] = []
  private readonly all = new Set<Client>()
  /** Connections whose socket is open (undici's `connect` / `disconnect` events). */
  private readonly open = new Set<Client>()
  private readonly onConnect = (_origin: unknown, targets: readonly unknown[]): void => {
    this.open.add(targets[0] as Client)
  }
  private readonly onDisconnect = (_origin: unknown, targets: readonly unknown[]): void => {
    this.open.delete(targets[0] as Client)
  }

  constructor(
    private readonly origin: string,
    private readonly options: Client.Options,
  ) {}

  /** A connection for one request: the warmest idle one, else a new one. */
  take(): Client {
    const warm = this.idle.pop()
    if (warm) return warm
    const client = new Client(this.origin, this.options)
    client.on('connect', this.onConnect)
    client.on('disconnect', this.onDisconnect)
    this.all.add(client)
    return client
  }

  /**
   * Whether a request sent on `client` now goes over a socket that is already open (kept alive
   * from an earlier request) rather than a new one: such a socket may have been closed by the
   * service a moment ago without the client knowing yet.
   */
  reuses(client: Client): boolean {
    return this.open.has(client)
  }

  /** The request on `client` ended: it waits for the next one, or closes when `needed` are already open. */
  give(client: Client, needed: number): void {
    if (!this.all.has(client)) return
    if (this.all.size > needed) {
      this.all.delete(client)
      this.open.delete(client)
      client.close().catch(() => {})
      return
    }
    this.idle.push(client)
  }

  /** Cuts a connection whose request must end now (its deadline passed before it connected). */
  discard(client: Client, reason: Error): void {
    this.all.delete(client)
    this.open.delete(client)
    client.destroy(reason).catch(() => {})
  }

  /** Closes every connection, cutting requests in flight. */
  async destroy(): Promise<void> {
    const all = [...this.all]
    this.all.clear()
    this.open.clear()
    this.idle.length = 0
    await Promise.all(all.map((c) => c.destroy().catch(() => {})))
  }
}
