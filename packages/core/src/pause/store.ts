/**
 * Where the bot keeps which sessions an operator paused (spec: States and transitions). Every
 * adapter checks it for each incoming message; the pause receiver writes it.
 */
export interface PauseStore {
  /** True while the session with this key is paused. */
  isPaused(key: string): Promise<boolean> | boolean
  /** Pauses (`true`) or unpauses (`false`) the session with this key. */
  setPaused(key: string, paused: boolean): Promise<void> | void
}

/**
 * The pause key of a message: the conversation id when one is sent, else the user id —
 * the same rule the service uses to fill the webhook's `userId` (spec: Pause webhook).
 *
 * @example pauseKey({ userId: 'u1', conversationId: 'c9' }) // 'c9'
 */
export function pauseKey(ids: {
  userId?: string | undefined
  conversationId?: string | undefined
}): string | undefined {
  return ids.conversationId || ids.userId || undefined
}
