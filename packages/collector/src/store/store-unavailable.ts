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
