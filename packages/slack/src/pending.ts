import type { Tracker } from '@convotrack/core'

const pendingByTracker = new WeakMap<Tracker, Set<Promise<unknown>>>()

/** Remembers work that will hand records to `tracker` later (a team name lookup), until it settles. */
export function addPending(tracker: Tracker, work: Promise<unknown>): void {
  let set = pendingByTracker.get(tracker)
  if (!set) {
    set = new Set()
    pendingByTracker.set(tracker, set)
  }
  const forget = (): void => {
    set.delete(entry)
  }
  const entry: Promise<void> = work.then(forget, forget)
  set.add(entry)
}

/** Settles when every pending piece of work for `tracker` has (records are queued by then). */
export async function settlePending(tracker: Tracker, timeoutMs: number): Promise<void> {
  const set = pendingByTracker.get(tracker)
  if (!set || set.size === 0) return
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, timeoutMs))
    timer.unref()
  })
  await Promise.race([Promise.allSettled([...set]), timeout])
  clearTimeout(timer)
}
