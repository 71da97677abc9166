/**
 * The store cannot be reached right now (a server database restarting, a network fault). The
 * collector answers such requests `503 Service Unavailable` with `Retry-After`, so trackers hold
 * their records and send them again; nothing is acknowledged that was not committed.
 *
 * @example if (isConnectionFault(e)) throw new StoreUnavailableError('database unreachable', e)
 */
export class StoreUnavailableError extends Error {
  /** Seconds the client should wait before retrying (the `Retry-After` header). */
  readonly retryAfterSeconds: number
  constructor(message: string, cause?: unknown, retryAfterSeconds = 1) {
    super(message, { cause })
    this.name = 'StoreUnavailableError'
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** SQLite result codes that mean the database, not the record, is the problem (busy, disk, file). */
const SQLITE_DOWN = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB|PROTOCOL|NOMEM|PERM)/

/**
 * True when a store call failed because the store is down (unreachable, closed, busy, out of
 * disk): the request is answered 503 and retried. Anything else failed for the record itself
 * and is refused with a 4xx, never retried forever.
 *
 * @example if (!isStoreDown(e)) refuseTheRecord()
 */
export function isStoreDown(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true
  const e = error as { code?: unknown; message?: unknown } | undefined
  if (typeof e?.code === 'string' && SQLITE_DOWN.test(e.code)) return true
  // better-sqlite3 on a closed database.
  return typeof e?.message === 'string' && /database connection is not open/i.test(e.message)
}
