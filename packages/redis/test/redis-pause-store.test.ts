import { RedisPauseStore, RedisReplayGuard } from '@convotrack/redis'
import { Redis, type RedisOptions } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { advanceRedisClock } from './redis-clock'
import { type RedisServer, startRedisServer } from './redis-server'
import { type ProxyConnection, startTcpProxy } from './tcp-proxy'

let server: RedisServer
const opened: Array<{ close?: () => Promise<void>; quit?: () => Promise<unknown> }> = []
let n = 0

/** A new connection, as a separate bot instance would have. */
function connect(options: RedisOptions = {}): Redis {
  const c = new Redis({ port: server.port, host: '127.0.0.1', ...options })
  c.on('error', () => {}) // errors are asserted through the store's onError
  opened.push(c)
  return c
}
function store(client: Redis, options: ConstructorParameters<typeof RedisPauseStore>[1] = {}): RedisPauseStore {
  // A generous Redis timeout unless a test is about it: past it the store answers "not paused"
  // (fail open), and a loaded machine can take longer than the 500 ms default.
  const s = new RedisPauseStore(client, { timeoutMs: 10_000, ...options })
  opened.push(s)
  return s
}
/** Waits for `cond`; the timeout only detects a hang (a loaded machine is slow, never wrong). */
async function until(cond: () => Promise<boolean>, timeoutMs = 60_000): Promise<number> {
  const start = performance.now()
  while (!(await cond())) {
    if (performance.now() - start > timeoutMs) throw new Error('condition not met in time')
    await new Promise((r) => setImmediate(r))
  }
  return performance.now() - start
}
async function commandCounts(admin: Redis): Promise<Record<string, number>> {
  const info = await admin.info('commandstats')
  const out: Record<string, number> = {}
  for (const m of info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) out[m[1] as string] = Number(m[2])
  return out
}
async function subscribed(s: RedisPauseStore): Promise<void> {
  await until(async () => (s as unknown as { subscribed: boolean }).subscribed)
}

beforeAll(async () => {
  server = await startRedisServer()
})
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) {
    if (o instanceof RedisPauseStore) await o.close()
    else await (o as Redis).quit().catch(() => (o as Redis).disconnect())
  }
})
afterAll(async () => {
  await server?.stop()
})

describe('RedisPauseStore', () => {
  it('stores `<prefix><key>` in Redis, with a PX expiry when ttlMs is set', async () => {
    const admin = connect()
    const s = store(connect(), { prefix: 'bot-a:pause:', ttlMs: 60_000 })
    await s.setPaused('C42', true)
    expect(await admin.get('bot-a:pause:C42')).toBe('1')
    const pttl = await admin.pttl('bot-a:pause:C42')
    expect(pttl).toBeGreaterThan(59_000)
    expect(pttl).toBeLessThanOrEqual(60_000)
    await s.setPaused('C42', false)
    expect(await admin.exists('bot-a:pause:C42')).toBe(0)
  })

  it('prefixes keep bots apart', async () => {
    const client = connect()
    const a = store(client, { prefix: 'a:' })
    const b = store(client, { prefix: 'b:' })
    await a.setPaused('u1', true)
    expect(await a.isPaused('u1')).toBe(true)
    expect(await b.isPaused('u1')).toBe(false)
  })

  it('isPaused costs exactly one round trip (one PTTL) without a cache', async () => {
    const admin = connect()
    const s = store(connect(), { prefix: `rt:${++n}:` })
    await s.setPaused('p', true)
    await admin.config('RESETSTAT')
    for (let i = 0; i < 10; i++) await s.isPaused(i % 2 ? 'p' : 'q')
    const counts = await commandCounts(admin)
    delete counts.config
    delete counts.info
    expect(counts).toEqual({ pttl: 10 })
  })

  it('with localCacheMs, repeated checks cost no round trip', async () => {
    const admin = connect()
    const s = store(connect(), { prefix: `cache:${++n}:`, localCacheMs: 60_000 })
    await subscribed(s)
    await admin.config('RESETSTAT')
    for (let i = 0; i < 100; i++) await s.isPaused('u1')
    const counts = await commandCounts(admin)
    expect(counts.pttl).toBe(1)
  })

  it('a change on one instance reaches the other instance’s cache through pub/sub (measured)', async () => {
    const prefix = `prop:${++n}:`
    // Two instances: separate connections, a cache far longer than any wait below.
    const a = store(connect(), { prefix, localCacheMs: 3_600_000 })
    const b = store(connect(), { prefix, localCacheMs: 3_600_000 })
    await subscribed(a)
    await subscribed(b)
    const samples: number[] = []
    for (let i = 0; i < 50; i++) {
      const key = `user-${i}`
      expect(await b.isPaused(key)).toBe(false) // now cached as "not paused" on b
      const start = performance.now()
      await a.setPaused(key, true)
      await until(() => b.isPaused(key))
      samples.push(performance.now() - start)
      await a.setPaused(key, false)
      await until(async () => !(await b.isPaused(key)))
    }
    samples.sort((x, y) => x - y)
    const p50 = samples[Math.floor(samples.length / 2)] as number
    const max = samples[samples.length - 1] as number
    // Printed, not asserted (a loaded machine only makes it slower): with a one-hour cache,
    // `until` can only succeed through the pub/sub invalidation.
    console.log(
      `[redis] pause propagation to another instance's cache, from the setPaused call: p50 ${p50.toFixed(2)} ms, max ${max.toFixed(2)} ms (n=50)`,
    )
  })

  it('a pause set on one instance is seen at once by another without a cache', async () => {
    const prefix = `nocache:${++n}:`
    const a = store(connect(), { prefix })
    const b = store(connect(), { prefix })
    await a.setPaused('u', true)
    expect(await b.isPaused('u')).toBe(true)
  })

  it('when its subscription drops, an instance stops trusting its cache, then resubscribes', async () => {
    const admin = connect()
    const prefix = `drop:${++n}:`
    const a = store(connect(), { prefix })
    const b = store(connect(), { prefix, localCacheMs: 60_000 })
    await subscribed(b)
    expect(await b.isPaused('u')).toBe(false) // cached
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    await a.setPaused('u', true) // b's subscriber may miss this publish
    await until(() => b.isPaused('u'))
    await subscribed(b) // back on pub/sub
    await a.setPaused('u', false)
    await until(async () => !(await b.isPaused('u')))
  })

  it('a cached pause does not outlive its Redis TTL', async () => {
    vi.useFakeTimers({ toFake: ['Date'] }) // a driven clock (redis-clock.ts)
    try {
      const admin = connect()
      const prefix = `ttlcache:${++n}:`
      const s = store(connect(), { prefix, ttlMs: 60_000, localCacheMs: 600_000 })
      await subscribed(s)
      await s.setPaused('u', true)
      expect(await s.isPaused('u')).toBe(true)
      await advanceRedisClock(admin, prefix, 30_000)
      expect(await s.isPaused('u')).toBe(true)
      await advanceRedisClock(admin, prefix, 31_000)
      expect(await s.isPaused('u')).toBe(false)
    } finally {
      vi.useRealTimers()
    }
  })

  it('rejects a client that is not an ioredis client, and bad options', () => {
    expect(() => new RedisPauseStore({} as never)).toThrow(/ioredis client/)
    expect(() => new RedisPauseStore(connect(), { ttlMs: -1 })).toThrow(/ttlMs/)
  })
})

describe('RedisPauseStore when Redis goes down', () => {
  it('fails open (answers "not paused", reports through onError), then recovers when Redis returns', async () => {
    const errors: Error[] = []
    const s = store(connect({ retryStrategy: () => 50, maxRetriesPerRequest: 1 }), {
      prefix: `down:${++n}:`,
      localCacheMs: 1000,
      timeoutMs: 500,
      onError: (e) => errors.push(e),
    })
    await subscribed(s)
    await s.setPaused('u', true)
    expect(await s.isPaused('u')).toBe(true)

    await server.stop()
    // Answered while Redis is still down (it comes back only below): bounded by timeoutMs, not
    // by reconnect attempts. Were they waiting for Redis, this would never resolve.
    const answers = await Promise.all(Array.from({ length: 20 }, () => s.isPaused('u')))
    expect(answers.every((a) => a === false)).toBe(true) // the bot keeps answering
    expect(errors.length).toBeGreaterThan(0)
    await expect(s.setPaused('u', true)).rejects.toThrow() // the webhook answers 503 and the service retries

    await server.start() // empty again: no persistence
    await until(async () => {
      try {
        await s.setPaused('u', true)
        return true
      } catch {
        return false
      }
    })
    await until(() => s.isPaused('u'))
    await subscribed(s)
  })
})

describe('RedisPauseStore closed while its subscriber reconnects', () => {
  it('leaves no unhandled rejection behind (under Node’s default it would end the bot)', async () => {
    const proxy = await startTcpProxy(server.port)
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const s = new RedisPauseStore(connect({ port: proxy.port }), {
        prefix: `reconnect:${++n}:`,
        localCacheMs: 60_000,
        onError: () => {},
      })
      await subscribed(s)
      // The bot shuts down at the moment its subscriber, reconnecting after a network cut, sends
      // its ready check (INFO): the answer arrives after close(), and the connection becomes ready
      // just as it closes.
      let reconnected: ProxyConnection | undefined
      let closing: Promise<void> | undefined
      proxy.onClientData = (connection, chunk) => {
        if (closing || !/\binfo\b/i.test(chunk.toString('latin1'))) return
        reconnected = connection
        closing = s.close()
      }
      for (const c of proxy.connections) if (/subscribe/i.test(c.sent)) c.cut()
      await vi.waitFor(() => expect(closing).toBeDefined(), { timeout: 60_000, interval: 5 })
      await closing
      await reconnected?.closed
      // A rejection nobody handles is reported once the microtasks of that close have run.
      await new Promise((r) => setImmediate(r))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
      await proxy.close()
    }
  })
})

describe('RedisReplayGuard', () => {
  it('shares seen webhook ids between instances until the window ends; forget allows a retry', async () => {
    const a = new RedisReplayGuard(connect(), { prefix: `ids:${++n}:`, timeoutMs: 10_000 })
    const b = new RedisReplayGuard(connect(), { prefix: `ids:${n}:`, timeoutMs: 10_000 })
    const now = Date.now()
    const ts = Math.floor(now / 1000)
    expect(await a.check('msg_1', ts, 300)).toBe(true)
    expect(await a.check('msg_1', ts, 300)).toBe(false)
    expect(await b.check('msg_1', ts, 300)).toBe(false) // another instance
    await b.forget('msg_1')
    expect(await a.check('msg_1', ts, 300)).toBe(true)
    // Expires with the tolerance window: a timestamp whose window ends in ~200 ms.
    expect(await a.check('msg_2', ts, 0, ts * 1000 - 200)).toBe(true)
    // A check while the id is remembered changes nothing, so polling waits for the expiry itself.
    await until(() => b.check('msg_2', ts, 0))
  })
})
