import { MemoryPauseStore } from '@convotrack/core'
import { pauseStoreContract } from './pause-store-contract'

pauseStoreContract('MemoryPauseStore', ({ ttlMs }) => ({ store: new MemoryPauseStore({ ttlMs }) }))
