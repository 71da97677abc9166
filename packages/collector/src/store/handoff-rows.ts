import type { HandoffEntry, HandoffFilter, HandoffNote, HandoffRow } from './handoff-records'

/** A `handoffs` row as SQL gives it (snake case). */
export interface HandoffSqlRow {
  bot: string
  thread: string
  user_id: string
  state: string
  reason: string | null
  since: number | string | null
  text: string | null
  assignee: string | null
  streak: number
  held_streak: number | null
  last_text: string | null
  active_at: number | string
}

/** A stored row as the desk sees it (bigints from PostgreSQL come as strings). */
export function toHandoffRow(r: HandoffSqlRow): HandoffRow {
  return {
    bot: r.bot,
    thread: r.thread,
    userId: r.user_id,
    state: r.state as HandoffRow['state'],
    reason: r.reason as HandoffRow['reason'],
    since: r.since === null ? null : Number(r.since),
    text: r.text,
    assignee: r.assignee,
    streak: Number(r.streak),
    heldStreak: r.held_streak === null ? null : Number(r.held_streak),
    lastText: r.last_text,
    activeAt: Number(r.active_at),
  }
}

/** A queue entry from a row and the conversation's pause state. */
export function toHandoffEntry(row: HandoffRow, paused: boolean): HandoffEntry | undefined {
  if (row.state === 'idle') return undefined
  return {
    bot: row.bot,
    thread: row.thread,
    userId: row.userId,
    state: row.state,
    reason: row.reason,
    since: row.since ?? row.activeAt,
    text: row.text,
    assignee: row.assignee,
    paused,
  }
}

/** The row's values in column order, for INSERT … VALUES. */
export function handoffValues(r: HandoffRow): unknown[] {
  return [
    r.bot,
    r.thread,
    r.userId,
    r.state,
    r.reason,
    r.since,
    r.text,
    r.assignee,
    r.streak,
    r.heldStreak,
    r.lastText,
    r.activeAt,
  ]
}

export const HANDOFF_COLUMNS =
  'bot, thread, user_id, state, reason, since, text, assignee, streak, held_streak, last_text, active_at'

/** Where a queue listing's SQL comes from: the state clause and the order (waiting first, oldest first). */
export function queueStates(state: HandoffFilter['state']): string[] {
  return state === 'waiting' ? ['waiting'] : state === 'assigned' ? ['assigned'] : ['waiting', 'assigned']
}

/** A `notes` row as SQL gives it. */
export type HandoffNoteRow = Omit<HandoffNote, 'userId'> & { user_id: string }
/** A stored note (bigints from PostgreSQL come as strings). */
export const toHandoffNote = (r: HandoffNoteRow): HandoffNote => ({
  id: Number(r.id),
  bot: r.bot,
  thread: r.thread,
  userId: r.user_id,
  author: r.author,
  text: r.text,
  ts: Number(r.ts),
})
