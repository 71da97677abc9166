/**
 * What the handoff desk keeps per conversation (a queue of conversations that need a person) and
 * the operators' internal notes. Kept apart from the record tables: a database backs both through
 * {@link HandoffStore}, part of the `RecordStore` contract.
 */
/** Why a conversation entered the queue. */
export type HandoffReason = 'asked' | 'not-handled' | 'feedback'

/** Where a conversation stands: not in the queue, waiting for a person, or assigned to one. */
export type HandoffState = 'idle' | 'waiting' | 'assigned'

/** One conversation's handoff row as stored (the desk's whole state about it). */
export interface HandoffRow {
  bot: string
  thread: string
  userId: string
  state: HandoffState
  /** Why it entered the queue; null when it was claimed without being queued. */
  reason: HandoffReason | null
  /** When it entered the queue (or was claimed), epoch ms; null while idle. */
  since: number | null
  /** The incoming message that put it in the queue. */
  text: string | null
  /** Who claimed it (user or token name). */
  assignee: string | null
  /** Incoming NotHandled messages in a row, up to now. */
  streak: number
  /** The streak before the latest incoming message counted as handled (a NotHandled reply may still mark it). */
  heldStreak: number | null
  /** The latest incoming message's text (the queue's `text` when a NotHandled reply puts it there). */
  lastText: string | null
  /** The latest user or operator message (or pause), epoch ms: the auto-resume idle time counts from it. */
  activeAt: number
}

/** One change of {@link HandoffStore.updateHandoffs}. */
export interface HandoffChange {
  bot: string
  thread: string
  /** Synchronous and pure, like `updateHandoff`'s. */
  change: (current: HandoffRow | undefined) => HandoffRow | undefined
}

/** A queue entry as `GET /api/handoffs` lists it. */
export interface HandoffEntry {
  bot: string
  thread: string
  userId: string
  state: Exclude<HandoffState, 'idle'>
  reason: HandoffReason | null
  since: number
  text: string | null
  assignee: string | null
  /** The bot is paused on this conversation. */
  paused: boolean
}

/** An operator's internal note on a conversation (never sent to the user). */
export interface HandoffNote {
  id: number
  bot: string
  thread: string
  /** The conversation's user (erasure and export find notes by it). */
  userId: string
  /** User or token name; `system` for the desk's own lines (auto-resume). */
  author: string
  text: string
  /** Epoch ms. */
  ts: number
}

/** Which queue entries {@link HandoffStore.handoffs} lists. */
export interface HandoffFilter {
  /** Only this bot's entries. */
  bot?: string
  /** Only these bots' entries (the caller's scope); an empty list matches nothing. */
  bots?: readonly string[]
  /** `waiting`, `assigned`, or `all` (both). Default `all`. */
  state?: 'waiting' | 'assigned' | 'all'
  /** Only this conversation. */
  thread?: string
  /** Only entries assigned to this person. */
  assignee?: string
  limit?: number
}

/** What the auto-resume check asks the store for (see {@link HandoffStore.takeIdlePaused}). */
export interface IdleQuery {
  bot: string
  /** Conversations with no activity since before this (epoch ms). */
  idleBefore: number
  /** Written as the pause's new time (epoch ms). */
  now: number
  /** At most this many. */
  limit: number
}

/** A conversation the auto-resume check took: it is no longer paused nor queued. */
export interface ResumedConversation {
  bot: string
  thread: string
  userId: string
  /** Who had it before (null when nobody had claimed it). */
  assignee: string | null
}

/**
 * The handoff desk's storage, part of `RecordStore`. Every change is atomic across collector
 * instances sharing the database; what changes a queue entry reaches the other instances'
 * live feeds (a `handoff` or `note` change through `subscribe`).
 */
export interface HandoffStore {
  /**
   * Reads one conversation's row, locked against every other writer (other instances included),
   * and writes what `change` returns (nothing when it returns `undefined` or the row unchanged).
   * `change` must be synchronous and pure: it may run again after a conflict.
   */
  updateHandoff(
    bot: string,
    thread: string,
    change: (current: HandoffRow | undefined) => HandoffRow | undefined,
  ): Promise<{ before: HandoffRow | undefined; after: HandoffRow | undefined }>
  /**
   * {@link HandoffStore.updateHandoff} for many changes in ONE transaction (the desk's group
   * commit), applied in order (several changes of one conversation each see the one before);
   * returns each change's before and after, in order.
   */
  updateHandoffs(
    changes: readonly HandoffChange[],
  ): Promise<Array<{ before: HandoffRow | undefined; after: HandoffRow | undefined }>>
  /** Queue entries: waiting ones oldest first, then assigned ones oldest first. */
  handoffs(filter: HandoffFilter): Promise<HandoffEntry[]>
  /**
   * Auto-resume: marks unpaused, and takes off the queue, at most `limit` of `bot`'s paused
   * conversations with no activity since `idleBefore` (the row's `activeAt`, else the pause's
   * time), and returns them. Each conversation is returned to one caller only, whichever instance.
   */
  takeIdlePaused(opts: IdleQuery): Promise<ResumedConversation[]>
  /** Appends a note. */
  addNote(note: Omit<HandoffNote, 'id'>): Promise<HandoffNote>
  /** A conversation's notes, oldest first. */
  notes(bot: string, thread: string): Promise<HandoffNote[]>
  /** One user's notes across their conversations, oldest first (the export). */
  userNotes(bot: string, userId: string): Promise<HandoffNote[]>
}

/** True when two rows differ in what the queue shows (state, reason, assignee, since, text). */
export function queueChanged(a: HandoffRow | undefined, b: HandoffRow | undefined): boolean {
  return (
    (a?.state ?? 'idle') !== (b?.state ?? 'idle') ||
    a?.assignee !== b?.assignee ||
    a?.reason !== b?.reason ||
    a?.since !== b?.since ||
    a?.text !== b?.text
  )
}

/** True when `change` left the row as it was (nothing to write). */
export function sameRow(a: HandoffRow | undefined, b: HandoffRow | undefined): boolean {
  if (a === b) return true
  if (!a || !b) return false
  return (Object.keys(a) as Array<keyof HandoffRow>).every((k) => a[k] === b[k])
}
