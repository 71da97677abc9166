import { AsyncLocalStorage } from 'node:async_hooks'
import type { Intent, JsonObject } from './types'

/** State of one conversation turn: what the bot said about the message being handled. */
export interface TurnState {
  /** Set by `setNotHandled()`: the incoming message gets the `NotHandled` intent. */
  notHandled: boolean
  /** Set by `setIncomingIntent()`: the intent the bot's NLU found in the incoming message. */
  incomingIntent?: Intent | undefined
  /** Set by `setOutgoingIntent()`: attached to the turn's outgoing records. */
  outgoingIntent: Intent | undefined
  /** Set by `setUserMetadata()`: sent as `platformUserJson` (or `serviceUser` for voice). */
  userMetadata: JsonObject | undefined
}

export function newTurnState(): TurnState {
  return { notHandled: false, incomingIntent: undefined, outgoingIntent: undefined, userMetadata: undefined }
}

/**
 * Where turn state lives: an AsyncLocalStorage per tracker, so two conversations handled at
 * once never see each other's intent. Outside any turn, state set by a call applies only to
 * the tracking calls of the same synchronous run (it is cleared at the next microtask) — the
 * older SDKs' `setNotHandled(); logIncoming(msg)` pattern still works, and can't leak.
 */
export class TurnScope {
  private readonly storage = new AsyncLocalStorage<TurnState>()
  private loose: TurnState | undefined

  /** Runs `fn` in a new turn (or in `state`, to share one across calls). */
  run<T>(fn: () => T, state: TurnState = newTurnState()): T {
    return this.storage.run(state, fn)
  }

  /** The current turn's state, if a turn is active. */
  active(): TurnState | undefined {
    return this.storage.getStore()
  }

  /** State to write to: the active turn, else a loose state that lives until the next microtask. */
  writable(): TurnState {
    const turn = this.storage.getStore()
    if (turn) return turn
    if (!this.loose) {
      const state = newTurnState()
      this.loose = state
      queueMicrotask(() => {
        if (this.loose === state) this.loose = undefined
      })
    }
    return this.loose
  }

  /** State to read from. */
  readable(): TurnState | undefined {
    return this.storage.getStore() ?? this.loose
  }
}
