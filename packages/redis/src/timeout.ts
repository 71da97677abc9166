/** Rejects when `promise` takes longer than `ms`; a late rejection of `promise` stays handled. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`redis ${what} took longer than ${ms} ms`)), ms)
    timer.unref?.()
  })
  promise.catch(() => {})
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const DOWN_STATES = new Set(['reconnecting', 'close', 'end'])

/**
 * Throws at once when the connection is known to be down, rather than letting ioredis queue the
 * command for a reconnect: a queued write would land later, after we already answered.
 */
export function assertConnected(client: { status: string }, what: string): void {
  if (DOWN_STATES.has(client.status)) throw new Error(`redis is ${client.status}; ${what} not sent`)
}

/** True when the connection is known to be down. */
export function isDown(client: { status: string }): boolean {
  return DOWN_STATES.has(client.status)
}
