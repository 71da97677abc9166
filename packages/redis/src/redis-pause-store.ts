import type { PauseStore } from '@convotrack/core'
import type { Cluster, Redis } from 'ioredis'
import { assertConnected, isDown, withTimeout } from './timeout'

/** An ioredis connection: a single server, Sentinel or Cluster, built with your own settings. */
export type RedisClient = Redis | Cluster

/** Options of {@link RedisPauseStore}. */
export interface RedisPauseStoreOptions {
  /** Prepended to every key and to the invalidation channel. Default `convotrack:pause:`. */
  prefix?: string
  /** Unpause automatically after this many ms (Redis expires the key). Default: never. */
  ttlMs?: number
  /**
   * Keep answers in this process for up to this many ms, so most messages cost no round trip.
   * Changes made anywhere reach every instance through pub/sub; while the subscription is down
   * the cache is bypassed. Default 0 (no cache: one `PTTL` per message).
   */
  localCacheMs?: number
  /** Longest wait for Redis on the message path before answering "not paused". Default 500 ms. */
  timeoutMs?: number
  /** Told about every Redis failure (the store answers "not paused" and keeps going). Default: a warning at most every 10 s. */
  onError?: (error: Error) => void
}

interface CacheEntry {
  paused: boolean
  until: number
}

const MAX_CACHE_ENTRIES = 10_000

/**
 * Pause state shared by every instance of a bot, in Redis. `isPaused` costs at most one round
 * trip (`PTTL`), or none with `localCacheMs`; it never rejects: when Redis is down it reports
 * through `onError` and answers false, so the bot keeps answering (fail open).
 *
 * @example const tracker = createTracker({ apiKey, pauses: new RedisPauseStore(new Redis(process.env.REDIS_URL!), { prefix: 'mybot:pause:' }) })
 */
export class RedisPauseStore implements PauseStore {
  /** The pub/sub channel that carries changed keys to every instance's cache. */
  readonly channel: string
  private readonly prefix: string
  private readonly ttlMs: number | undefined
  private readonly cacheMs: number
  private readonly timeoutMs: number
  private readonly reportError: (error: Error) => void
  private readonly cache = new Map<string, CacheEntry>()
  private subscriber: RedisClient | undefined
  private subscribed = false
  /** Bumped on every invalidation: a read that started before one is not cached. */
  private epoch = 0
  private closed = false

  constructor(
    private readonly client: RedisClient,
    options: RedisPauseStoreOptions = {},
  ) {
    if (!client || typeof (client as Redis).pttl !== 'function')
      throw new TypeError('RedisPauseStore: pass an ioredis client (new Redis(url) or new Cluster(nodes))')
    const { prefix = 'convotrack:pause:', ttlMs, localCacheMs = 0, timeoutMs = 500 } = options
    if (typeof prefix !== 'string') throw new TypeError('RedisPauseStore: prefix must be a string')
    if (ttlMs !== undefined && !(Number.isInteger(ttlMs) && ttlMs > 0))
      throw new TypeError('RedisPauseStore: ttlMs must be a positive integer of milliseconds')
    if (!(localCacheMs >= 0)) throw new TypeError('RedisPauseStore: localCacheMs must be >= 0')
    this.prefix = prefix
    this.ttlMs = ttlMs
    this.cacheMs = localCacheMs
    this.timeoutMs = timeoutMs
    this.channel = `${prefix}__changed__`
    this.reportError = options.onError ?? rateLimitedWarning()
    if (this.cacheMs > 0) this.subscribe()
  }

  /** True while `key` is paused. Never rejects: a Redis failure is reported and answers false. */
  async isPaused(key: string): Promise<boolean> {
    const now = Date.now()
    if (this.subscribed) {
      const hit = this.cache.get(key)
      if (hit && hit.until > now) return hit.paused
    }
    if (isDown(this.client)) {
      this.reportError(new Error(`redis is ${this.client.status}; answering "not paused" for ${key}`))
      return false
    }
    const epoch = this.epoch
    let pttl: number
    try {
      pttl = await withTimeout(this.client.pttl(this.prefix + key), this.timeoutMs, 'PTTL')
    } catch (error) {
      this.reportError(asError(error))
      return false
    }
    // PTTL: -2 no key (not paused), -1 no expiry, else ms left.
    const paused = pttl !== -2
    if (this.subscribed && this.epoch === epoch) {
      const remaining = pttl > 0 ? pttl : Number.POSITIVE_INFINITY
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear()
      this.cache.set(key, { paused, until: Date.now() + Math.min(this.cacheMs, remaining) })
    }
    return paused
  }

  /** Pauses or unpauses `key` on every instance. Rejects when Redis can't be written (the webhook answers 503). */
  async setPaused(key: string, paused: boolean): Promise<void> {
    const redisKey = this.prefix + key
    assertConnected(this.client, paused ? 'SET' : 'DEL')
    const write: Promise<unknown> = paused
      ? this.ttlMs === undefined
        ? this.client.set(redisKey, '1')
        : this.client.set(redisKey, '1', 'PX', this.ttlMs)
      : this.client.del(redisKey)
    this.invalidate(key)
    await withTimeout(write, this.timeoutMs * 4, paused ? 'SET' : 'DEL')
    this.invalidate(key)
    try {
      await withTimeout(this.client.publish(this.channel, key), this.timeoutMs * 4, 'PUBLISH')
    } catch (error) {
      // Stored; only other caches are late. They expire within localCacheMs.
      this.reportError(asError(error))
    }
  }

  /** Stops the invalidation subscriber this store opened. Your client stays open. */
  async close(): Promise<void> {
    this.closed = true
    this.subscribed = false
    this.cache.clear()
    const sub = this.subscriber
    this.subscriber = undefined
    if (sub) {
      sub.removeAllListeners()
      sub.on('error', () => {})
      await sub.quit().catch(() => sub.disconnect())
    }
  }

  private invalidate(key: string): void {
    this.epoch++
    this.cache.delete(key)
  }

  private subscribe(): void {
    // Both Redis and Cluster have duplicate(): a new connection with the same settings. On a
    // single connection, `listen` below subscribes again on every 'ready', with a handler; ioredis's
    // own re-subscription (autoResubscribe) would send a second SUBSCRIBE whose promise nobody
    // holds: when the connection closes before its answer (the bot closes this store, or Redis
    // drops right after a reconnect), it rejects unhandled, which ends a Node process by default.
    const sub: RedisClient = this.client.isCluster
      ? (this.client as Cluster).duplicate()
      : (this.client as Redis).duplicate({ autoResubscribe: false })
    this.subscriber = sub
    const lose = () => {
      // Invalidations may be missed from here on: stop trusting (and filling) the cache.
      this.subscribed = false
      this.epoch++
      this.cache.clear()
    }
    const listen = () => {
      if (this.closed) return
      ;(sub as Redis).subscribe(this.channel).then(
        () => {
          if (this.closed) return
          this.epoch++
          this.cache.clear()
          this.subscribed = true
        },
        (error: unknown) => this.reportError(asError(error)),
      )
    }
    sub.on('message', (channel: string, key: string) => {
      if (channel === this.channel) this.invalidate(key)
    })
    sub.on('close', lose)
    sub.on('end', lose)
    sub.on('error', (error: unknown) => this.reportError(asError(error)))
    sub.on('ready', listen)
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

function rateLimitedWarning(): (error: Error) => void {
  let last = 0
  let held = 0
  return (error) => {
    const now = Date.now()
    if (now - last < 10_000) {
      held++
      return
    }
    console.warn(
      `[convotrack] RedisPauseStore: ${error.message}${held ? ` (+${held} similar)` : ''}; answering "not paused"`,
    )
    last = now
    held = 0
  }
}
