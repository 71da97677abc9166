/**
 * Waits on a set of waiters: resolves true when one of the owner's calls `waiters` runs this
 * wait's callback (nothing left to wait for), else `atTimeout()` once `timeoutMs` has passed
 * (no deadline when it is not finite). The deadline's timer never keeps the process up. Never rejects.
 *
 * @example waitOrTimeout(this.waiters, 5000, () => this.pending === 0)
 */
export function waitOrTimeout(waiters: Set<() => void>, timeoutMs: number, atTimeout: () => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined
    const done = (): void => {
      if (timer) clearTimeout(timer)
      waiters.delete(done)
      resolve(true)
    }
    waiters.add(done)
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(
        () => {
          waiters.delete(done)
          resolve(atTimeout())
        },
        Math.max(0, timeoutMs),
      )
      timer.unref()
    }
  })
}
