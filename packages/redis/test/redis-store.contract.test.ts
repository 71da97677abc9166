import { RedisPauseStore } from '@convotrack/redis'
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { pauseStoreContract } from './pause-store-contract'
import { type RedisServer, startRedisServer } from './redis-server'

let server: RedisServer
let client: Redis
let n = 0

beforeAll(async () => {
  server = await startRedisServer()
  client = new Redis(server.port, '127.0.0.1')
})
afterAll(async () => {
  await client?.quit()
  await server?.stop()
})

// Each test gets its own prefix, so tests never see each other's keys.
pauseStoreContract('RedisPauseStore', ({ ttlMs }) => {
  const store = new RedisPauseStore(client, { prefix: `contract:${++n}:`, ttlMs })
  return { store, cleanup: () => store.close() }
})

pauseStoreContract('RedisPauseStore with localCacheMs', async ({ ttlMs }) => {
  const store = new RedisPauseStore(client, { prefix: `contract-cached:${++n}:`, ttlMs, localCacheMs: 5_000 })
  return { store, cleanup: () => store.close() }
})
