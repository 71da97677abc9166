/**
 * Answers of reads that may outgrow a request: computed off the request path, kept, and served
 * again while nothing they count has changed (stale-while-revalidate, as analytics services keep
 * their insights).
 *
 * - A kept answer is served at once while it is **fresh**: the request's `mark` (what the store
 *   holds, e.g. its newest message id) is the one its computation began with, no change was told
 *   since ({@link AnswerCache.changed}: deletions), and it was computed less than `maxAgeMs` ago.
 * - Otherwise the answer is computed again (one computation per key at a time, at most
 *   `concurrency` at once; a request for a key being computed joins it). The request waits for it
 *   up to `waitMs`: an answer that comes in time is served as it is now.
 * - One that does not: the previous answer is served (`refreshing`), or, when there is none yet,
 *   `preparing` (the route answers 202 and the client asks again). A key whose last computation
 *   took longer than `waitMs` serves its previous answer without waiting: a slow read is paid off
 *   the request path, not by every request while the bot is busy.
 * - A computation that fails hands its error to the next request for the key (a store fault is
 *   answered as one), and the next request after that computes again.
 */

export interface AnswerCacheOptions {
  /** How long a request waits for a computation before answering without it. */
  waitMs: number
  /** A kept answer is computed again this long after its computation ended, even when no change was seen (changes made elsewhere). */
  maxAgeMs: number
  /** Keys kept (the least recently used go first). */
  maxEntries: number
  /** Computations running at once; more wait for a place. */
  concurrency: number
  now?: () => number
}

/** What a request gets: an answer (as of when its computation began), or none yet. */
export type CachedAnswer<T> =
  | {
      state: 'ready'
      value: T
      /** When the computation of this answer began (epoch ms): it counts what was stored then. */
      asOf: number
      /** A newer computation is running: this answer may be behind. */
      refreshing: boolean
    }
  | { state: 'preparing' }

interface Entry<T> {
  value?: T
  asOf: number
  /** The change count when the kept answer's computation began. */
  version: number
  /** The store's mark when the kept answer's computation began. */
  mark: string
  /** How long the last finished computation took. */
  tookMs: number
  /** When the kept answer's computation ended (its age counts from then). */
  doneAt: number
  running?: Promise<void>
  error?: unknown
}

export class AnswerCache<T> {
  private readonly entries = new Map<string, Entry<T>>()
  private version = 0
  private active = 0
  private readonly queue: Array<() => void> = []
  private readonly now: () => number

  constructor(private readonly options: AnswerCacheOptions) {
    this.now = options.now ?? Date.now
  }

  /** Something the answers count has changed: every kept answer is computed again when next asked for. */
  changed(): void {
    this.version++
  }

  /** Keys kept. */
  get size(): number {
    return this.entries.size
  }

  /** The answer for `key`, computed by `compute` when it is not fresh as of `mark`. */
  async get(key: string, mark: string, compute: () => Promise<T>): Promise<CachedAnswer<T>> {
    let e = this.entries.get(key)
    if (e) {
      // Most recently used last.
      this.entries.delete(key)
      this.entries.set(key, e)
    } else {
      e = { asOf: 0, version: -1, mark: '', tookMs: 0, doneAt: 0 }
      this.entries.set(key, e)
      this.evict()
    }
    if (!e.running) this.throwError(e)
    if (
      e.value !== undefined &&
      e.mark === mark &&
      e.version === this.version &&
      this.now() - e.doneAt < this.options.maxAgeMs
    )
      return { state: 'ready', value: e.value, asOf: e.asOf, refreshing: false }
    const running = e.running ?? this.start(e, mark, compute)
    if (e.value === undefined || e.tookMs <= this.options.waitMs) {
      let timer: NodeJS.Timeout | undefined
      const waited = await Promise.race([
        running.then(() => true),
        new Promise<false>((r) => {
          timer = setTimeout(() => r(false), this.options.waitMs)
        }),
      ])
      clearTimeout(timer)
      if (waited) this.throwError(e)
    }
    if (e.value === undefined) return { state: 'preparing' }
    return { state: 'ready', value: e.value, asOf: e.asOf, refreshing: e.running !== undefined }
  }

  /** A failed computation's error goes to one request (the next one computes again). */
  private throwError(e: Entry<T>): void {
    if (e.error === undefined) return
    const error = e.error
    e.error = undefined
    throw error
  }

  private start(e: Entry<T>, mark: string, compute: () => Promise<T>): Promise<void> {
    const run = (async () => {
      await this.place()
      const version = this.version
      const began = this.now()
      try {
        const value = await compute()
        e.value = value
        e.asOf = began
        e.version = version
        e.mark = mark
        e.doneAt = this.now()
        e.tookMs = e.doneAt - began
        e.error = undefined
      } catch (error) {
        e.error = error
      } finally {
        e.running = undefined
        this.release()
      }
    })()
    e.running = run
    return run
  }

  private place(): Promise<void> {
    if (this.active < this.options.concurrency) {
      this.active++
      return Promise.resolve()
    }
    return new Promise((r) => this.queue.push(r))
  }

  private release(): void {
    const next = this.queue.shift()
    if (next) next()
    else this.active--
  }

  private evict(): void {
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.options.maxEntries) break
      // A computation still running keeps its key (its requests wait for it).
      if (!e.running) this.entries.delete(key)
    }
  }
}
