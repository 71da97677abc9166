/** Default of `flushOnExit`: the longest a natural exit waits for pending records, in ms. */
export const DEFAULT_EXIT_FLUSH_MS = 3000

/** A tracker as the exit watcher sees it. */
export interface ExitParticipant {
  /** Records not delivered yet (queued, retrying, in flight, held). */
  pendingCount(): number
  /** The bounded flush run when the event loop empties; resolves when it is done. */
  exitFlush(): Promise<unknown>
  /** Says what is still undelivered, synchronously, through the logger. Called once, at the real exit. */
  reportExitLoss(cause: ExitCause): void
}

/** How the process is ending: the event loop emptied, or `process.exit()` was called. */
export type ExitCause = 'natural' | 'exit'

/**
 * Watches the process end for trackers with something pending, with one `beforeExit` and one
 * `exit` listener for all of them. A tracker is watched only while it has records pending, so
 * an idle tracker adds nothing. No signal handler is installed: `SIGTERM` / `SIGINT` keep
 * Node's default behaviour, the app decides its shutdown.
 */
class ExitWatch {
  private readonly watched = new Set<ExitParticipant>()
  private readonly flushed = new WeakSet<ExitParticipant>()
  private installed = false
  private beforeExitSeen = false

  watch(p: ExitParticipant): void {
    this.watched.add(p)
    if (this.installed) return
    this.installed = true
    process.on('beforeExit', this.onBeforeExit)
    process.on('exit', this.onExit)
  }

  unwatch(p: ExitParticipant): void {
    this.watched.delete(p)
    if (this.watched.size > 0 || !this.installed) return
    this.installed = false
    process.off('beforeExit', this.onBeforeExit)
    process.off('exit', this.onExit)
  }

  /**
   * The event loop is empty: flush each tracker with records pending, once. The flush's own
   * work (sockets, a ref'd deadline) keeps the loop alive for at most its bound; when it is
   * done the loop empties again and Node emits `beforeExit` once more, which finds nothing
   * left to start and lets the process end.
   */
  private readonly onBeforeExit = (): void => {
    this.beforeExitSeen = true
    for (const p of [...this.watched]) {
      if (this.flushed.has(p) || p.pendingCount() === 0) continue
      this.flushed.add(p)
      p.exitFlush().catch(() => {})
    }
  }

  private readonly onExit = (): void => {
    const cause: ExitCause = this.beforeExitSeen ? 'natural' : 'exit'
    for (const p of [...this.watched]) {
      try {
        if (p.pendingCount() > 0) p.reportExitLoss(cause)
      } catch {
        // reporting must never change how the process ends
      }
    }
  }
}

export const exitWatch = new ExitWatch()

/** `flushOnExit` as a bound in ms: `false` / `0` → 0 (off), `true` / unset → the default. */
export function exitFlushMs(option: boolean | number | undefined): number {
  if (option === undefined || option === true) return DEFAULT_EXIT_FLUSH_MS
  if (option === false) return 0
  if (typeof option !== 'number' || !Number.isFinite(option) || option < 0) return Number.NaN
  return option
}
