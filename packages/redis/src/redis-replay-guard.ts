import type { RedisClient } from './redis-pause-store'
import { assertConnected, withTimeout } from './timeout'

/** Options of {@link RedisReplayGuard}. */
export interface RedisReplayGuardOptions {
  /** Prepended to every id key. Default `convotrack:webhook-id:`. */
  prefix?: string
  /** Longest wait for Redis before the check fails (the webhook then answers 503 and the sender retries). Default 2000 ms. */
  timeoutMs?: number
}

/**
 * Remembers verified pause-webhook ids in Redis (`SET NX` until the tolerance window ends), so
 * a captured request replayed to ANY instance within the window is ignored. Pass it to
 * `pauseReceiver({ replayGuard })` when several instances receive webhooks.
 *
 * @example pauseReceiver({ store, secret, replayGuard: new RedisReplayGuard(redis) })
 */
export class RedisReplayGuard {
  private readonly prefix: string
  private readonly timeoutMs: number
  constructor(
    private readonly client: RedisClient,
    options: RedisReplayGuardOptions = {},
  ) {
    this.prefix = options.prefix ?? 'convotrack:webhook-id:'
    this.timeoutMs = options.timeoutMs ?? 2000
  }

  /** True when `id` is new (and records it until `timestampSec + toleranceSec`); false when seen. Rejects when Redis is down. */
  async check(id: string, timestampSec: number, toleranceSec: number, nowMs = Date.now()): Promise<boolean> {
    assertConnected(this.client, 'SET NX')
    const ttl = Math.max(1, (timestampSec + toleranceSec) * 1000 - nowMs)
    const result = await withTimeout(this.client.set(this.prefix + id, '1', 'PX', ttl, 'NX'), this.timeoutMs, 'SET NX')
    return result === 'OK'
  }

  /** Forgets `id` (its processing failed on our side), so the sender's retry is processed. */
  async forget(id: string): Promise<void> {
    assertConnected(this.client, 'DEL')
    await withTimeout(this.client.del(this.prefix + id), this.timeoutMs, 'DEL')
  }
}
