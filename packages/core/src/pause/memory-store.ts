import type { PauseStore } from './store'

/** Options of {@link MemoryPauseStore}. */
export interface MemoryPauseStoreOptions {
  /** Unpause automatically after this many ms (a forgotten pause never silences a user forever). Default: never. */
  ttlMs?: number
  /** Clock, injectable for tests. */
  now?: () => number
}

/**
 * Pause state in this process's memory: the default store, right for a bot on one process.
 * For several instances use `RedisPauseStore` from `@convotrack/redis`.
 */
export class MemoryPauseStore implements PauseStore {
  private readonly paused = new Map<string, number>()
  private readonly ttlMs: number | undefined
  private readonly now: () => number

  constructor(options: MemoryPauseStoreOptions = {}) {
    this.ttlMs = options.ttlMs
    this.now = options.now ?? Date.now
  }

  isPaused(key: string): boolean {
    const until = this.paused.get(key)
    if (until === undefined) return false
    if (until <= this.now()) {
      this.paused.delete(key)
      return false
    }
    return true
  }

  setPaused(key: string, paused: boolean): void {
    if (paused) this.paused.set(key, this.ttlMs === undefined ? Number.POSITIVE_INFINITY : this.now() + this.ttlMs)
    else this.paused.delete(key)
  }

  /** Keys paused now. */
  keys(): string[] {
    return [...this.paused.keys()].filter((k) => this.isPaused(k))
  }
}
