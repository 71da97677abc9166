import type pg from 'pg'
import {
  type HandoffChange,
  type HandoffEntry,
  type HandoffFilter,
  type HandoffNote,
  type HandoffRow,
  type IdleQuery,
  queueChanged,
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

interface Sql {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

/** What {@link PgHandoffs} borrows from the store: its pool, transactions and notifications. */
export interface PgHandoffDeps {
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T>
  notify(sql: Sql, payload: Record<string, unknown>): Promise<void>
}

/** PostgreSQL text holds no NUL. */
const clean = (v: string | null): string | null => (v === null ? null : v.replaceAll('\0', '\uFFFD'))
/** Notification payloads stay far below PostgreSQL's 8 000 bytes: long texts are cut (dashboards re-read). */
const short = (v: string | null): string | null => (v === null || v.length <= 500 ? v : `${v.slice(0, 500)}…`)

/** The notification of a queue change (`k: 'h'`), read back by {@link handoffChangeOf}. */
export function handoffNotice(bot: string, thread: string, entry: HandoffEntry | undefined): Record<string, unknown> {
  return { k: 'h', bot, thread, e: entry ? { ...entry, text: short(entry.text) } : null }
}

/**
 * {@link HandoffStore} on PostgreSQL. A conversation's row is changed under a transaction-scoped
 * advisory lock on (bot, thread), so two instances changing one conversation (a claim each, or
 * ingest and a claim) take turns, even when the row does not exist yet; auto-resume takes rows
 * with `FOR UPDATE SKIP LOCKED` and re-checks them, so each paused conversation is resumed by
 * exactly one instance.
 */
export class PgHandoffs {
  constructor(private readonly deps: PgHandoffDeps) {}

  /**
   * Changes in order, in one transaction: the conversations' advisory locks taken in one sorted
   * pass (two batches never wait on each other in a circle), their rows read in one statement,
   * the changes folded in memory, the changed rows written in one statement.
   */
  async update(
    changes: readonly HandoffChange[],
  ): Promise<Array<{ before: HandoffRow | undefined; after: HandoffRow | undefined }>> {
    if (changes.length === 0) return []
    const keyOf = (bot: string, thread: string) => `${bot}\u0000${thread}`
    const keys = new Map<string, { bot: string; thread: string }>()
    for (const c of changes) keys.set(keyOf(c.bot, c.thread), { bot: c.bot, thread: clean(c.thread) as string })
    const sorted = [...keys.values()].sort((a, b) =>
      a.bot < b.bot ? -1 : a.bot > b.bot ? 1 : a.thread < b.thread ? -1 : a.thread > b.thread ? 1 : 0,
    )
    const bots = sorted.map((k) => k.bot)
    const threads = sorted.map((k) => k.thread)
    return this.deps.transaction(async (sql) => {
      await sql.query(
        'SELECT pg_advisory_xact_lock(hashtext(b), hashtext(t)) FROM unnest($1::text[], $2::text[]) AS x(b, t)',
        [bots, threads],
      )
      const found = await sql.query<HandoffSqlRow & { paused: boolean | null }>(
        `SELECT h.*, p.paused FROM unnest($1::text[], $2::text[]) AS x(b, t)
         JOIN convotrack_handoffs h ON h.bot = x.b AND h.thread = x.t
         LEFT JOIN convotrack_pauses p ON p.bot = h.bot AND p.thread = h.thread`,
        [bots, threads],
      )
      const current = new Map<string, HandoffRow>()
      const paused = new Map<string, boolean>()
      for (const r of found.rows) {
        current.set(keyOf(r.bot, r.thread), toHandoffRow(r))
        paused.set(keyOf(r.bot, r.thread), r.paused === true)
      }
      const first = new Map(current)
      const results = changes.map(({ bot, thread, change }) => {
        const key = keyOf(bot, clean(thread) as string)
        const before = current.get(key)
        const next = change(before)
        if (!next || sameRow(before, next)) return { before, after: before }
        const after = { ...next, bot, thread }
        current.set(key, after)
        return { before, after }
      })
      const written = [...current.entries()].filter(([key, row]) => !sameRow(first.get(key), row))
      if (written.length > 0) {
        const rows = written.map(([, r]) =>
          handoffValues({
            ...r,
            thread: clean(r.thread) as string,
            userId: clean(r.userId) as string,
            text: clean(r.text),
            lastText: clean(r.lastText),
          }),
        )
        const column = (i: number) => rows.map((v) => v[i])
        await sql.query(
          `INSERT INTO convotrack_handoffs (${HANDOFF_COLUMNS})
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],
                                $8::text[], $9::int[], $10::int[], $11::text[], $12::bigint[])
           ON CONFLICT (bot, thread) DO UPDATE SET user_id = excluded.user_id, state = excluded.state,
             reason = excluded.reason, since = excluded.since, text = excluded.text, assignee = excluded.assignee,
             streak = excluded.streak, held_streak = excluded.held_streak, last_text = excluded.last_text,
             active_at = excluded.active_at`,
          Array.from({ length: 12 }, (_, i) => column(i)),
        )
      }
      for (const [key, row] of written) {
        if (!queueChanged(first.get(key), row)) continue
        let isPaused = paused.get(key)
        if (isPaused === undefined) {
          const p = await sql.query<{ paused: boolean }>(
            'SELECT paused FROM convotrack_pauses WHERE bot = $1 AND thread = $2',
            [row.bot, clean(row.thread)],
          )
          isPaused = p.rows[0]?.paused === true
        }
        await this.deps.notify(sql, handoffNotice(row.bot, row.thread, toHandoffEntry(row, isPaused)))
      }
      return results
    })
  }

  async list(filter: HandoffFilter): Promise<HandoffEntry[]> {
    const params: unknown[] = [queueStates(filter.state)]
    let where = ''
    if (filter.bot !== undefined) where += ` AND h.bot = $${params.push(filter.bot)}`
    if (filter.bots !== undefined) where += ` AND h.bot = ANY($${params.push([...filter.bots])}::text[])`
    if (filter.thread !== undefined) where += ` AND h.thread = $${params.push(clean(filter.thread))}`
    if (filter.assignee !== undefined) where += ` AND h.assignee = $${params.push(filter.assignee)}`
    const rows = await this.deps.query<HandoffSqlRow & { paused: boolean | null }>(
      `SELECT h.*, p.paused FROM convotrack_handoffs h
       LEFT JOIN convotrack_pauses p ON p.bot = h.bot AND p.thread = h.thread
       WHERE h.state = ANY($1::text[])${where}
       ORDER BY h.state = 'assigned', h.since, h.bot, h.thread LIMIT $${params.push(Math.min(Math.max(1, filter.limit ?? 500), 5000))}`,
      params,
    )
    return rows.flatMap((r) => toHandoffEntry(toHandoffRow(r), r.paused === true) ?? [])
  }

  async takeIdlePaused(opts: IdleQuery): Promise<ResumedConversation[]> {
    return this.deps.transaction(async (sql) => {
      // Rows another instance holds are skipped (it has them); the UPDATE re-checks `paused` on
      // the row version it locked, so a conversation resumed meanwhile is not taken twice.
      const taken = await sql.query<{ thread: string }>(
        `UPDATE convotrack_pauses p SET paused = false, updated_at = $3
         FROM (SELECT p2.bot, p2.thread FROM convotrack_pauses p2
               LEFT JOIN convotrack_handoffs h ON h.bot = p2.bot AND h.thread = p2.thread
               WHERE p2.bot = $1 AND p2.paused AND greatest(coalesce(h.active_at, 0), p2.updated_at) < $2
               ORDER BY p2.updated_at LIMIT $4 FOR UPDATE OF p2 SKIP LOCKED) d
         WHERE p.bot = d.bot AND p.thread = d.thread AND p.paused
         RETURNING p.thread`,
        [opts.bot, opts.idleBefore, opts.now, Math.max(1, opts.limit)],
      )
      const threads = taken.rows.map((r) => r.thread)
      if (threads.length === 0) return []
      const before = await sql.query<{ thread: string; user_id: string; assignee: string | null; state: string }>(
        `SELECT thread, user_id, assignee, state FROM convotrack_handoffs WHERE bot = $1 AND thread = ANY($2::text[])`,
        [opts.bot, threads],
      )
      await sql.query(
        `UPDATE convotrack_handoffs SET state = 'idle', reason = NULL, since = NULL, text = NULL, assignee = NULL,
           streak = 0, held_streak = NULL WHERE bot = $1 AND thread = ANY($2::text[])`,
        [opts.bot, threads],
      )
      const rows = new Map(before.rows.map((r) => [r.thread, r]))
      for (const thread of threads) {
        await this.deps.notify(sql, { k: 'p', s: { bot: opts.bot, thread, paused: false, updatedAt: opts.now } })
        if ((rows.get(thread)?.state ?? 'idle') !== 'idle')
          await this.deps.notify(sql, handoffNotice(opts.bot, thread, undefined))
      }
      return threads.map((thread) => ({
        bot: opts.bot,
        thread,
        userId: rows.get(thread)?.user_id ?? thread,
        assignee: rows.get(thread)?.assignee ?? null,
      }))
    })
  }

  async addNote(note: Omit<HandoffNote, 'id'>): Promise<HandoffNote> {
    return this.deps.transaction(async (sql) => {
      const r = await sql.query<{ id: string }>(
        'INSERT INTO convotrack_notes (bot, thread, user_id, author, text, ts) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
        [note.bot, clean(note.thread), clean(note.userId), clean(note.author), clean(note.text), note.ts],
      )
      const stored = { ...note, id: Number(r.rows[0]?.id) }
      await this.deps.notify(sql, { k: 'n', n: { ...stored, text: short(stored.text) } })
      return stored
    })
  }

  async notes(bot: string, thread: string): Promise<HandoffNote[]> {
    const rows = await this.deps.query<HandoffNoteRow>(
      'SELECT id, bot, thread, user_id, author, text, ts FROM convotrack_notes WHERE bot = $1 AND thread = $2 ORDER BY id LIMIT 1000',
      [bot, clean(thread)],
    )
    return rows.map(toHandoffNote)
  }

  async userNotes(bot: string, userId: string): Promise<HandoffNote[]> {
    const rows = await this.deps.query<HandoffNoteRow>(
      'SELECT id, bot, thread, user_id, author, text, ts FROM convotrack_notes WHERE bot = $1 AND user_id = $2 ORDER BY id',
      [bot, clean(userId)],
    )
    return rows.map(toHandoffNote)
  }

  /** Erasure: the user's notes and their conversations' handoff rows, inside the erasure's transaction. */
  async erase(sql: Sql, bot: string, userId: string, threads: string[]): Promise<void> {
    const about = [clean(userId), ...threads]
    await sql.query('DELETE FROM convotrack_notes WHERE bot = $1 AND (user_id = $2 OR thread = ANY($3::text[]))', [
      bot,
      clean(userId),
      about,
    ])
    await sql.query('DELETE FROM convotrack_handoffs WHERE bot = $1 AND (user_id = $2 OR thread = ANY($3::text[]))', [
      bot,
      clean(userId),
      about,
    ])
  }
}

/** A `k: 'h'` or `k: 'n'` notification as a store change, or undefined for others. */
export function handoffChangeOf(n: {
  k?: string
  bot?: unknown
  thread?: unknown
  e?: unknown
  n?: unknown
}):
  | { kind: 'handoff'; bot: string; thread: string; entry: HandoffEntry | undefined }
  | { kind: 'note'; note: HandoffNote }
  | undefined {
  if (n.k === 'h' && typeof n.bot === 'string' && typeof n.thread === 'string')
    return { kind: 'handoff', bot: n.bot, thread: n.thread, entry: (n.e as HandoffEntry | null) ?? undefined }
  if (n.k === 'n' && n.n && typeof n.n === 'object') return { kind: 'note', note: n.n as HandoffNote }
  return undefined
}
