import type { Logger } from 'pino'
import type { BotRegistry } from '../access/bot-registry'
import type { CollectorMetrics } from '../ops/metrics'
import type { ResumedConversation } from '../store/handoff-records'
import type { RecordStore } from '../store/store'
import type { HandoffConfig } from './handoff-rules'
import type { LiveFeed } from './live-feed'
import type { Takeover } from './takeover'

/** Conversations one check takes per bot; the next check takes the rest. */
const BATCH = 100

/**
 * Auto-resume: a paused conversation with no user or operator message for the bot's
 * `autoResumeMinutes` is resumed — the pause webhook gets `paused: false`, the queue entry goes,
 * the audit log says `handoff.auto-resume` by `system`, and a system note in the transcript says
 * why. The store hands each idle conversation to one caller only, so collectors sharing a
 * database resume it exactly once. A webhook that refuses puts the pause back (the next idle
 * period tries again).
 *
 * @example const auto = new AutoResume(deps); auto.start(5_000); await auto.check(Date.now())
 */
export class AutoResume {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<ResumedConversation[]> | undefined

  constructor(
    private readonly deps: {
      store: RecordStore
      feed: LiveFeed
      takeover: Takeover
      bots: BotRegistry
      config: (bot: string) => HandoffConfig
      metrics: CollectorMetrics
      log: Logger
    },
  ) {}

  /** Runs the check every `intervalMs` (unref'd: it never keeps the process alive). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs)
    this.timer.unref()
  }

  /**
   * Resumes what is idle as of `now` (epoch ms, default the clock's; the clock tests drive);
   * resolves to the conversations this call resumed. One check at a time: a call without `now`
   * during a check joins it; a call with its own `now` waits for it, then checks as of that time
   * (joining would answer for another time: under load a driven check once got the timer's).
   */
  check(now?: number): Promise<ResumedConversation[]> {
    if (this.running && now !== undefined) return this.running.then(() => this.check(now))
    this.running ??= this.run(now ?? Date.now())
      .catch((e) => {
        this.deps.log.error({ err: e }, 'auto-resume check failed')
        return []
      })
      .finally(() => {
        this.running = undefined
      })
    return this.running
  }

  private async run(now: number): Promise<ResumedConversation[]> {
    const done: ResumedConversation[] = []
    for (const { name } of this.deps.bots.list()) {
      const minutes = this.deps.config(name).autoResumeMinutes
      if (!(minutes > 0) || !this.deps.bots.get(name)?.pauseWebhookUrl) continue
      const taken = await this.deps.store.takeIdlePaused({
        bot: name,
        idleBefore: now - minutes * 60_000,
        now: Date.now(),
        limit: BATCH,
      })
      for (const c of taken) if (await this.resume(c, minutes)) done.push(c)
    }
    return done
  }

  private async resume(c: ResumedConversation, minutes: number): Promise<boolean> {
    try {
      await this.deps.takeover.setPaused(c.bot, c.thread, false)
    } catch (e) {
      this.deps.metrics.autoResumes.inc({ outcome: 'failed' })
      this.deps.log.warn({ err: e, bot: c.bot }, 'auto-resume: the pause webhook refused; the pause stays')
      await this.deps.store.setPaused(c.bot, c.thread, true).catch(() => {})
      return false
    }
    this.deps.metrics.autoResumes.inc({ outcome: 'ok' })
    this.deps.feed.publish('handoff', { bot: c.bot, thread: c.thread, entry: null }, c.bot)
    const ts = Date.now()
    const detail = { idleMinutes: minutes, ...(c.assignee ? { assignee: c.assignee } : {}) }
    const text = `Bot resumed automatically: no message for ${minutes} min${c.assignee ? ` (was with ${c.assignee})` : ''}.`
    await Promise.all([
      this.deps.store.addAudit({
        ts,
        actor: 'system',
        action: 'handoff.auto-resume',
        bot: c.bot,
        target: c.thread,
        detail,
      }),
      this.deps.store
        .addNote({ bot: c.bot, thread: c.thread, userId: c.userId, author: 'system', text, ts })
        .then((note) => this.deps.feed.publish('note', note, c.bot)),
    ]).catch((e) => this.deps.log.error({ err: e, bot: c.bot }, 'auto-resume: audit or note write failed'))
    return true
  }

  /** Stops the timer; resolves when a check in progress ends. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.running
  }
}
