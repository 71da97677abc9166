import type { Logger } from 'pino'
import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import type { CollectorMetrics } from '../ops/metrics'
import type { HandoffOptions, Role } from '../options'
import {
  type HandoffEntry,
  type HandoffFilter,
  type HandoffNote,
  type HandoffRow,
  queueChanged,
} from '../store/handoff-records'
import { toHandoffEntry } from '../store/handoff-rows'
import type { PauseState, RecordStore, StoredMessage } from '../store/store'
import type { HandoffAlerts } from './alerts'
import {
  applySignal,
  freshRow,
  type HandoffConfig,
  type HandoffSignal,
  offQueue,
  resolveHandoff,
  signalOf,
} from './handoff-rules'
import type { LiveFeed } from './live-feed'
import type { Takeover } from './takeover'

/** Signals written per transaction. */
const BATCH = 1000
/** Signals held while the store is behind; beyond, the oldest are dropped (logged). */
const MAX_PENDING = 100_000

/** True when the rules can put a conversation in the queue or resume one. */
function watching(c: HandoffConfig): boolean {
  return c.intents.length > 0 || c.keywords.length > 0 || c.notHandledStreak > 0 || c.autoResumeMinutes > 0
}

/** Who acts on the queue. */
export interface Actor {
  name: string
  role: Role
}

/**
 * The handoff queue: conversations that need a person. Ingest hands it every stored message
 * ({@link HandoffQueue.observe}, returns at once); the desk keeps each conversation's row in the
 * store (locked read-modify-writes, group-committed, in arrival order per conversation), puts it
 * in the queue when the user asks for a person, stays NotHandled `notHandledStreak` times in a
 * row or leaves negative feedback, and tells the dashboards (`handoff` events) and the alerts.
 * Operators claim (the bot is paused), release (resumed) and write notes.
 *
 * @example queue.observe(stored.messages); await queue.claim('shop', 'ada', { name: 'bo', role: 'operator' })
 */
export class HandoffQueue {
  private pending: Array<{ bot: string; thread: string; signal: HandoffSignal }> = []
  private flushing: Promise<void> | undefined
  private scheduled = false

  constructor(
    private readonly deps: {
      store: RecordStore
      feed: LiveFeed
      takeover: Takeover
      bots: BotRegistry
      options: HandoffOptions | undefined
      alerts: HandoffAlerts
      metrics: CollectorMetrics
      log: Logger
    },
  ) {}

  /** A bot's rules: its own `handoff` over the collector's, over the defaults. */
  config(bot: string): HandoffConfig {
    return resolveHandoff(this.deps.options, this.deps.bots.get(bot)?.handoff)
  }

  /**
   * The ingest hook: called with the messages a record stored. Never throws, never waits: the
   * work runs after, one conversation's messages in order; failures are logged.
   */
  observe(messages: readonly StoredMessage[]): void {
    for (const m of messages) {
      // A bot with nothing to watch (no triggers, no auto-resume) costs nothing.
      if (!watching(this.config(m.bot))) continue
      let signal: HandoffSignal | undefined
      try {
        signal = signalOf(m)
      } catch {
        continue
      }
      if (signal) this.signal(m.bot, m.thread, signal)
    }
  }

  /** The bot was paused or unpaused (Takeover): a pause restarts the idle time. */
  onPause(state: PauseState): void {
    if (state.paused) this.signal(state.bot, state.thread, { kind: 'activity', ts: state.updatedAt })
  }

  /** Resolves when every change handed to the desk so far is written (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.pending.length > 0 || this.flushing || this.scheduled)
      await (this.flushing ?? new Promise((r) => setImmediate(r)))
  }

  /**
   * Group commit: signals arriving while a batch is being written wait for the next one, so a
   * busy collector writes the desk's rows in a few transactions, not one per message; one batch
   * at a time keeps each conversation's signals in arrival order.
   */
  private signal(bot: string, thread: string, signal: HandoffSignal): void {
    if (this.pending.length >= MAX_PENDING) {
      // The database is far behind: the oldest signals go (counted in the log), memory stays bounded.
      const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING + 1).length
      this.deps.log.warn({ dropped }, 'handoff queue: the store is far behind; oldest signals dropped')
    }
    this.pending.push({ bot, thread, signal })
    this.schedule()
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined
        if (this.pending.length > 0) this.schedule()
      })
    })
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, BATCH)
    const changes = batch.map(({ bot, thread, signal }) => {
      const config = this.config(bot)
      return {
        bot,
        thread,
        change: (row: HandoffRow | undefined) => applySignal(row, signal, config, { bot, thread }),
      }
    })
    try {
      const results = await this.deps.store.updateHandoffs(changes)
      for (const { before, after } of results) this.changed(before, after, false)
    } catch (e) {
      this.deps.log.error({ err: e, signals: batch.length }, 'handoff queue update failed')
    }
  }

  /** Tells the dashboards (and, for a conversation that just started waiting, the alerts). */
  private changed(before: HandoffRow | undefined, after: HandoffRow | undefined, paused: boolean): void {
    if (!after || !queueChanged(before, after)) return
    const entry = toHandoffEntry(after, paused)
    this.deps.feed.publish('handoff', { bot: after.bot, thread: after.thread, entry: entry ?? null }, after.bot)
    if (entry?.state === 'waiting' && before?.state !== 'waiting') {
      this.deps.metrics.handoffs.inc({ reason: entry.reason ?? 'unknown' })
      this.deps.alerts.waiting(entry)
    }
  }

  /** Queue entries within the caller's filter. */
  list(filter: HandoffFilter): Promise<HandoffEntry[]> {
    return this.deps.store.handoffs(filter)
  }

  /** The user of a conversation the desk has no row for yet: the latest incoming message's. */
  private async userOf(bot: string, thread: string): Promise<string> {
    const recent = await this.deps.store.transcript(bot, thread, { limit: 50 })
    const incoming = recent.filter((m) => m.direction === 'incoming')
    return incoming.at(-1)?.userId ?? recent.at(-1)?.userId ?? thread
  }

  private registered(bot: string) {
    const config = this.deps.bots.get(bot)
    if (!config) throw new RequestError(404, 'not_found', `no bot named "${bot}"`, 'bot')
    return config
  }

  /**
   * Assigns a conversation to `actor` and pauses the bot on it (the signed pause webhook). A
   * conversation someone else holds → 409 naming them; claiming again as the holder is fine.
   * When the pause webhook fails the claim is undone (502).
   */
  async claim(bot: string, thread: string, actor: Actor): Promise<HandoffEntry> {
    const config = this.registered(bot)
    const userId = await this.userOf(bot, thread)
    const now = Date.now()
    let holder: string | undefined
    const { before, after } = await this.deps.store.updateHandoff(bot, thread, (row) => {
      holder = row?.assignee && row.assignee !== actor.name ? row.assignee : undefined
      if (holder) return undefined
      const base = row ?? freshRow(bot, thread, userId, now)
      if (base.state === 'assigned') return base
      return {
        ...base,
        state: 'assigned',
        assignee: actor.name,
        since: base.state === 'waiting' ? base.since : now,
        activeAt: now,
      }
    })
    if (holder) throw new RequestError(409, 'already_claimed', `this conversation is claimed by ${holder}`, 'thread')
    let paused = await this.deps.store.paused(bot, thread)
    if (!paused && config.pauseWebhookUrl) {
      try {
        await this.deps.takeover.setPaused(bot, thread, true)
        paused = true
      } catch (e) {
        // Not paused: the claim did not happen (unless someone else changed the row meanwhile).
        await this.deps.store.updateHandoff(bot, thread, (row) =>
          row && row.assignee === actor.name && row.state === 'assigned' ? (before ?? offQueue(row)) : undefined,
        )
        throw e
      }
    }
    this.changed(before, after, paused)
    return toHandoffEntry(after as HandoffRow, paused) as HandoffEntry
  }

  /**
   * Unassigns a conversation, takes it off the queue and resumes the bot (the pause webhook,
   * `paused: false`). Releasing a conversation someone else holds needs the admin role.
   */
  async release(
    bot: string,
    thread: string,
    actor: Actor,
  ): Promise<{ bot: string; thread: string; paused: false; released: string | null }> {
    const config = this.registered(bot)
    const [current] = await this.deps.store.handoffs({ bot, thread, state: 'all' })
    const holder = current?.assignee ?? null
    if (holder !== null && holder !== actor.name && actor.role !== 'admin')
      throw new RequestError(
        403,
        'forbidden',
        `this conversation is claimed by ${holder}: releasing it needs the admin role`,
        'thread',
      )
    // The bot answers again only once it acknowledged (the takeover's rule): the row changes after.
    if (config.pauseWebhookUrl && (await this.deps.store.paused(bot, thread)))
      await this.deps.takeover.setPaused(bot, thread, false)
    const { before, after } = await this.deps.store.updateHandoff(bot, thread, (row) =>
      row && row.state !== 'idle' ? offQueue(row) : undefined,
    )
    this.changed(before, after, false)
    return { bot, thread, paused: false, released: holder }
  }

  /**
   * Before an operator's message: a conversation that is not paused is paused first (the bot
   * must not answer over the person), and the idle time restarts. Resolves to the pause state.
   */
  async beforeOperatorMessage(bot: string, thread: string, actor: Actor): Promise<boolean> {
    const config = this.registered(bot)
    let paused = await this.deps.store.paused(bot, thread)
    // No message route: the send will be refused (409), so nothing is paused for it.
    if (!paused && config.pauseWebhookUrl && config.operatorMessageUrl) {
      await this.deps.takeover.setPaused(bot, thread, true)
      paused = true
      await this.deps.store
        .addAudit({ ts: Date.now(), actor: actor.name, action: 'pause', bot, target: thread, detail: { auto: true } })
        .catch((e) => this.deps.log.error({ err: e, action: 'pause' }, 'audit log write failed'))
    }
    this.signal(bot, thread, { kind: 'activity', ts: Date.now() })
    return paused
  }

  /** Adds an internal note (never sent to the user); dashboards showing the conversation get a `note` event. */
  async addNote(bot: string, thread: string, author: string, text: string): Promise<HandoffNote> {
    this.registered(bot)
    const [entry] = await this.deps.store.handoffs({ bot, thread, state: 'all' })
    const userId = entry?.userId ?? (await this.userOf(bot, thread))
    const note = await this.deps.store.addNote({ bot, thread, userId, author, text, ts: Date.now() })
    this.deps.feed.publish('note', note, bot)
    return note
  }

  /** A conversation's notes, oldest first. */
  notes(bot: string, thread: string): Promise<HandoffNote[]> {
    return this.deps.store.notes(bot, thread)
  }
}
