import type Database from 'better-sqlite3'
import {
  type HandoffChange,
  type HandoffEntry,
  type HandoffFilter,
  type HandoffNote,
  type HandoffRow,
  type IdleQuery,
  type ResumedConversation,
  sameRow,
} from '../handoff-records'
import {
  HANDOFF_COLUMNS,
  type HandoffNoteRow,
  type HandoffSqlRow,
  handoffValues,
  queueStates,
  toHandoffEntry,
  toHandoffNote,
  toHandoffRow,
} from '../handoff-rows'

/**
 * The handoff desk's tables (added after the first release): created when missing, so older
 * database files get them when opened. Kept apart from the record schema on purpose.
 */
export const SQLITE_HANDOFF_SCHEMA = `
CREATE TABLE IF NOT EXISTS handoffs (
  bot TEXT NOT NULL,
  thread TEXT NOT NULL,
  user_id TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT,
  since INTEGER,
  text TEXT,
  assignee TEXT,
  streak INTEGER NOT NULL DEFAULT 0,
  held_streak INTEGER,
  last_text TEXT,
  active_at INTEGER NOT NULL,
  PRIMARY KEY (bot, thread)
);
CREATE INDEX IF NOT EXISTS handoffs_queue ON handoffs (state, since) WHERE state <> 'idle';
CREATE TABLE IF NOT EXISTS notes (
  id INTEGER PRIMARY KEY,
  bot TEXT NOT NULL,
  thread TEXT NOT NULL,
  user_id TEXT NOT NULL,
  author TEXT NOT NULL,
  text TEXT NOT NULL,
  ts INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_thread ON notes (bot, thread, id);
CREATE INDEX IF NOT EXISTS notes_user ON notes (bot, user_id, id);
`

/**
 * {@link HandoffStore} on SQLite: one process owns the file, so a transaction is the lock.
 *
 * @example const desk = new SqliteHandoffs(db, (sql) => db.prepare(sql))
 */
export class SqliteHandoffs {
  constructor(
    private readonly db: Database.Database,
    private readonly stmt: (sql: string) => Database.Statement,
  ) {
    db.exec(SQLITE_HANDOFF_SCHEMA)
  }

  private row(bot: string, thread: string): HandoffRow | undefined {
    const r = this.stmt(`SELECT ${HANDOFF_COLUMNS} FROM handoffs WHERE bot = ? AND thread = ?`).get(bot, thread) as
      | HandoffSqlRow
      | undefined
    return r && toHandoffRow(r)
  }

  /** Changes in order, in one transaction (the lock, on SQLite). */
  update(changes: readonly HandoffChange[]): Array<{ before: HandoffRow | undefined; after: HandoffRow | undefined }> {
    return this.db.transaction(() =>
      changes.map(({ bot, thread, change }) => {
        const before = this.row(bot, thread)
        const next = change(before)
        if (!next || sameRow(before, next)) return { before, after: before }
        const after = { ...next, bot, thread }
        this.stmt(
          `INSERT OR REPLACE INTO handoffs (${HANDOFF_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(...handoffValues(after))
        return { before, after }
      }),
    )()
  }

  list(filter: HandoffFilter): HandoffEntry[] {
    const params: unknown[] = [JSON.stringify(queueStates(filter.state))]
    let where = ''
    if (filter.bot !== undefined) where += ` AND h.bot = ${push(params, filter.bot)}`
    if (filter.bots !== undefined)
      where += ` AND h.bot IN (SELECT value FROM json_each(${push(params, JSON.stringify(filter.bots))}))`
    if (filter.thread !== undefined) where += ` AND h.thread = ${push(params, filter.thread)}`
    if (filter.assignee !== undefined) where += ` AND h.assignee = ${push(params, filter.assignee)}`
    const rows = this.stmt(
      `SELECT h.*, coalesce(p.paused, 0) AS paused FROM handoffs h
       LEFT JOIN pauses p ON p.bot = h.bot AND p.thread = h.thread
       WHERE h.state IN (SELECT value FROM json_each(?))${where}
       ORDER BY h.state = 'assigned', h.since, h.bot, h.thread LIMIT ?`,
    ).all(...params, Math.min(Math.max(1, filter.limit ?? 500), 5000)) as Array<HandoffSqlRow & { paused: number }>
    return rows.flatMap((r) => toHandoffEntry(toHandoffRow(r), r.paused === 1) ?? [])
  }

  takeIdlePaused(opts: IdleQuery): ResumedConversation[] {
    return this.db.transaction(() => {
      const rows = this.stmt(
        `SELECT p.thread, h.user_id, h.assignee FROM pauses p
         LEFT JOIN handoffs h ON h.bot = p.bot AND h.thread = p.thread
         WHERE p.bot = ? AND p.paused = 1 AND max(coalesce(h.active_at, 0), p.updated_at) < ?
         ORDER BY p.updated_at LIMIT ?`,
      ).all(opts.bot, opts.idleBefore, Math.max(1, opts.limit)) as Array<{
        thread: string
        user_id: string | null
        assignee: string | null
      }>
      for (const r of rows) {
        this.stmt('UPDATE pauses SET paused = 0, updated_at = ? WHERE bot = ? AND thread = ?').run(
          opts.now,
          opts.bot,
          r.thread,
        )
        this.stmt(
          `UPDATE handoffs SET state = 'idle', reason = NULL, since = NULL, text = NULL, assignee = NULL, streak = 0,
           held_streak = NULL WHERE bot = ? AND thread = ?`,
        ).run(opts.bot, r.thread)
      }
      return rows.map((r) => ({ bot: opts.bot, thread: r.thread, userId: r.user_id ?? r.thread, assignee: r.assignee }))
    })()
  }

  addNote(note: Omit<HandoffNote, 'id'>): HandoffNote {
    const id = Number(
      this.stmt('INSERT INTO notes (bot, thread, user_id, author, text, ts) VALUES (?, ?, ?, ?, ?, ?)').run(
        note.bot,
        note.thread,
        note.userId,
        note.author,
        note.text,
        note.ts,
      ).lastInsertRowid,
    )
    return { ...note, id }
  }

  notes(bot: string, thread: string): HandoffNote[] {
    return (
      this.stmt('SELECT * FROM notes WHERE bot = ? AND thread = ? ORDER BY id LIMIT 1000').all(
        bot,
        thread,
      ) as HandoffNoteRow[]
    ).map(toHandoffNote)
  }

  userNotes(bot: string, userId: string): HandoffNote[] {
    return (
      this.stmt('SELECT * FROM notes WHERE bot = ? AND user_id = ? ORDER BY id').all(bot, userId) as HandoffNoteRow[]
    ).map(toHandoffNote)
  }

  /** Erasure: the user's notes and the handoff rows of their conversations. Runs inside the erasure's transaction. */
  erase(bot: string, userId: string, threadsJson: string): void {
    this.stmt('DELETE FROM notes WHERE bot = ? AND (user_id = ? OR thread IN (SELECT value FROM json_each(?)))').run(
      bot,
      userId,
      threadsJson,
    )
    this.stmt('DELETE FROM handoffs WHERE bot = ? AND (user_id = ? OR thread IN (SELECT value FROM json_each(?)))').run(
      bot,
      userId,
      threadsJson,
    )
  }
}

function push(params: unknown[], value: unknown): string {
  params.push(value)
  return '?'
}
