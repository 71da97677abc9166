import type { HandoffOptions } from '../options'
import type { HandoffRow } from '../store/handoff-records'
import type { StoredMessage } from '../store/store'

/** A bot's handoff rules with every default filled in. */
export interface HandoffConfig {
  intents: string[]
  keywords: string[]
  notHandledStreak: number
  autoResumeMinutes: number
}

/** The defaults of {@link HandoffOptions}. */
export const DEFAULT_HANDOFF: Readonly<HandoffConfig> = Object.freeze({
  intents: ['human', 'agent'],
  keywords: ['human', 'agent', 'real person', 'talk to someone'],
  notHandledStreak: 2,
  autoResumeMinutes: 30,
})

function strings(v: unknown, where: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.trim() === ''))
    throw new TypeError(`${where} must be an array of non-empty strings`)
  return v.map((x: string) => x.trim())
}

function nonNegative(v: unknown, where: string, integer: boolean): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v)))
    throw new TypeError(`${where} must be a ${integer ? 'whole ' : ''}number ≥ 0 (got ${JSON.stringify(v)})`)
  return v
}

/**
 * Checks a `handoff` option (the collector's or a bot's); throws a TypeError naming the field.
 *
 * @example validateHandoffOptions({ autoResumeMinutes: 0.5 }, 'handoff')
 */
export function validateHandoffOptions(o: unknown, where: string): HandoffOptions {
  if (o === undefined) return {}
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new TypeError(`${where} must be an object`)
  const v = o as Record<string, unknown>
  const out: HandoffOptions = {}
  for (const key of Object.keys(v))
    if (!['intents', 'keywords', 'notHandledStreak', 'autoResumeMinutes'].includes(key))
      throw new TypeError(
        `${where}.${key} is not a handoff option (intents, keywords, notHandledStreak, autoResumeMinutes)`,
      )
  if (v.intents !== undefined) out.intents = strings(v.intents, `${where}.intents`)
  if (v.keywords !== undefined) out.keywords = strings(v.keywords, `${where}.keywords`)
  if (v.notHandledStreak !== undefined)
    out.notHandledStreak = nonNegative(v.notHandledStreak, `${where}.notHandledStreak`, true)
  if (v.autoResumeMinutes !== undefined)
    out.autoResumeMinutes = nonNegative(v.autoResumeMinutes, `${where}.autoResumeMinutes`, false)
  return out
}

/** The collector's rules, then the bot's, field by field over the defaults. */
export function resolveHandoff(collector: HandoffOptions | undefined, bot: HandoffOptions | undefined): HandoffConfig {
  return { ...DEFAULT_HANDOFF, ...collector, ...bot } as HandoffConfig
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const patterns = new Map<string, RegExp | null>()

/** True when `text` holds one of `keywords` as whole words, any case ("humanitarian" is not "human"). */
export function hasKeyword(text: string, keywords: readonly string[]): boolean {
  const key = keywords.join('\u0000')
  let re = patterns.get(key)
  if (re === undefined) {
    re =
      keywords.length === 0
        ? null
        : new RegExp(
            `(?<![\\p{L}\\p{N}_])(?:${keywords.map((k) => k.split(/\s+/).map(escapeRegExp).join('\\s+')).join('|')})(?![\\p{L}\\p{N}_])`,
            'iu',
          )
    if (patterns.size > 100) patterns.clear()
    patterns.set(key, re)
  }
  return re?.test(text) === true
}

/** What a stored message means to the desk. */
export type HandoffSignal =
  | { kind: 'incoming'; userId: string; text: string | null; intent: string | null; ts: number }
  /** The bot's reply was marked NotHandled (the dashbot SDK's `setNotHandled()` marks the reply). */
  | { kind: 'not-handled-reply'; ts: number }
  /** Feedback with a negative score (`feedback` customEvent, `extraInfo.score` < 0). */
  | { kind: 'feedback'; userId: string; text: string | null; ts: number }
  /** A user or operator message, or a pause: the auto-resume idle time starts again. */
  | { kind: 'activity'; ts: number }

const NOT_HANDLED = 'NotHandled'

/** The signal a stored message carries, or undefined when it means nothing to the desk. */
export function signalOf(m: StoredMessage): HandoffSignal | undefined {
  if (m.direction === 'incoming')
    return { kind: 'incoming', userId: m.userId, text: m.text, intent: m.intent, ts: m.ts }
  if (m.direction === 'outgoing') return m.intent === NOT_HANDLED ? { kind: 'not-handled-reply', ts: m.ts } : undefined
  const event = m.event
  if (event?.type !== 'customEvent' || event.name !== 'feedback') return undefined
  const extra = event.body?.extraInfo as Record<string, unknown> | undefined
  const score = extra?.score
  if (typeof score !== 'number' || !(score < 0)) return undefined
  const comment = [extra?.comment, extra?.text].find((c) => typeof c === 'string' && c !== '') as string | undefined
  return { kind: 'feedback', userId: m.userId, text: comment ?? null, ts: m.ts }
}

/** A conversation's row before the desk ever saw it. */
export function freshRow(bot: string, thread: string, userId: string, ts: number): HandoffRow {
  return {
    bot,
    thread,
    userId,
    state: 'idle',
    reason: null,
    since: null,
    text: null,
    assignee: null,
    streak: 0,
    heldStreak: null,
    lastText: null,
    activeAt: ts,
  }
}

/** The row as it stands off the queue (release, auto-resume). */
export function offQueue(row: HandoffRow): HandoffRow {
  return { ...row, state: 'idle', reason: null, since: null, text: null, assignee: null, streak: 0, heldStreak: null }
}

/**
 * The next row after a signal (pure). "In a row" counts incoming messages only: the bot's
 * replies don't break a NotHandled streak, a handled incoming message does — unless the reply
 * to it is marked NotHandled, which counts it after all. A conversation already queued or
 * assigned stays as it is (only its activity time moves). Returns undefined when nothing changes.
 */
export function applySignal(
  current: HandoffRow | undefined,
  signal: HandoffSignal,
  config: HandoffConfig,
  key: { bot: string; thread: string },
): HandoffRow | undefined {
  const userId = 'userId' in signal && signal.userId !== '' ? signal.userId : (current?.userId ?? key.thread)
  const row = current ?? freshRow(key.bot, key.thread, userId, signal.ts)
  const enter = (reason: NonNullable<HandoffRow['reason']>, text: string | null, ts: number): HandoffRow =>
    row.state === 'idle' ? { ...next, state: 'waiting', reason, since: ts, text, streak: 0, heldStreak: null } : next
  let next: HandoffRow
  switch (signal.kind) {
    case 'activity':
      return { ...row, activeAt: Math.max(row.activeAt, signal.ts) }
    case 'incoming': {
      const notHandled = signal.intent === NOT_HANDLED
      next = {
        ...row,
        userId,
        streak: notHandled ? row.streak + 1 : 0,
        heldStreak: notHandled ? null : row.streak,
        lastText: signal.text,
        activeAt: Math.max(row.activeAt, signal.ts),
      }
      const intent = signal.intent?.toLowerCase()
      const asked =
        (intent !== undefined && config.intents.some((i) => i.toLowerCase() === intent)) ||
        (signal.text !== null && hasKeyword(signal.text, config.keywords))
      if (asked) return enter('asked', signal.text, signal.ts)
      if (notHandled && config.notHandledStreak > 0 && next.streak >= config.notHandledStreak)
        return enter('not-handled', signal.text, signal.ts)
      return next
    }
    case 'not-handled-reply': {
      if (!current || row.heldStreak === null) return undefined
      next = { ...row, streak: row.heldStreak + 1, heldStreak: null }
      if (config.notHandledStreak > 0 && next.streak >= config.notHandledStreak)
        return enter('not-handled', row.lastText, signal.ts)
      return next
    }
    case 'feedback':
      next = { ...row, userId }
      return enter('feedback', signal.text ?? row.lastText, signal.ts)
  }
}
