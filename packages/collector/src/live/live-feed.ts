import type { IncomingMessage, ServerResponse } from 'node:http'
import type { StoreChange } from '../store/store'

interface Client {
  res: ServerResponse
  bot: string | undefined
  /** The signed-in user's bots; undefined = every bot. */
  allowed: ReadonlySet<string> | undefined
  /** The session the stream belongs to (ended on sign-out). */
  session: string | undefined
}

/**
 * The firehose: server-sent events to every open dashboard. Events: `message` (a stored
 * message), `pause` (a transcript's pause state changed), `messenger` (a page connected),
 * `handoff` (a conversation entered or left the handoff queue, or changed hands), `note`.
 *
 * @example feed.attach(req, res); feed.publish('message', stored, stored.bot)
 */
export class LiveFeed {
  private readonly clients = new Set<Client>()
  private readonly watchers = new Set<(event: string, bot: string | undefined) => void>()
  private readonly heartbeat: NodeJS.Timeout

  constructor(heartbeatMs = 15_000) {
    // A comment line now and then keeps proxies and idle timeouts from closing the stream.
    this.heartbeat = setInterval(() => {
      for (const c of this.clients) c.res.write(': keep-alive\n\n')
    }, heartbeatMs)
    this.heartbeat.unref()
  }

  /** Number of open streams. */
  get size(): number {
    return this.clients.size
  }

  /**
   * Turns a request into an event stream; only `bot`'s events when given, only events of
   * `scope.bots` when given (events without a bot are then not sent).
   */
  attach(
    req: IncomingMessage,
    res: ServerResponse,
    bot?: string,
    scope: { bots?: readonly string[]; session?: string } = {},
  ): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    })
    res.write('retry: 2000\n\n')
    const client: Client = { res, bot, allowed: scope.bots && new Set(scope.bots), session: scope.session }
    this.clients.add(client)
    req.on('close', () => this.clients.delete(client))
  }

  /**
   * Calls `listener` with the name of every event published (local and bridged from other
   * collectors), open streams or not. Returns the function that stops it.
   */
  watch(listener: (event: string, bot: string | undefined) => void): () => void {
    this.watchers.add(listener)
    return () => this.watchers.delete(listener)
  }

  /** Sends an event to every stream (those filtered on another bot skip it). */
  publish(event: string, data: unknown, bot?: string): void {
    for (const w of this.watchers) w(event, bot)
    if (this.clients.size === 0) return
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
    for (const c of this.clients) {
      if (c.allowed && (bot === undefined || !c.allowed.has(bot))) continue
      if (c.bot === undefined || bot === undefined || c.bot === bot) c.res.write(frame)
    }
  }

  /** Ends the streams of one session (sign-out). */
  endSession(session: string): void {
    for (const c of this.clients)
      if (c.session === session) {
        c.res.end()
        this.clients.delete(c)
      }
  }

  /**
   * A listener for {@link RecordStore.subscribe}: what other collector processes sharing the
   * store stored or changed goes out on this feed like local events (`message`, `pause`,
   * `erase`, `expire`; a Messenger page connected elsewhere is reloaded through the hook).
   */
  bridge(hooks: { reloadMessengerPages?: () => Promise<void> } = {}): (change: StoreChange) => void {
    return (change) => {
      if (change.kind === 'messages') for (const m of change.messages) this.publish('message', m, m.bot)
      else if (change.kind === 'pause') this.publish('pause', change.state, change.state.bot)
      else if (change.kind === 'erase')
        this.publish('erase', { bot: change.bot, userId: change.userId, threads: change.threads }, change.bot)
      else if (change.kind === 'expire')
        for (const bot of change.bots) this.publish('expire', { bot, before: change.before }, bot)
      else if (change.kind === 'handoff')
        this.publish('handoff', { bot: change.bot, thread: change.thread, entry: change.entry ?? null }, change.bot)
      else if (change.kind === 'note') this.publish('note', change.note, change.note.bot)
      else if (change.kind === 'messenger-pages')
        hooks
          .reloadMessengerPages?.()
          .catch((e) => console.error('[convotrack-collector] messenger pages reload failed', e))
    }
  }

  /** Ends every stream. */
  close(): void {
    clearInterval(this.heartbeat)
    for (const c of this.clients) c.res.end()
    this.clients.clear()
  }
}
