export { type RedisClient, RedisPauseStore, type RedisPauseStoreOptions } from './redis-pause-store'
export { RedisReplayGuard, type RedisReplayGuardOptions } from './redis-replay-guard'
