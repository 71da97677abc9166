import { RedisPauseStore } from '@convotrack/redis'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest'
import { pauseStoreContract } from './pause-store-contract'
import { advanceRedisClock } from './redis-clock'
import { type RedisServer, startRedisServer } from './redis-server'

let server: RedisServer
let client: Redis
let n = 0

beforeAll(async () => {
  server = await startRedisServer()
  client = new Redis(server.port, '127.0.0.1')
})
// Time is driven (see redis-clock.ts): Date for the store's cache, key TTLs in Redis.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})
afterAll(async () => {
  await client?.quit()
  await server?.stop()
})

// Each test gets its own prefix, so tests never see each other's keys.
pauseStoreContract('RedisPauseStore', ({ ttlMs }) => {
  const prefix = `contract:${++n}:`
  const store = new RedisPauseStore(client, { prefix, ttlMs, timeoutMs: 10_000 }) // past it: fail open
  return { store, advance: (ms) => advanceRedisClock(client, prefix, ms), cleanup: () => store.close() }
})

pauseStoreContract('RedisPauseStore with localCacheMs', async ({ ttlMs }) => {
  const prefix = `contract-cached:${++n}:`
  const store = new RedisPauseStore(client, { prefix, ttlMs, localCacheMs: 5_000, timeoutMs: 10_000 })
  return { store, advance: (ms) => advanceRedisClock(client, prefix, ms), cleanup: () => store.close() }
})
