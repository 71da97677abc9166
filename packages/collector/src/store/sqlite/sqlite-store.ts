import Database from 'better-sqlite3'
import type { NormalizedMessage } from '../../ingest/normalize'
import { type AnalyticsReads, analyticsReads } from '../../reports/analytics-reads'
import { lockUsers } from '../../reports/analytics-writes'
import { sqliteDialect as d, type Query } from '../../reports/dialect'
import { eventTsOf, freshMessage, jsonColumn } from '../../reports/fresh-message'
import { warmFunnelPacks } from '../../reports/funnel-packs'
import { FunnelPackCache } from '../../reports/funnel-packs-memory'
import { eraseHandoffMarks, markHandoff } from '../../reports/handoff-summary'
import { recentQuery, transcriptQuery } from '../../reports/message-queries'
import type { Row } from '../../reports/report-queries'
import { reportReads } from '../../reports/report-reads'
import { retentionZones } from '../../reports/retention-cohorts'
import type { RollupMessage } from '../../reports/rollup-delta'
import { ROLLUP_COLUMNS, rollupMessage, runSteps } from '../../reports/rollup-writes'
import { SQLITE_SEARCH_INDEX_BATCH } from '../../reports/search-query'
import { ingestSummaries, takeBackSummaries } from '../../reports/summary-writes'
import { doomedUsage } from '../../reports/usage-rollup'
import type {
  HandoffChange,
  HandoffEntry,
  HandoffFilter,
  HandoffNote,
  HandoffRow,
  IdleQuery,
  ResumedConversation,
} from '../handoff-records'
import { type RetentionZonePreparer, zonePreparer } from '../retention-zone-preparer'
import type {
  AddResult,
  AuditEntry,
  ErasureResult,
  IncomingRecord,
  MessengerPageConfig,
  PauseState,
  ReadFilter,
  RecordStore,
  StoredMessage,
  StoredRecord,
  StoreOptions,
  TranscriptPage,
} from '../store'
import { sessionGapMs } from '../store'
import { StoreReads } from '../store-reads'
import {
  clampLimit,
  type MessageRow,
  type MessengerPageRow,
  pagedRecords,
  toMessage,
  toMessengerPage,
} from '../store-rows'
import { TOMBSTONE_DOOMED } from './sqlite-fingerprints'
import { SqliteHandoffs } from './sqlite-handoffs'
import { syncRetentionZones } from './sqlite-history-summaries'
import { migrateSqlite } from './sqlite-migrations'

interface PendingAdd {
  record: IncomingRecord
  messages: NormalizedMessage[]
  resolve: (result: AddResult) => void
  reject: (error: unknown) => void
}

/**
 * better-sqlite3 12 on Node 24 (built against ≥ 24.19 headers) aborts the process (`Assertion
 * failed: (env) != nullptr` in `RemoveEnvironmentCleanupHook`) when a Database or Statement is
 * garbage-collected outside a Node context: while the process or a worker exits, and also mid-run,
 * in a collection started by one of V8's own tasks (incremental marking, idle time) — a few
 * hundred dropped statements under old-generation churn abort within a second (an upstream
 * issue; better-sqlite3 13, which fixes it, does not run on Node 20). The store's databases and
 * statements are few and cached, so they are kept reachable until the process ends: none is
 * ever finalized. Tests opening their own database do the same (test/support/kept-sqlite.ts).
 */
const keptAlive = new Set<object>()
function kept<T extends object>(value: T): T {
  keptAlive.add(value)
  return value
}

/**
 * The default {@link RecordStore}: SQLite through better-sqlite3, a file or `:memory:`. WAL
 * mode for files, so the dashboard's reads don't block ingest.
 *
 * @example const store = new SqliteRecordStore('./convotrack.db')
 */
export class SqliteRecordStore extends StoreReads implements RecordStore {
  private readonly db: Database.Database
  private readonly cache = new Map<string, Database.Statement>()
  private readonly insertRecord: Database.Statement
  private readonly insertMessage: Database.Statement
  private readonly findKey: Database.Statement
  private readonly findTombstone: Database.Statement
  private readonly addTx: (record: IncomingRecord, messages: NormalizedMessage[]) => AddResult
  private readonly addBatchTx: (
    batch: ReadonlyArray<{ record: IncomingRecord; messages: NormalizedMessage[] }>,
  ) => AddResult[]
  private pending: PendingAdd[] = []
  private readonly gapMs: number
  private readonly zones: readonly string[]
  protected override readonly analytics: AnalyticsReads
  /** The funnels' packs, kept in this process (funnel-packs-memory.ts). */
  private readonly funnelPacks: FunnelPackCache
  protected override readonly zonePreparer: RetentionZonePreparer
  private readonly desk: SqliteHandoffs

  /**
   * @param file SQLite file path, or `:memory:`.
   * @param options `sessionGapMinutes` (default 30), `retentionZones` (default `['UTC']`), `retentionZonesOnDemand` (default 8).
   */
  constructor(file = ':memory:', options: StoreOptions = {}) {
    super()
    this.gapMs = sessionGapMs(options)
    this.zones = retentionZones(options.retentionZones)
    const reads = analyticsReads(d, async (q: Query): Promise<Row[]> => this.run(q), this.zones)
    this.funnelPacks = new FunnelPackCache(d, (q) => this.run(q))
    // Funnels from the packs kept in the process (funnel-packs-memory.ts); by the statement while
    // more than a few days are not packed yet (the first seconds after the start).
    this.analytics = { ...reads, funnel: async (filter) => this.funnelPacks.count(filter) ?? reads.funnel(filter) }
    this.db = kept(new Database(file))
    // exec, not pragma(): pragma() prepares a statement the store could not keep (see `kept`).
    // A 64 MB page cache: the summaries' rows are updated all over their tables at ingest.
    // A batch's commit writes thousands of pages (rows and indexes all over the summaries): at
    // the default 1 000-page WAL threshold every commit also ran a checkpoint (copy + fsync) on
    // the event loop. At 16 000 pages (64 MB of WAL) a checkpoint comes every few batches and
    // copies a page written by several of them once (bench: ~25 % less system time at ingest).
    if (file !== ':memory:')
      this.db.exec(
        'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 16000',
      )
    migrateSqlite(this.db, kept, (q) => this.run(q))
    syncRetentionZones(this.db, this.zones, (q) => this.run(q))
    this.zonePreparer = zonePreparer(
      d,
      options,
      this.zones,
      async (steps) => this.db.transaction(() => runSteps(steps(), (q) => this.run(q))).immediate(),
      async (steps) => runSteps(steps, (q) => this.run(q)),
    )
    this.zonePreparer.resume().catch((e: unknown) => console.error('[convotrack-collector] retention zones', e))
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS doomed (id INTEGER PRIMARY KEY)')
    // Every step's days packed a second after the start, off the event loop's busy moments; the
    // count's code compiled before the first funnel.
    void this.funnelPacks.warm(1000)
    warmFunnelPacks()
    this.desk = new SqliteHandoffs(this.db, (sql) => this.stmt(sql))
    // A repeated (bot, idempotency key) inserts nothing (changes = 0); its id is then looked up.
    this.insertRecord = kept(
      this.db.prepare(
        `INSERT INTO records (bot, platform, type, v, received_at, event_ts, raw, idempotency_key, fingerprint)
       VALUES (@bot, @platform, @type, @v, @receivedAt, @eventTs, @raw, @idempotencyKey, @fingerprint)
       ON CONFLICT (bot, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
      ),
    )
    this.findKey = kept(this.db.prepare('SELECT id, fingerprint FROM records WHERE bot = ? AND idempotency_key = ?'))
    this.findTombstone = kept(
      this.db.prepare(
        'SELECT record_id AS id, fingerprint FROM idempotency_tombstones WHERE bot = ? AND idempotency_key = ?',
      ),
    )
    // A repeat: the stored record's id and fingerprint (an erased one's from its tombstone).
    const repeat = (row: unknown): AddResult => {
      const { id, fingerprint } = row as { id: number; fingerprint: string | null }
      return { id: Number(id), duplicate: true, messages: [], ...(fingerprint ? { fingerprint } : {}) }
    }
    this.insertMessage = kept(
      this.db.prepare(`INSERT INTO messages
      (record_id, bot, platform, direction, user_id, conversation_id, thread, session_id, text, intent, confidence,
       buttons, images, user_json, event_type, event_name, amount, ts, received_at, nh, event_key)
      VALUES (@recordId, @bot, @platform, @direction, @userId, @conversationId, @thread, @sessionId, @text, @intent, @confidence,
       @buttons, @images, @userJson, @eventType, @eventName, @amount, @ts, @receivedAt, @nh, @eventKey)`),
    )
    /** Stores one record and its messages; the summaries' share is gathered into `fresh` / `records`. */
    const insertOne = (
      record: IncomingRecord,
      messages: NormalizedMessage[],
      fresh: RollupMessage[],
      records: Array<{ bot: string; ts: number }>,
    ): AddResult => {
      const key = record.idempotencyKey ?? null
      const erased = key === null ? undefined : this.findTombstone.get(record.bot, key)
      if (erased) return repeat(erased)
      const inserted = this.insertRecord.run({
        bot: record.bot,
        platform: record.platform,
        type: record.type,
        v: record.v,
        receivedAt: record.receivedAt,
        eventTs: eventTsOf(record),
        raw: record.raw,
        idempotencyKey: key,
        fingerprint: record.fingerprint ?? null,
      })
      if (inserted.changes === 0) return repeat(this.findKey.get(record.bot, key))
      const id = Number(inserted.lastInsertRowid)
      records.push({ bot: record.bot, ts: eventTsOf(record) })
      const stored = messages.map((m): StoredMessage => {
        const draft = freshMessage(record, m, 0, id)
        const mid = Number(
          this.insertMessage.run({
            recordId: id,
            bot: record.bot,
            platform: m.platform,
            direction: m.direction,
            userId: m.userId,
            conversationId: m.conversationId,
            thread: m.thread,
            sessionId: m.sessionId,
            text: m.text,
            intent: m.intent,
            confidence: m.confidence,
            buttons: jsonColumn(m.buttons),
            images: jsonColumn(m.images),
            userJson: draft.rollup.userJson,
            eventType: m.event?.type ?? null,
            eventName: m.event?.name ?? null,
            amount: m.event?.amount ?? null,
            ts: draft.stored.ts,
            receivedAt: record.receivedAt,
            nh: draft.rollup.nh ? 1 : 0,
            eventKey: draft.rollup.eventKey,
          }).lastInsertRowid,
        )
        fresh.push({ ...draft.rollup, id: mid })
        return { ...draft.stored, id: mid }
      })
      return { id, duplicate: false, messages: stored }
    }
    // The summaries are maintained in the same transaction as the inserts.
    const insertBatch = (batch: ReadonlyArray<{ record: IncomingRecord; messages: NormalizedMessage[] }>) => {
      const fresh: RollupMessage[] = []
      const records: Array<{ bot: string; ts: number }> = []
      const results = batch.map((item) => insertOne(item.record, item.messages, fresh, records))
      // The batch's texts into the search index, in key order (SQLITE_SEARCH_INDEX_BATCH).
      const first = fresh[0]?.id
      if (first !== undefined) this.run({ sql: SQLITE_SEARCH_INDEX_BATCH, params: [first] })
      runSteps(ingestSummaries(d, fresh, records, this.gapMs, this.zones), (q) => this.run(q))
      this.funnelPacks.touch(fresh)
      return results
    }
    this.addTx = this.db.transaction((record: IncomingRecord, messages: NormalizedMessage[]) => {
      return insertBatch([{ record, messages }])[0] as AddResult
    })
    this.addBatchTx = this.db.transaction(insertBatch)
  }

  /**
   * Packs every funnel step's days in this process (the job the store starts a second after it
   * opens; joined when it runs): resolves when a funnel over any steps is read from packs alone.
   * Exposed for tests and the scale bench.
   */
  repackFunnels(): Promise<void> {
    return this.funnelPacks.warm()
  }

  /** Runs one statement of the shared SQL, answering its rows (none for a write without RETURNING). */
  private run(q: Query): Row[] {
    const s = this.stmt(q.sql)
    if (s.reader) return s.all(...q.params) as Row[]
    s.run(...q.params)
    return []
  }

  /** The reports, on this database. */
  protected override readonly reports = reportReads(d, async (q: Query): Promise<Row[]> => this.run(q))

  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql)
    if (!s) {
      s = kept(this.db.prepare(sql))
      this.cache.set(sql, s)
    }
    return s
  }

  private all<T>(sql: string, ...params: unknown[]): T[] {
    return this.stmt(sql).all(...params) as T[]
  }

  /**
   * Group commit: records arriving in the same turn of the event loop (concurrent requests)
   * share one transaction, so a busy collector commits — and writes the WAL — far less often.
   */
  async add(record: IncomingRecord, messages: NormalizedMessage[]): Promise<AddResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ record, messages, resolve, reject })
      if (this.pending.length === 1) setImmediate(() => this.commitPending())
    })
  }

  private commitPending(): void {
    const batch = this.pending
    this.pending = []
    if (batch.length === 0) return
    try {
      const results = this.addBatchTx(batch)
      for (const [i, item] of batch.entries()) item.resolve(results[i] as AddResult)
    } catch {
      // One bad record must not fail the others: retry them one by one.
      for (const item of batch) {
        try {
          item.resolve(this.addTx(item.record, item.messages))
        } catch (e) {
          item.reject(e)
        }
      }
    }
  }

  /**
   * One transaction for the whole batch, in order (records of concurrent single adds still
   * waiting for their group commit are committed first, so arrival order is kept).
   */
  async addMany(items: ReadonlyArray<{ record: IncomingRecord; messages: NormalizedMessage[] }>): Promise<AddResult[]> {
    this.commitPending()
    return this.addBatchTx(items)
  }

  async record(id: number): Promise<StoredRecord | undefined> {
    const row = this.stmt(
      'SELECT id, bot, platform, type, v, received_at AS receivedAt, raw FROM records WHERE id = ?',
    ).get(id)
    return row as StoredRecord | undefined
  }

  async recent(filter: ReadFilter & { limit?: number; afterId?: number }): Promise<StoredMessage[]> {
    const q = recentQuery(d, filter, clampLimit(filter.limit, 100))
    return (this.run(q) as unknown as MessageRow[]).map(toMessage)
  }

  async transcript(bot: string, thread: string, options: TranscriptPage = {}): Promise<StoredMessage[]> {
    const before = options.beforeId === undefined ? undefined : Math.floor(options.beforeId)
    const q = transcriptQuery(d, bot, thread, clampLimit(options.limit, 500), before)
    return (this.run(q) as unknown as MessageRow[]).map(toMessage)
  }

  async setPaused(bot: string, thread: string, paused: boolean): Promise<PauseState> {
    const updatedAt = Date.now()
    this.stmt(
      'INSERT INTO pauses (bot, thread, paused, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (bot, thread) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at',
    ).run(bot, thread, paused ? 1 : 0, updatedAt)
    return { bot, thread, paused, updatedAt }
  }

  async paused(bot: string, thread: string): Promise<boolean> {
    const row = this.stmt('SELECT paused FROM pauses WHERE bot = ? AND thread = ?').get(bot, thread) as
      | { paused: number }
      | undefined
    return row?.paused === 1
  }

  async saveMessengerPage(page: MessengerPageConfig): Promise<void> {
    this.stmt(
      `INSERT INTO messenger_pages (page_id, app_secret, verify_token, bot) VALUES (?, ?, ?, ?)
       ON CONFLICT (page_id) DO UPDATE SET app_secret = excluded.app_secret, verify_token = excluded.verify_token, bot = excluded.bot`,
    ).run(page.pageId, page.appSecret, page.verifyToken, page.bot ?? null)
  }

  async messengerPages(): Promise<MessengerPageConfig[]> {
    const rows = this.all<MessengerPageRow>('SELECT * FROM messenger_pages')
    return rows.map(toMessengerPage)
  }

  /**
   * Deletes the records listed in the temp table `doomed` with their messages, and takes their
   * share out of the summaries; returns how many records and messages.
   */
  private deleteDoomed(): { records: number; messages: number } {
    const doomed = this.all<Row>(
      `SELECT ${ROLLUP_COLUMNS} FROM messages WHERE record_id IN (SELECT id FROM doomed)`,
    ).map(rollupMessage)
    const records = this.all<{ bot: string; ts: number }>(
      'SELECT bot, coalesce(event_ts, received_at) AS ts FROM records WHERE id IN (SELECT id FROM doomed)',
    )
    const ids = this.all<{ id: number }>('SELECT id FROM doomed').map((r) => r.id)
    const usage = runSteps(doomedUsage(d, ids), (q) => this.run(q))
    const messages = this.stmt('DELETE FROM messages WHERE record_id IN (SELECT id FROM doomed)').run().changes
    const removed = this.stmt('DELETE FROM records WHERE id IN (SELECT id FROM doomed)').run().changes
    this.stmt('DELETE FROM doomed').run()
    runSteps(takeBackSummaries(d, doomed, records, this.gapMs, usage, this.zones), (q) => this.run(q))
    this.funnelPacks.takenBack(doomed)
    return { records: removed, messages }
  }

  async eraseUser(bot: string, userId: string): Promise<ErasureResult> {
    this.commitPending()
    return this.db.transaction((): ErasureResult => {
      const threads = this.all<{ thread: string }>(
        'SELECT DISTINCT thread FROM messages WHERE bot = ? AND user_id = ?',
        bot,
        userId,
      ).map((t) => t.thread)
      this.stmt('DELETE FROM doomed').run()
      this.stmt('INSERT OR IGNORE INTO doomed (id) SELECT record_id FROM messages WHERE bot = ? AND user_id = ?').run(
        bot,
        userId,
      )
      this.stmt(TOMBSTONE_DOOMED).run()
      const gone = this.deleteDoomed()
      const json = JSON.stringify([userId, ...threads])
      this.stmt('DELETE FROM pauses WHERE bot = ? AND thread IN (SELECT value FROM json_each(?))').run(bot, json)
      runSteps(eraseHandoffMarks(d, bot, userId), (q) => this.run(q))
      this.stmt('UPDATE audit SET detail = NULL WHERE bot = ? AND target IN (SELECT value FROM json_each(?))').run(
        bot,
        json,
      )
      this.desk.erase(bot, userId, json)
      return { removed: gone.records, messages: gone.messages, threads }
    })()
  }

  async *exportUser(bot: string, userId: string): AsyncIterable<StoredRecord> {
    yield* pagedRecords((after) =>
      this.all<StoredRecord>(
        `SELECT r.id, r.bot, r.platform, r.type, r.v, r.received_at AS receivedAt, r.raw
       FROM records r WHERE r.id IN (
         SELECT DISTINCT record_id FROM messages WHERE bot = ? AND user_id = ? AND record_id > ? ORDER BY record_id LIMIT 500)
       ORDER BY r.id`,
        bot,
        userId,
        after,
      ),
    )
  }

  async deleteOlderThan(opts: {
    before: number
    bot?: string
    exceptBots?: readonly string[]
    limit: number
  }): Promise<number> {
    this.commitPending()
    return this.db.transaction((): number => {
      this.stmt('DELETE FROM doomed').run()
      const where = [
        opts.bot !== undefined ? ' AND bot = ?' : '',
        opts.exceptBots?.length ? ' AND bot NOT IN (SELECT value FROM json_each(?))' : '',
      ].join('')
      const params: unknown[] = [opts.before]
      if (opts.bot !== undefined) params.push(opts.bot)
      if (opts.exceptBots?.length) params.push(JSON.stringify(opts.exceptBots))
      this.stmt(
        `INSERT INTO doomed (id) SELECT id FROM records WHERE received_at < ?${where} ORDER BY received_at LIMIT ?`,
      ).run(...params, Math.max(1, Math.floor(opts.limit)))
      return this.deleteDoomed().records
    })()
  }

  /** Stores an audit entry; an operator's handoff action is counted in its session in the same transaction (handoff-summary.ts). */
  async addAudit(entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry> {
    // The thread and the sessions the action falls in, as stored: adds still pending first.
    this.commitPending()
    const id = this.db.transaction((): number => {
      const id = Number(
        this.stmt('INSERT INTO audit (ts, actor, action, bot, target, detail) VALUES (?, ?, ?, ?, ?, ?)').run(
          entry.ts,
          entry.actor,
          entry.action,
          entry.bot,
          entry.target,
          entry.detail === null ? null : JSON.stringify(entry.detail),
        ).lastInsertRowid,
      )
      runSteps(
        markHandoff(d, entry, this.gapMs, (key) => lockUsers(d, [key])),
        (q) => this.run(q),
      )
      return id
    })()
    return { ...entry, id }
  }

  async audit(filter: { bots?: readonly string[]; limit?: number; beforeId?: number }): Promise<AuditEntry[]> {
    const params: unknown[] = []
    let where = 'WHERE 1 = 1'
    if (filter.bots !== undefined) {
      where += ' AND bot IN (SELECT value FROM json_each(?))'
      params.push(JSON.stringify(filter.bots))
    }
    if (filter.beforeId !== undefined) {
      where += ' AND id < ?'
      params.push(filter.beforeId)
    }
    const rows = this.all<Omit<AuditEntry, 'detail'> & { detail: string | null }>(
      `SELECT id, ts, actor, action, bot, target, detail FROM audit ${where} ORDER BY id DESC LIMIT ?`,
      ...params,
      clampLimit(filter.limit, 200),
    )
    return rows.map((r) => ({ ...r, detail: r.detail === null ? null : JSON.parse(r.detail) }))
  }

  async ping(): Promise<void> {
    this.stmt('SELECT 1').get()
  }

  // The handoff desk (sqlite-handoffs.ts).
  async updateHandoff(
    bot: string,
    thread: string,
    change: (current: HandoffRow | undefined) => HandoffRow | undefined,
  ): Promise<{ before: HandoffRow | undefined; after: HandoffRow | undefined }> {
    return this.desk.update([{ bot, thread, change }])[0] as {
      before: HandoffRow | undefined
      after: HandoffRow | undefined
    }
  }

  async updateHandoffs(
    changes: readonly HandoffChange[],
  ): Promise<Array<{ before: HandoffRow | undefined; after: HandoffRow | undefined }>> {
    return this.desk.update(changes)
  }

  async handoffs(filter: HandoffFilter): Promise<HandoffEntry[]> {
    return this.desk.list(filter)
  }

  async takeIdlePaused(opts: IdleQuery): Promise<ResumedConversation[]> {
    return this.desk.takeIdlePaused(opts)
  }

  async addNote(note: Omit<HandoffNote, 'id'>): Promise<HandoffNote> {
    return this.desk.addNote(note)
  }

  async notes(bot: string, thread: string): Promise<HandoffNote[]> {
    return this.desk.notes(bot, thread)
  }

  async userNotes(bot: string, userId: string): Promise<HandoffNote[]> {
    return this.desk.userNotes(bot, userId)
  }

  async close(): Promise<void> {
    this.funnelPacks.stop()
    await this.zonePreparer.close()
    if (this.db.open) this.commitPending()
    if (this.db.open) this.db.close()
  }
}
