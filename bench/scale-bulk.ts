/**
 * The scale bench's fast seed, for measuring READS at 10 M records (bench/collector-scale.ts
 * `--seed bulk`): records go through the collector's own validation and preparation (normalising,
 * credentials, event time, fingerprint: `prepare` of ingest) and are written straight into the
 * store's `records` and `messages` tables — the same columns ingest writes — in big multi-row
 * statements, with the secondary indexes dropped during the load and built again after it.
 * Then every summary is derived from the stored rows by the code the migrations run on an
 * existing database (`rebuildRollups`, `rebuildAnalytics`, `rebuildReadSummaries`), so the
 * summaries the reads use are the real ones. Not an ingest rate: ingest is measured through
 * `POST /track/batch` by the bench.
 */
import Database from 'better-sqlite3'
import pg from 'pg'
import { type AcceptedRecord, prepare } from '../packages/collector/src/ingest/ingest'
import {
  DEFAULT_SESSION_GAP_MS,
  rebuildAnalytics,
  rebuildSteps,
} from '../packages/collector/src/reports/analytics-writes'
import { rebuildConversationStarts } from '../packages/collector/src/reports/conversation-starts'
import { type Dialect, postgresDialect, type Query, sqliteDialect } from '../packages/collector/src/reports/dialect'
import { eventTsOf, freshMessage, jsonColumn } from '../packages/collector/src/reports/fresh-message'
import { rebuildHandoffs } from '../packages/collector/src/reports/handoff-summary'
import { rebuildPhraseDays } from '../packages/collector/src/reports/nh-phrase-days'
import { rebuildPaths } from '../packages/collector/src/reports/path-prefixes'
import { rebuildReadSummaries } from '../packages/collector/src/reports/read-summaries'
import type { Row } from '../packages/collector/src/reports/report-queries'
import { DEFAULT_RETENTION_ZONES, rebuildRetention } from '../packages/collector/src/reports/retention-cohorts'
import { rebuildRollups, runSteps, runStepsAsync, type Steps } from '../packages/collector/src/reports/rollup-writes'
import { rebuildUsage } from '../packages/collector/src/reports/usage-rollup'
import { textArray } from '../packages/collector/src/store/postgres/pg-text-array'

/** The analytics' derivations, in the migrations' order (each its own tables). */
function* analyticsSteps(d: Dialect): Steps {
  yield* rebuildAnalytics(d)
  yield* rebuildSteps(d)
  yield* rebuildUsage(d)
  yield* rebuildPaths(d)
  yield* rebuildRetention(d, DEFAULT_RETENTION_ZONES)
}

/** Records per statement. */
const CHUNK = 2_000

type Log = (line: string) => void

/** The message rows of records [from, from + n): ids from `recordId` / `messageId` on. */
function rowsOf(make: (i: number) => AcceptedRecord, from: number, to: number, firstMessageId: number) {
  const now = Date.now()
  const records: Array<ReturnType<typeof prepare> & { id: number }> = []
  const messages: Array<ReturnType<typeof freshMessage> & { m: ReturnType<typeof prepare>['messages'][number] }> = []
  let messageId = firstMessageId
  for (let i = from; i < to; i++) {
    const record = make(i)
    // Received as a collector tracking the bot live would have received it (`sentAt`, the scale
    // records' own time): a record that carries no time of its own (a Messenger answer) is dated
    // in its conversation, not at the load — which piled 750 000 answers into the load's hour at
    // 10 M records, the newest messages of the store.
    const sentAt = (record as { sentAt?: number }).sentAt
    const p = prepare(record, sentAt === undefined ? now : Math.min(now, sentAt))
    const id = i + 1
    records.push({ ...p, id })
    for (const m of p.messages) messages.push({ ...freshMessage(p.record, m, messageId++, id), m })
  }
  return { records, messages, nextMessageId: messageId }
}

/** Logs the load's progress every 200 000 records (and at its end); `rate()`: records per second so far. */
function progress(from: number, to: number, log: Log) {
  const t0 = performance.now()
  let shown = from
  const rate = (end: number) => (end - from) / Math.max(0.001, (performance.now() - t0) / 1000)
  let last = from
  const show = (end: number) => {
    last = end
    if (end - shown < 200_000 && end < to) return
    shown = end
    const r = rate(end)
    log(
      `bulk seed: ${end.toLocaleString('en')} / ${to.toLocaleString('en')} (${Math.round(r)} rec/s, ${Math.round((to - end) / r)} s left)`,
    )
  }
  return Object.assign(show, { rate: () => rate(last) })
}

/** The secondary indexes and foreign keys of the big tables: dropped for the load, made again after it. */
const BIG = ['records', 'messages']

// ------------------------------------------------------------------ PostgreSQL

/** Loads records [from, to) into the PostgreSQL database at `url` (already migrated), then derives every summary. */
export async function bulkSeedPostgres(
  url: string,
  to: number,
  make: (i: number) => AcceptedRecord,
  log: Log,
): Promise<{ rate: number }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`SET maintenance_work_mem = '1GB'`)
    await client.query(
      `CREATE TABLE IF NOT EXISTS bench_bulk_ddl (name text PRIMARY KEY, ddl text NOT NULL, ord int NOT NULL)`,
    )
    const tables = BIG.map((t) => postgresDialect.table(t))
    const [loaded] = (await client.query<{ r: string | null }>('SELECT max(id) AS r FROM convotrack_records')).rows
    // Loaded already (an earlier run stopped while deriving): nothing to drop or write.
    if (Number(loaded?.r ?? 0) >= to) return { rate: 0 }
    // Saved once (a resumed load finds them saved and the objects already gone).
    await client.query(
      `INSERT INTO bench_bulk_ddl (name, ddl, ord)
       SELECT indexname, indexdef, 1 FROM pg_indexes
         WHERE tablename = ANY($1) AND indexname NOT IN (SELECT conname FROM pg_constraint)
       UNION ALL
       SELECT conname, format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname, pg_get_constraintdef(oid)), 2
         FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text = ANY($1)
       ON CONFLICT (name) DO NOTHING`,
      [tables],
    )
    const saved = (
      await client.query<{ name: string; ddl: string; ord: number }>(
        'SELECT * FROM bench_bulk_ddl WHERE ord < 3 ORDER BY ord, name',
      )
    ).rows
    for (const s of saved)
      if (s.ord === 2)
        await client.query(`ALTER TABLE ${postgresDialect.table('messages')} DROP CONSTRAINT IF EXISTS "${s.name}"`)
      else await client.query(`DROP INDEX IF EXISTS "${s.name}"`)
    const [at] = (
      await client.query<{ r: string | null; m: string | null }>(
        'SELECT (SELECT max(id) FROM convotrack_records) AS r, (SELECT max(id) FROM convotrack_messages) AS m',
      )
    ).rows
    const from = Number(at?.r ?? 0)
    let messageId = Number(at?.m ?? 0) + 1
    log(
      `bulk seed: records ${from.toLocaleString('en')} → ${to.toLocaleString('en')} (indexes dropped: ${saved.length})`,
    )
    const show = progress(from, to, log)
    for (let start = from; start < to; start += CHUNK) {
      const end = Math.min(to, start + CHUNK)
      const { records, messages, nextMessageId } = rowsOf(make, start, end, messageId)
      messageId = nextMessageId
      await client.query('BEGIN')
      await client.query(
        `INSERT INTO convotrack_records (id, bot, platform, type, v, received_at, raw, idempotency_key, fingerprint, event_ts)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::bigint[])`,
        [
          records.map((r) => r.id),
          records.map((r) => r.record.bot),
          records.map((r) => r.record.platform),
          records.map((r) => r.record.type),
          records.map((r) => r.record.v),
          records.map((r) => r.record.receivedAt),
          textArray(records.map((r) => r.record.raw)),
          records.map((r) => r.record.idempotencyKey ?? null),
          records.map((r) => r.record.fingerprint ?? null),
          records.map((r) => eventTsOf(r.record)),
        ],
      )
      const col = <T>(f: (x: (typeof messages)[number]) => T) => messages.map(f)
      await client.query(
        `INSERT INTO convotrack_messages (id, record_id, bot, platform, direction, user_id, conversation_id, thread,
           session_id, text, intent, confidence, buttons, images, user_json, event_type, event_name, amount,
           event_key, nh, ts, received_at)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
           $8::text[], $9::text[], $10::text[], $11::text[], $12::float8[], $13::text[], $14::text[], $15::text[],
           $16::text[], $17::text[], $18::float8[], $19::text[], $20::smallint[], $21::bigint[], $22::bigint[])`,
        [
          col((x) => x.stored.id),
          col((x) => x.stored.recordId),
          col((x) => x.stored.bot),
          col((x) => x.m.platform),
          col((x) => x.m.direction),
          textArray(col((x) => x.rollup.userId)),
          textArray(col((x) => x.m.conversationId)),
          textArray(col((x) => x.rollup.thread)),
          textArray(col((x) => x.m.sessionId)),
          textArray(col((x) => x.rollup.text)),
          textArray(col((x) => x.rollup.intent)),
          col((x) => x.m.confidence),
          textArray(col((x) => jsonColumn(x.m.buttons))),
          textArray(col((x) => jsonColumn(x.m.images))),
          textArray(col((x) => x.rollup.userJson)),
          textArray(col((x) => x.m.event?.type ?? null)),
          textArray(col((x) => x.m.event?.name ?? null)),
          col((x) => x.m.event?.amount ?? null),
          textArray(col((x) => x.rollup.eventKey)),
          col((x) => (x.rollup.nh ? 1 : 0)),
          col((x) => x.stored.ts),
          col((x) => x.stored.receivedAt),
        ],
      )
      await client.query('COMMIT')
      show(end)
    }
    const rate = show.rate()
    // Ingest takes its ids from the identity sequences: past the ids written here.
    for (const t of tables)
      await client.query(
        `SELECT setval(pg_get_serial_sequence('${t}', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM ${t}), false)`,
      )
    const t1 = performance.now()
    for (const s of saved) {
      log(`bulk seed: ${s.ord === 2 ? 'constraint' : 'index'} ${s.name}`)
      await client.query(s.ddl.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '))
      await client.query('DELETE FROM bench_bulk_ddl WHERE name = $1', [s.name])
    }
    await client.query(`ANALYZE ${tables.join(', ')}`)
    // The summaries are derived next (deriveIfPending), also after an interrupted run.
    await client.query(
      `INSERT INTO bench_bulk_ddl (name, ddl, ord) VALUES ('derive', 'pending', 3) ON CONFLICT DO NOTHING`,
    )
    log(`bulk seed: indexes made again in ${Math.round((performance.now() - t1) / 1000)} s`)
    return { rate }
  } finally {
    await client.end()
  }
}

/** Derives the summaries when a bulk seed left them to do; returns the seconds it took (0: nothing to do). */
export async function deriveIfPending(url: string, log: Log, options: { analytics?: boolean } = {}): Promise<number> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const exists = await c.query(`SELECT 1 FROM pg_tables WHERE tablename = 'bench_bulk_ddl'`)
    if (exists.rowCount === 0) return 0
    const pending = await c.query(`SELECT 1 FROM bench_bulk_ddl WHERE name = 'derive'`)
    if (pending.rowCount === 0) return 0
    const t0 = performance.now()
    await derivePostgres(url, log, options.analytics !== false)
    await c.query(`DELETE FROM bench_bulk_ddl WHERE name = 'derive'`)
    return (performance.now() - t0) / 1000
  } finally {
    await c.end()
  }
}

/** The migrations' derivations, each on its own connection (they write different tables), in parallel. */
async function derivePostgres(url: string, log: Log, analytics: boolean): Promise<void> {
  const derive = async (name: string, steps: Steps) => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    const t0 = performance.now()
    try {
      // Statement by statement, not in one transaction: the analytics' rebuild takes a lock per
      // user, and half a million of them overflow the lock table (max_locks_per_transaction).
      await runStepsAsync(steps, async (q: Query) => (await c.query<Row>(postgresDialect.sql(q.sql), q.params)).rows)
      log(`derived ${name} in ${Math.round((performance.now() - t0) / 1000)} s`)
    } finally {
      await c.end()
    }
  }
  await Promise.all([
    // The read summaries are derived from the rollups' NotHandled rows: after them.
    derive('rollups', rebuildRollups(postgresDialect))
      .then(() => derive('read summaries', rebuildReadSummaries(postgresDialect)))
      .then(() => derive('conversation starts', rebuildConversationStarts(postgresDialect)))
      .then(() => derive('NotHandled phrase days', rebuildPhraseDays(postgresDialect))),
    analytics ? derive('analytics + funnel steps', analyticsSteps(postgresDialect)) : undefined,
  ])
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query('ANALYZE').finally(() => c.end())
}

// ------------------------------------------------------------------ operators

/**
 * The operators' part of the load: in one session of 20 (by its start second), an operator pauses
 * the bot a minute after the session starts, writes a minute later and resumes it ten minutes
 * after — three audit entries, two of them handoff actions — then the handoff summary derived
 * from them (the migration's `rebuildHandoffs`). 275 000 sessions handed off at 10 M records
 * (825 000 entries): the overview's handoffs are counted over them.
 */
function* seedHandoffs(d: Dialect): Steps {
  const actions = `SELECT 'pause' AS action, ${60_000} AS after UNION ALL SELECT 'operator-message', ${120_000}
    UNION ALL SELECT 'resume', ${600_000}`
  yield {
    sql: `INSERT INTO ${d.table('audit')} (ts, actor, action, bot, target, detail)
      SELECT s.start_ts + a.after, 'bench-operator', a.action, s.bot, c.thread, NULL
      FROM ${d.table('sessions')} s JOIN ${d.table('conversation_summaries')} c ON c.bot = s.bot AND c.in_user = s.user_id
        CROSS JOIN (${actions}) a
      WHERE (s.start_ts / 1000) % 20 = 0`,
    params: [],
  }
  yield* rebuildHandoffs(d, DEFAULT_SESSION_GAP_MS)
}

/**
 * Gives a store loaded without operators (every store before them) its operators' actions: once,
 * when its audit log is empty. Returns the seconds it took (0: it had them).
 */
export async function ensureHandoffs(db: string, log: Log): Promise<number> {
  const t0 = performance.now()
  if (db.startsWith('postgres')) {
    const c = new pg.Client({ connectionString: db })
    await c.connect()
    try {
      if ((await c.query('SELECT 1 FROM convotrack_audit LIMIT 1')).rowCount !== 0) return 0
      await c.query('BEGIN')
      await runStepsAsync(seedHandoffs(postgresDialect), async (q: Query) => {
        return (await c.query<Row>(postgresDialect.sql(q.sql), q.params)).rows
      })
      await c.query('COMMIT')
      await c.query(
        'ANALYZE convotrack_audit, convotrack_sessions, convotrack_handoff_marks, convotrack_rollup_handoffs',
      )
    } finally {
      await c.end()
    }
  } else {
    const file = new Database(db)
    try {
      if (file.prepare('SELECT 1 FROM audit LIMIT 1').get() !== undefined) return 0
      const run = (q: Query) => {
        const st = file.prepare(sqliteDialect.sql(q.sql))
        if (st.reader) return st.all(...(q.params as unknown[])) as Row[]
        st.run(...(q.params as unknown[]))
        return []
      }
      file.transaction(() => runSteps(seedHandoffs(sqliteDialect), run))()
    } finally {
      file.close()
    }
  }
  const seconds = (performance.now() - t0) / 1000
  log(`operators' actions added and their handoffs derived in ${seconds.toFixed(1)} s`)
  return seconds
}

// ------------------------------------------------------------------ SQLite

/** Loads records [stored, to) into the SQLite file (already migrated), then derives every summary. */
export function bulkSeedSqlite(
  file: string,
  to: number,
  make: (i: number) => AcceptedRecord,
  log: Log,
): { rate: number; deriveSeconds: number } {
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = OFF')
    db.exec('CREATE TABLE IF NOT EXISTS bench_bulk_ddl (name TEXT PRIMARY KEY, ddl TEXT NOT NULL)')
    db.prepare(
      `INSERT OR IGNORE INTO bench_bulk_ddl SELECT name, sql FROM sqlite_master
       WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${BIG.map(() => '?').join(', ')})`,
    ).run(...BIG)
    const saved = db.prepare('SELECT name, ddl FROM bench_bulk_ddl ORDER BY name').all() as Array<{
      name: string
      ddl: string
    }>
    for (const s of saved) db.exec(`DROP INDEX IF EXISTS "${s.name}"`)
    const from = Number(db.prepare('SELECT coalesce(max(id), 0) FROM records').pluck().get())
    let messageId = Number(db.prepare('SELECT coalesce(max(id), 0) FROM messages').pluck().get()) + 1
    log(
      `bulk seed: records ${from.toLocaleString('en')} → ${to.toLocaleString('en')} (indexes dropped: ${saved.length})`,
    )
    const insertRecord = db.prepare(
      `INSERT INTO records (id, bot, platform, type, v, received_at, event_ts, raw, idempotency_key, fingerprint)
       VALUES (@id, @bot, @platform, @type, @v, @receivedAt, @eventTs, @raw, @idempotencyKey, @fingerprint)`,
    )
    const insertMessage = db.prepare(`INSERT INTO messages
      (id, record_id, bot, platform, direction, user_id, conversation_id, thread, session_id, text, intent, confidence,
       buttons, images, user_json, event_type, event_name, amount, ts, received_at, nh, event_key)
      VALUES (@id, @recordId, @bot, @platform, @direction, @userId, @conversationId, @thread, @sessionId, @text, @intent, @confidence,
       @buttons, @images, @userJson, @eventType, @eventName, @amount, @ts, @receivedAt, @nh, @eventKey)`)
    const show = progress(from, to, log)
    for (let start = from; start < to; start += CHUNK) {
      const end = Math.min(to, start + CHUNK)
      const { records, messages, nextMessageId } = rowsOf(make, start, end, messageId)
      messageId = nextMessageId
      db.transaction(() => {
        for (const r of records)
          insertRecord.run({
            id: r.id,
            bot: r.record.bot,
            platform: r.record.platform,
            type: r.record.type,
            v: r.record.v,
            receivedAt: r.record.receivedAt,
            eventTs: eventTsOf(r.record),
            raw: r.record.raw,
            idempotencyKey: r.record.idempotencyKey ?? null,
            fingerprint: r.record.fingerprint ?? null,
          })
        for (const x of messages)
          insertMessage.run({
            id: x.stored.id,
            recordId: x.stored.recordId,
            bot: x.stored.bot,
            platform: x.m.platform,
            direction: x.m.direction,
            userId: x.rollup.userId,
            conversationId: x.m.conversationId,
            thread: x.rollup.thread,
            sessionId: x.m.sessionId,
            text: x.rollup.text,
            intent: x.rollup.intent,
            confidence: x.m.confidence,
            buttons: jsonColumn(x.m.buttons),
            images: jsonColumn(x.m.images),
            userJson: x.rollup.userJson,
            eventType: x.m.event?.type ?? null,
            eventName: x.m.event?.name ?? null,
            amount: x.m.event?.amount ?? null,
            ts: x.stored.ts,
            receivedAt: x.stored.receivedAt,
            nh: x.rollup.nh ? 1 : 0,
            eventKey: x.rollup.eventKey,
          })
      })()
      show(end)
    }
    const rate = show.rate()
    for (const s of saved) {
      db.exec(s.ddl.replace(/^CREATE (UNIQUE )?INDEX /i, 'CREATE $1INDEX IF NOT EXISTS '))
      db.prepare('DELETE FROM bench_bulk_ddl WHERE name = ?').run(s.name)
    }
    log('bulk seed: indexes made again; deriving the summaries')
    const t1 = performance.now()
    deriveSqlite(db, log)
    db.exec('ANALYZE')
    return { rate, deriveSeconds: (performance.now() - t1) / 1000 }
  } finally {
    db.close()
  }
}

function deriveSqlite(db: Database.Database, log: Log): void {
  const run = (d: Dialect) => (q: Query) => {
    const s = db.prepare(d.sql(q.sql))
    if (s.reader) return s.all(...(q.params as unknown[])) as Row[]
    s.run(...(q.params as unknown[]))
    return []
  }
  for (const [name, steps] of [
    ['rollups', rebuildRollups(sqliteDialect)],
    ['conversation starts', rebuildConversationStarts(sqliteDialect)],
    ['analytics + funnel steps', analyticsSteps(sqliteDialect)],
    ['read summaries', rebuildReadSummaries(sqliteDialect)],
    ['NotHandled phrase days', rebuildPhraseDays(sqliteDialect)],
  ] as const) {
    const t0 = performance.now()
    db.transaction(() => runSteps(steps, run(sqliteDialect)))()
    log(`derived ${name} in ${Math.round((performance.now() - t0) / 1000)} s`)
  }
}
