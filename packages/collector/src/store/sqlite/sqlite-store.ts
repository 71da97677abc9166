import Database from 'better-sqlite3'
import type { NormalizedMessage } from '../../ingest/normalize'
import type {
  AddResult,
  AuditEntry,
  ConversationSummary,
  ErasureResult,
  EventsReport,
  IncomingRecord,
  IntentLine,
  MessengerPageConfig,
  NotHandledLine,
  PauseState,
  ReadFilter,
  RecordStore,
  Segment,
  StoredMessage,
  StoredRecord,
  TimelineBucket,
  TranscriptPage,
} from '../store'
import {
  type ConversationRow,
  clampLimit,
  eventsReport,
  type MessageRow,
  type MessengerPageRow,
  pagedRecords,
  segmentsOf,
  toConversation,
  toMessage,
  toMessengerPage,
} from '../store-rows'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  bot TEXT NOT NULL,
  platform TEXT NOT NULL,
  type TEXT NOT NULL,
  v TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  raw TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_bot ON records (bot);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY,
  record_id INTEGER NOT NULL REFERENCES records(id),
  bot TEXT NOT NULL,
  platform TEXT NOT NULL,
  direction TEXT NOT NULL,
  user_id TEXT NOT NULL,
  conversation_id TEXT,
  thread TEXT NOT NULL,
  session_id TEXT,
  text TEXT,
  intent TEXT,
  confidence REAL,
  buttons TEXT,
  images TEXT,
  user_json TEXT,
  event_type TEXT,
  event_name TEXT,
  amount REAL,
  ts INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_thread ON messages (bot, thread, id);
CREATE INDEX IF NOT EXISTS messages_intent ON messages (intent) WHERE intent IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_event ON messages (event_type) WHERE event_type IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_user ON messages (bot, user_id, id) WHERE user_json IS NOT NULL;
CREATE TABLE IF NOT EXISTS pauses (
  bot TEXT NOT NULL,
  thread TEXT NOT NULL,
  paused INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (bot, thread)
);
CREATE INDEX IF NOT EXISTS messages_bot_user ON messages (bot, user_id, record_id);
CREATE INDEX IF NOT EXISTS messages_record ON messages (record_id);
CREATE INDEX IF NOT EXISTS records_received ON records (received_at);
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  bot TEXT,
  target TEXT,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS audit_bot ON audit (bot, id);
CREATE TEMP TABLE IF NOT EXISTS doomed (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS messenger_pages (
  page_id TEXT PRIMARY KEY,
  app_secret TEXT NOT NULL,
  verify_token TEXT NOT NULL,
  bot TEXT
);
`

const SELECT_MESSAGE = `SELECT m.*, CASE WHEN m.event_type IS NOT NULL THEN r.raw END AS event_raw
  FROM messages m JOIN records r ON r.id = m.record_id`

interface PendingAdd {
  record: IncomingRecord
  messages: NormalizedMessage[]
  resolve: (result: AddResult) => void
  reject: (error: unknown) => void
}

/**
 * better-sqlite3 12 on Node 24 aborts the process (`Assertion failed: (env) != nullptr` in
 * `RemoveEnvironmentCleanupHook`) when a Database or Statement is garbage-collected after Node
 * has torn its environment down, i.e. while the process or a worker exits (an upstream issue;
 * better-sqlite3 13, which fixes it, does not run on Node 20). The store's databases and
 * statements are few and cached, so they are kept reachable until the process ends: none is
 * finalized in that window.
 */
const keptAlive = new Set<object>()
function kept<T extends object>(value: T): T {
  keptAlive.add(value)
  return value
}

/**
 * Idempotency keys (added after the first release): a column and a unique index per bot, added
 * to older database files when they are opened.
 */
function migrateIdempotency(db: Database.Database): void {
  const columns = kept(db.prepare('PRAGMA table_info(records)')).all() as Array<{ name: string }>
  if (!columns.some((c) => c.name === 'idempotency_key')) db.exec('ALTER TABLE records ADD COLUMN idempotency_key TEXT')
  db.exec(
    'CREATE UNIQUE INDEX IF NOT EXISTS records_idempotency ON records (bot, idempotency_key) WHERE idempotency_key IS NOT NULL',
  )
}

const json = (v: unknown[] | Record<string, unknown> | null): string | null =>
  v === null || (Array.isArray(v) && v.length === 0) ? null : JSON.stringify(v)

/**
 * The default {@link RecordStore}: SQLite through better-sqlite3, a file or `:memory:`. WAL
 * mode for files, so the dashboard's reads don't block ingest.
 *
 * @example const store = new SqliteRecordStore('./convotrack.db')
 */
export class SqliteRecordStore implements RecordStore {
  private readonly db: Database.Database
  private readonly cache = new Map<string, Database.Statement>()
  private readonly insertRecord: Database.Statement
  private readonly insertMessage: Database.Statement
  private readonly findKey: Database.Statement
  private readonly addTx: (record: IncomingRecord, messages: NormalizedMessage[]) => AddResult
  private readonly addBatchTx: (
    batch: ReadonlyArray<{ record: IncomingRecord; messages: NormalizedMessage[] }>,
  ) => AddResult[]
  private pending: PendingAdd[] = []

  /** @param file SQLite file path, or `:memory:`. */
  constructor(file = ':memory:') {
    this.db = kept(new Database(file))
    // exec, not pragma(): pragma() prepares a statement the store could not keep (see `kept`).
    if (file !== ':memory:') this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
    this.db.exec(SCHEMA)
    migrateIdempotency(this.db)
    // A repeated (bot, idempotency key) inserts nothing (changes = 0); its id is then looked up.
    this.insertRecord = kept(
      this.db.prepare(
        `INSERT INTO records (bot, platform, type, v, received_at, raw, idempotency_key)
       VALUES (@bot, @platform, @type, @v, @receivedAt, @raw, @idempotencyKey)
       ON CONFLICT (bot, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
      ),
    )
    this.findKey = kept(this.db.prepare('SELECT id FROM records WHERE bot = ? AND idempotency_key = ?')).pluck()
    this.insertMessage = kept(
      this.db.prepare(`INSERT INTO messages
      (record_id, bot, platform, direction, user_id, conversation_id, thread, session_id, text, intent, confidence,
       buttons, images, user_json, event_type, event_name, amount, ts)
      VALUES (@recordId, @bot, @platform, @direction, @userId, @conversationId, @thread, @sessionId, @text, @intent, @confidence,
       @buttons, @images, @userJson, @eventType, @eventName, @amount, @ts)`),
    )
    const insertOne = (record: IncomingRecord, messages: NormalizedMessage[]): AddResult => {
      const key = record.idempotencyKey ?? null
      const inserted = this.insertRecord.run({
        bot: record.bot,
        platform: record.platform,
        type: record.type,
        v: record.v,
        receivedAt: record.receivedAt,
        raw: record.raw,
        idempotencyKey: key,
      })
      if (inserted.changes === 0)
        return { id: Number(this.findKey.get(record.bot, key)), duplicate: true, messages: [] }
      const id = Number(inserted.lastInsertRowid)
      const stored = messages.map((m): StoredMessage => {
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
            buttons: json(m.buttons),
            images: json(m.images),
            userJson: json(m.userJson),
            eventType: m.event?.type ?? null,
            eventName: m.event?.name ?? null,
            amount: m.event?.amount ?? null,
            ts: record.receivedAt,
          }).lastInsertRowid,
        )
        return { ...m, id: mid, recordId: id, bot: record.bot, ts: record.receivedAt }
      })
      return { id, duplicate: false, messages: stored }
    }
    this.addTx = this.db.transaction(insertOne)
    this.addBatchTx = this.db.transaction(
      (batch: ReadonlyArray<{ record: IncomingRecord; messages: NormalizedMessage[] }>) =>
        batch.map((item) => insertOne(item.record, item.messages)),
    )
  }

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
    const limit = clampLimit(filter.limit, 100)
    const sc = scope(filter, 'm.bot')
    const after = filter.afterId !== undefined ? ' AND m.id > ?' : ''
    const params = [...sc.params, ...(filter.afterId !== undefined ? [filter.afterId] : [])]
    const sql = `SELECT * FROM (${SELECT_MESSAGE} WHERE 1 = 1${sc.and}${after}
      ORDER BY m.id DESC LIMIT ?) ORDER BY id ASC`
    return this.all<MessageRow>(sql, ...params, limit).map(toMessage)
  }

  async conversations(filter: ReadFilter & { limit?: number }): Promise<ConversationSummary[]> {
    const limit = clampLimit(filter.limit, 200)
    const rows = this.all<ConversationRow & { paused: number | null }>(
      `SELECT m.bot, m.thread, coalesce(c.msg_platform, m.platform) AS platform, m.user_id, c.in_user, c.n, m.text, m.ts, p.paused
       FROM (SELECT bot, thread, max(id) AS last_id, count(*) AS n,
               max(CASE WHEN direction = 'incoming' THEN user_id END) AS in_user,
               max(CASE WHEN direction != 'event' THEN platform END) AS msg_platform
             FROM messages WHERE 1 = 1${scope(filter).and} GROUP BY bot, thread) c
       JOIN messages m ON m.id = c.last_id
       LEFT JOIN pauses p ON p.bot = m.bot AND p.thread = m.thread
       ORDER BY m.id DESC LIMIT ?`,
      ...scope(filter).params,
      limit,
    )
    return rows.map((r) => toConversation(r, r.paused === 1))
  }

  async transcript(bot: string, thread: string, options: TranscriptPage = {}): Promise<StoredMessage[]> {
    const limit = clampLimit(options.limit, 500)
    const before = options.beforeId
    // Walks the (bot, thread, id) index backwards from the cursor: a page costs `limit` rows however long the thread.
    const sql = `SELECT * FROM (${SELECT_MESSAGE} WHERE m.bot = ? AND m.thread = ? ${before !== undefined ? 'AND m.id < ?' : ''}
      ORDER BY m.id DESC LIMIT ?) ORDER BY id ASC`
    const params = before !== undefined ? [bot, thread, Math.floor(before), limit] : [bot, thread, limit]
    return this.all<MessageRow>(sql, ...params).map(toMessage)
  }

  /**
   * Inputs the bot did not handle: incoming messages marked NotHandled, and the incoming
   * message each outgoing NotHandled reply answered (the latest incoming message before it in
   * the same bot and thread: the dashbot SDK's `setNotHandled()` marks the reply). Each input
   * counts once, grouped by text (case and surrounding spaces aside).
   */
  async notHandled(filter: ReadFilter): Promise<NotHandledLine[]> {
    const rows = this.all<{ text: string; count: number; users: number; lastTs: number; bots: string }>(
      `WITH nh(id) AS (
         SELECT id FROM messages WHERE intent = 'NotHandled' AND direction = 'incoming' ${scope(filter).and}
         UNION
         SELECT (SELECT max(i.id) FROM messages i
                 WHERE i.bot = o.bot AND i.thread = o.thread AND i.direction = 'incoming' AND i.id < o.id)
         FROM messages o WHERE o.intent = 'NotHandled' AND o.direction = 'outgoing' ${scope(filter, 'o.bot').and}
       )
       SELECT min(coalesce(text, '')) AS text, count(*) AS count, count(DISTINCT user_id) AS users, max(ts) AS lastTs,
              group_concat(DISTINCT bot) AS bots
       FROM messages WHERE id IN (SELECT id FROM nh WHERE id IS NOT NULL)
       GROUP BY lower(trim(coalesce(text, ''))) ORDER BY count DESC, lastTs DESC LIMIT 500`,
      ...scope(filter).params,
      ...scope(filter, 'o.bot').params,
    )
    return rows.map((r) => ({ ...r, bots: r.bots ? r.bots.split(',') : [] }))
  }

  async intents(filter: ReadFilter): Promise<IntentLine[]> {
    return this.all<IntentLine>(
      `SELECT intent, count(*) AS count, sum(direction = 'incoming') AS incoming, sum(direction = 'outgoing') AS outgoing,
              avg(confidence) AS avgConfidence
       FROM messages WHERE intent IS NOT NULL AND direction != 'event' ${scope(filter).and}
       GROUP BY intent ORDER BY count DESC, intent LIMIT 500`,
      ...scope(filter).params,
    )
  }

  async events(filter: ReadFilter): Promise<EventsReport> {
    const { and, params: p } = scope(filter, 'm.bot')
    const byName = (type: string) =>
      this.all<{ name: string; count: number; total: number | null }>(
        `SELECT event_name AS name, count(*) AS count, sum(amount) AS total FROM messages m
         WHERE event_type = '${type}' ${and} GROUP BY event_name ORDER BY count DESC LIMIT 100`,
        ...p,
      )
    const revenue = byName('revenueEvent')
    const shares = byName('shareEvent')
    const pageLaunches = this.all<{ page: string; count: number }>(
      `SELECT coalesce(json_extract(r.raw, '$.extraInfo.url'), m.event_name) AS page, count(*) AS count
       FROM messages m JOIN records r ON r.id = m.record_id
       WHERE m.event_type = 'pageLaunchEvent' ${and} GROUP BY page ORDER BY count DESC LIMIT 100`,
      ...p,
    )
    const referrals = this.all<{ source: string; count: number }>(
      `SELECT coalesce(json_extract(r.raw, '$.source'), '(none)') AS source, count(*) AS count
       FROM messages m JOIN records r ON r.id = m.record_id
       WHERE m.event_type = 'referralEvent' ${and} GROUP BY source ORDER BY count DESC LIMIT 100`,
      ...p,
    )
    return eventsReport({ custom: byName('customEvent'), revenue, shares, pageLaunches, referrals })
  }

  async segments(filter: ReadFilter): Promise<Segment[]> {
    // The latest metadata each user sent: that's who they are now.
    const rows = this.all<{ user_json: string }>(
      `SELECT m.user_json FROM messages m
       JOIN (SELECT bot, user_id, max(id) AS id FROM messages WHERE user_json IS NOT NULL ${scope(filter).and}
             GROUP BY bot, user_id) u ON u.id = m.id`,
      ...scope(filter).params,
    )
    return segmentsOf(rows.map((r) => r.user_json))
  }

  async timeline(filter: ReadFilter & { bucketMs: number; since?: number }): Promise<TimelineBucket[]> {
    const bucket = Math.max(1000, Math.floor(filter.bucketMs))
    return this.all<TimelineBucket>(
      // The bucket is an integer we made: inlined so SQLite does integer division.
      `SELECT (ts / ${bucket}) * ${bucket} AS t, sum(direction = 'incoming') AS incoming, sum(direction = 'outgoing') AS outgoing,
              sum(direction = 'event') AS events
       FROM messages WHERE ts >= ? ${scope(filter).and} GROUP BY t ORDER BY t`,
      filter.since ?? 0,
      ...scope(filter).params,
    )
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

  async counts(filter: ReadFilter = {}): Promise<{ records: number; messages: number }> {
    const r = scope(filter)
    const records = (
      this.stmt(`SELECT count(*) AS n FROM records WHERE 1 = 1${r.and}`).get(...r.params) as { n: number }
    ).n
    const messages = (
      this.stmt(`SELECT count(*) AS n FROM messages WHERE 1 = 1${r.and}`).get(...r.params) as { n: number }
    ).n
    return { records, messages }
  }

  /** Deletes the records listed in the temp table `doomed`, and their messages; returns how many records. */
  private deleteDoomed(): { records: number; messages: number } {
    const messages = this.stmt('DELETE FROM messages WHERE record_id IN (SELECT id FROM doomed)').run().changes
    const records = this.stmt('DELETE FROM records WHERE id IN (SELECT id FROM doomed)').run().changes
    this.stmt('DELETE FROM doomed').run()
    return { records, messages }
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
      const gone = this.deleteDoomed()
      const json = JSON.stringify([userId, ...threads])
      this.stmt('DELETE FROM pauses WHERE bot = ? AND thread IN (SELECT value FROM json_each(?))').run(bot, json)
      this.stmt('UPDATE audit SET detail = NULL WHERE bot = ? AND target IN (SELECT value FROM json_each(?))').run(
        bot,
        json,
      )
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

  async addAudit(entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry> {
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

  async close(): Promise<void> {
    if (this.db.open) this.commitPending()
    if (this.db.open) this.db.close()
  }
}

/** The bot scope of a read as SQL: ` AND col = ? AND col IN (json list)`, with its parameters. */
function scope(filter: ReadFilter, col = 'bot'): { and: string; params: unknown[] } {
  let and = ''
  const params: unknown[] = []
  if (filter.bot !== undefined) {
    and += ` AND ${col} = ?`
    params.push(filter.bot)
  }
  if (filter.bots !== undefined) {
    and += ` AND ${col} IN (SELECT value FROM json_each(?))`
    params.push(JSON.stringify(filter.bots))
  }
  return { and, params }
}
