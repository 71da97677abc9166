/**
 * A driven clock for a RedisPauseStore under test: Redis's own clock cannot be moved, so time
 * "passes" by shortening the TTLs of the keys (deleting those that run out) while vitest moves
 * `Date` (which the store's local cache reads). Call `vi.useFakeTimers({ toFake: ['Date'] })`
 * first; sockets and ioredis's own timers stay real.
 */
import type { Redis } from 'ioredis'
import { vi } from 'vitest'

const ADVANCE = `
local ms = tonumber(ARGV[2])
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  local left = redis.call('PTTL', key)
  if left > 0 then
    if left <= ms then redis.call('DEL', key) else redis.call('PEXPIRE', key, left - ms) end
  end
end
return 0`

/** Moves time forward by `ms` for the keys under `prefix` and for `Date`. */
export async function advanceRedisClock(admin: Redis, prefix: string, ms: number): Promise<void> {
  await admin.eval(ADVANCE, 0, `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, ms)
  vi.setSystemTime(Date.now() + ms)
}
