import type { StoredMessage } from './store'

/** An operator's message as the dashboard sent it to the bot. */
export interface OperatorSend {
  bot: string
  thread: string
  text: string
  /** Collector clock when the dashboard asked the bot to send it, epoch ms. */
  sentAt: number
}

/** How long after the send the bot's tracked copy may arrive and still be matched to it. */
const MATCH_WINDOW_MS = 10 * 60_000

/**
 * Which tracked messages an operator wrote. The collector cannot see inside the bot: an
 * operator's message goes to the bot's send-message route, and the bot tracks it like any
 * other reply. So the dashboard remembers what it sent (bot, thread, text, time) and marks
 * the first outgoing message of that thread with the same text that arrives after it. Kept in
 * memory, bounded, for the collector's lifetime.
 *
 * @example log.sent({ bot: 'shop', thread: 'ada', text: 'Hi', sentAt: Date.now() }); log.mark(messages)
 */
export class OperatorLog {
  private readonly sends: OperatorSend[] = []

  constructor(private readonly max = 2000) {}

  /** Records a message sent by an operator. */
  sent(send: OperatorSend): void {
    this.sends.push(send)
    if (this.sends.length > this.max) this.sends.splice(0, this.sends.length - this.max)
  }

  /** Forgets a send the bot did not accept. */
  forget(send: OperatorSend): void {
    const i = this.sends.indexOf(send)
    if (i >= 0) this.sends.splice(i, 1)
  }

  /**
   * Adds `sentBy: 'operator'` to the messages an operator wrote (`messages` in arrival order).
   * Each send marks at most one message.
   */
  mark<T extends StoredMessage>(messages: T[]): Array<T & { sentBy?: 'operator' }> {
    if (this.sends.length === 0) return messages
    const used = new Set<OperatorSend>()
    return messages.map((m) => {
      if (m.direction !== 'outgoing' || m.text === null) return m
      const text = m.text.trim()
      const send = this.sends.find(
        (s) =>
          !used.has(s) &&
          s.bot === m.bot &&
          s.thread === m.thread &&
          s.text.trim() === text &&
          m.ts >= s.sentAt &&
          m.ts <= s.sentAt + MATCH_WINDOW_MS,
      )
      if (!send) return m
      used.add(send)
      return { ...m, sentBy: 'operator' as const }
    })
  }
}
