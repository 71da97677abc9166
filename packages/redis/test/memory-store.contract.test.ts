import { MemoryPauseStore } from '@convotrack/core'
import { pauseStoreContract } from './pause-store-contract'

pauseStoreContract('MemoryPauseStore', ({ ttlMs }) => {
  let now = 1_700_000_000_000
  return {
    store: new MemoryPauseStore({ ttlMs, now: () => now }),
    advance: (ms) => {
      now += ms
    },
  }
})
