import type { AuditEntry, StoredMessage } from '../store/store'

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
 * The audit log's entry for an operator message is written when the bot has accepted it, up to
 * the webhook's whole retry budget after the send began (3 attempts of at most 5 s by default);
 * for entries that do not say when the send began (`detail.sentAt`).
 */
const AUDIT_LAG_MS = 60_000

/**
 * Which tracked messages an operator wrote. The collector cannot see inside the bot: an
 * operator's message goes to the bot's send-message route, and the bot tracks it like any
 * other reply. So the dashboard remembers what it sent (bot, thread, text, time) and marks
 * the first outgoing message of that thread with the same text that arrives after it. Kept in
 * memory, bounded, for the collector's lifetime — and, for transcripts, read back from the audit
 * log ({@link OperatorLog.fromAudit}), so the mark survives a restart and shows on every
 * collector sharing a database.
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
   * The operator messages of one conversation in an audit read (newest first), as sends, less
   * those this process remembers already (the same send, seen twice).
   */
  fromAudit(entries: readonly AuditEntry[], bot: string, thread: string): OperatorSend[] {
    const known = this.sends.filter((s) => s.bot === bot && s.thread === thread)
    const out: OperatorSend[] = []
    for (const e of entries) {
      const text = e.detail?.text
      if (e.action !== 'operator-message' || e.target !== thread || typeof text !== 'string') continue
      const at = e.detail?.sentAt
      const sentAt = typeof at === 'number' ? at : e.ts - AUDIT_LAG_MS
      if (!known.some((s) => s.text === text && s.sentAt === sentAt)) out.push({ bot, thread, text, sentAt })
    }
    return out.reverse() // the audit reads newest first; sends are kept oldest first
  }

  /**
   * Adds `sentBy: 'operator'` to the messages an operator wrote (`messages` in arrival order),
   * from the sends this process remembers and `more` (e.g. {@link OperatorLog.fromAudit}).
   * Each send marks at most one message.
   */
  mark<T extends StoredMessage>(messages: T[], more: readonly OperatorSend[] = []): Array<T & { sentBy?: 'operator' }> {
    const sends = more.length === 0 ? this.sends : [...more, ...this.sends]
    if (sends.length === 0) return messages
    const used = new Set<OperatorSend>()
    return messages.map((m) => {
      if (m.direction !== 'outgoing' || m.text === null) return m
      const text = m.text.trim()
      const send = sends.find(
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

/** A change of who answers a conversation, shown in its transcript at its time. */
export interface TakeoverMark {
  ts: number
  /** `pause`, `resume`, `handoff.claim`, `handoff.release`, `handoff.auto-resume`. */
  action: string
  actor: string
}

const TAKEOVER_ACTIONS = new Set(['pause', 'resume', 'handoff.claim', 'handoff.release', 'handoff.auto-resume'])

/**
 * The pauses, resumes, claims and releases of one conversation in an audit read (newest first),
 * oldest first: a question with no reply has its reason beside it.
 */
export function takeoverMarks(entries: readonly AuditEntry[], thread: string): TakeoverMark[] {
  return entries
    .filter((e) => e.target === thread && TAKEOVER_ACTIONS.has(e.action))
    .map((e) => ({ ts: e.ts, action: e.action, actor: e.actor }))
    .reverse()
}
