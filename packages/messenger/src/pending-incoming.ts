import type { Tracker, TurnState } from '@convotrack/core'

/** Logs one user's incoming record, reading the turn's state at that moment. */
export type IncomingLog = (turn: TurnState) => void

/**
 * The incoming records of one turn, held until the bot answers their user or the turn ends.
 * Held, because a middleware runs before the bot has looked at the message: logging at the
 * bot's first reply lets the record carry what the bot decided while handling it
 * (`setNotHandled()`, an `intent` on the messaging item) and still reach the service before
 * the reply. Holding costs no I/O: logging is a synchronous queue hand-off either way.
 */
export class PendingIncoming {
  private readonly held = new Map<string, IncomingLog>()

  constructor(
    private readonly tracker: Tracker,
    private readonly turn: TurnState,
  ) {}

  /** Holds the record of `userId` (a user appears once per turn). */
  hold(userId: string, log: IncomingLog): void {
    this.held.set(userId, log)
  }

  /** Logs the held record of `userId`, if any; `undefined` logs them all. */
  release(userId: string | undefined): void {
    if (userId === undefined) {
      this.releaseAll()
      return
    }
    const log = this.held.get(userId)
    if (!log) return
    this.held.delete(userId)
    this.log(log)
  }

  /** Logs every record still held (the turn is over). */
  releaseAll(): void {
    for (const userId of [...this.held.keys()]) this.release(userId)
  }

  private log(log: IncomingLog): void {
    try {
      log(this.turn)
    } catch (error) {
      this.tracker.reportError(error)
    } finally {
      // NotHandled belongs to the message the bot was handling when it said so: once that
      // record is out, it must not mark the next user's message of a batched webhook.
      this.turn.notHandled = false
    }
  }
}

const byTurn = new WeakMap<TurnState, PendingIncoming>()

/** Opens the held-records list of the current turn (call inside `tracker.withTurn`). */
export function holdIncoming(tracker: Tracker): PendingIncoming | undefined {
  const turn = tracker.currentTurn()
  if (!turn) return undefined
  const pending = new PendingIncoming(tracker, turn)
  byTurn.set(turn, pending)
  return pending
}

/** Before an outgoing record: logs the held incoming record of its recipient, so it comes first. */
export function releaseIncoming(tracker: Tracker, recipientId: string | undefined): void {
  const turn = tracker.currentTurn()
  if (turn) byTurn.get(turn)?.release(recipientId)
}
