import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { NormalizedMessage } from '../../ingest/normalize'
import { type AnalyticsReads, analyticsReads } from '../../reports/analytics-reads'
import type { FunnelLine, FunnelStep } from '../../reports/analytics-types'
import { lockUsers } from '../../reports/analytics-writes'
import { postgresDialect as d, type Query } from '../../reports/dialect'
import { eventTsOf, freshMessage, jsonColumn } from '../../reports/fresh-message'
import { warmFunnelPacks } from '../../reports/funnel-packs'
import { packedFunnel, packSteps, stepsToPack } from '../../reports/funnel-packs-pg'
import { eraseHandoffMarks, markHandoff } from '../../reports/handoff-summary'
import { recentQuery, selectMessages, transcriptQuery } from '../../reports/message-queries'
import type { Row } from '../../reports/report-queries'
import { reportReads } from '../../reports/report-reads'
import { retentionZones } from '../../reports/retention-cohorts'
import type { RollupMessage } from '../../reports/rollup-delta'
import { ROLLUP_COLUMNS, rollupMessage, runStepsAsync } from '../../reports/rollup-writes'
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
  StoreChange,
  StoredMessage,
  StoredRecord,
  StoreOptions,
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
import { StoreUnavailableError } from '../store-unavailable'
import { handoffChangeOf, PgHandoffs } from './pg-handoffs'
import { syncRetentionZones } from './pg-history-summaries'
import { migrate } from './pg-migrations'
import { textArray } from './pg-text-array'

/** Options of {@link PgRecordStore.open}. */
export interface PgStoreOptions extends StoreOptions {
  /** Most connections the pool opens. Default 10. */
  maxConnections?: number
  /**
   * How long a call waits for a pooled connection (or for a new one to be set up) before the
   * store reports itself unavailable (503). Default 5 000 ms.
   */
  connectionTimeoutMs?: number
  /**
   * How long one statement may take before the store gives up on it and reports itself
   * unavailable (503 + `Retry-After`): a server that hangs instead of going away (frozen, network
   * black hole) holds no request longer than this. Enforced on both sides: the client discards a
   * connection whose statement timed out, and the server's `statement_timeout` cancels it. With the
   * connection wait, a request waits at most `connectionTimeoutMs + queryTimeoutMs` (8 s by
   * default, below the tracker's 10 s request deadline). Migrations at start are not bounded.
   * Default 3 000 ms.
   *
   * @example await PgRecordStore.open(url, { queryTimeoutMs: 10_000 })
   */
  queryTimeoutMs?: number
  /**
   * How often the `LISTEN` session (the live feed across instances) checks that the server still
   * answers (`SELECT 1`, bounded by `queryTimeoutMs`); a hung session is dropped and reconnected,
   * then catches up. Default 5 000 ms.
   */
  listenHeartbeatMs?: number
  /**
   * Listen for what other collector processes store (`LISTEN/NOTIFY`), for {@link PgRecordStore.subscribe}.
   * Default true.
   */
  listen?: boolean
}

/** Is `url` a PostgreSQL connection string (`postgres://` or `postgresql://`)? */
export function isPostgresUrl(url: string | undefined): url is string {
  return typeof url === 'string' && /^postgres(ql)?:\/\//i.test(url)
}

/** The URL with its password masked, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres://…'
  }
}

const CHANNEL = 'convotrack_changes'
const ignore = (): void => {}

/**
 * The pool's settings. Each new connection turns JIT compilation off before the pool hands it
 * out (pg-pool's `onConnect`, awaited; not in `@types/pg` yet): the collector's reads are short,
 * and a plan the server estimates as costly (a funnel over many users) spent ~2 s compiling
 * before it ran (PostgreSQL's default `jit_above_cost`). A server that refuses the setting (before
 * PostgreSQL 11) keeps its connection as it is.
 */
function poolConfig(config: pg.ClientConfig, max: number): pg.PoolConfig {
  const settings: pg.PoolConfig & { onConnect: (client: pg.PoolClient) => Promise<void> } = {
    ...config,
    max,
    idleTimeoutMillis: 30_000,
    onConnect: (client) => client.query('SET jit = off').then(ignore, ignore),
  }
  return settings
}
/** Message ids per notification: the payload stays far below PostgreSQL's 8 000-byte limit. */
const IDS_PER_NOTIFY = 400
/** SQLSTATEs and socket errors that mean "the database is not there right now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up / shutting down)
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57014', // query_canceled: statement_timeout (the server is too slow to answer in time)
])
const RETRYABLE_TX = new Set(['40001', '40P01']) // serialization failure, deadlock
/** A commit may land this long after its records' arrival time: the catch-up window reaches back so far. */
const CATCH_UP_SLACK_MS = 30_000
/** Other instances' retention steps heard within this time reach the feed as one `expire` per bot. */
const EXPIRE_GATHER_MS = 250
/** `application_name` of the LISTEN session (the pool's sessions are `convotrack-collector`). */
const LISTEN_APPLICATION_NAME = 'convotrack-collector-listen'
const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000
const DEFAULT_QUERY_TIMEOUT_MS = 3_000
const DEFAULT_LISTEN_HEARTBEAT_MS = 5_000
/** Statement bound of an erasure (an operator's action over a user's whole history), at least `queryTimeoutMs`. */
const ERASE_STATEMENT_MS = 60_000
/** pg's error when `query_timeout` elapses: the server did not answer a statement in time. */
const QUERY_TIMEOUT = /Query read timeout/i

function positiveMs(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number of milliseconds (got ${String(value)})`)
  return Math.ceil(value)
}

function isConnectionFault(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined
  if (!err) return false
  if (typeof err.code === 'string' && UNAVAILABLE_CODES.has(err.code)) return true
  const msg = typeof err.message === 'string' ? err.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|not queryable|Query read timeout/i.test(
    msg,
  )
}

/** int8 (count, bigint ids) and numeric (sum of integers) come back as numbers, like SQLite's. */
const numberTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 || oid === 1700
      ? (v: string) => Number(v)
      : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)) as typeof pg.types.getTypeParser,
}

const SELECT_MESSAGE = selectMessages(d)

/** How often the funnel steps are packed (funnel-packs-pg.ts). */
const REPACK_EVERY_MS = 3_600_000
/**
 * When the funnel steps are first packed after the store opens: after its start (migrations, the
 * first requests), not during it.
 */
const PACK_AHEAD_AFTER_MS = 5 * 60_000

/** PostgreSQL text cannot hold U+0000 (JSON allows "\u0000"): normalized columns get U+FFFD; `raw` keeps the escape. */
const text = (v: string | null): string | null =>
  v === null ? null : v.includes('\0') ? v.replaceAll('\0', '\uFFFD') : v

type Item = { record: IncomingRecord; messages: NormalizedMessage[] }

/** What a transaction's body runs statements on. */
interface Sql {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

interface PendingAdd extends Item {
  resolve: (result: AddResult) => void
  reject: (error: unknown) => void
}

/**
 * A {@link RecordStore} on PostgreSQL (node-postgres pool), for several collector processes
 * behind one database: idempotency keys are unique per bot across instances, and what one
 * instance stores reaches the others' live feeds through `LISTEN/NOTIFY`. While the database is
 * unreachable every method rejects with {@link StoreUnavailableError} (the collector answers 503
 * with `Retry-After`); the pool and the listener reconnect on their own.
 *
 * @example const store = await PgRecordStore.open('postgres://convotrack@127.0.0.1/convotrack')
 */
export class PgRecordStore extends StoreReads implements RecordStore {
  /** This process's id in notifications: its own changes are not echoed back to it. */
  private readonly origin = randomBytes(6).toString('hex')
  private readonly listeners = new Set<(change: StoreChange) => void>()
  private pending: PendingAdd[] = []
  private flushScheduled = false
  private closed = false
  /**
   * Server process ids of the reads running off the request path (a funnel's or overview's count,
   * bounded by up to a minute): {@link PgRecordStore.close} cancels them instead of waiting.
   */
  private readonly offPathReads = new Set<number>()
  private listener: pg.Client | undefined
  private reconnectTimer: NodeJS.Timeout | undefined
  private catchUpTimer: NodeJS.Timeout | undefined
  private expireTimer: NodeJS.Timeout | undefined
  /** Per bot, the latest retention cutoff announced to this instance's dashboards. */
  private readonly expiredUpTo = new Map<string, number>()
  /** Bots whose records other instances' retention deleted, latest cut-off each, not yet emitted. */
  private readonly expiring = new Map<string, number>()
  /** Recently delivered message ids (stored here or notified): a catch-up after a reconnect skips them. */
  private readonly delivered = new Set<number>()
  /** When the LISTEN session was lost (epoch ms), until a catch-up covered it. */
  private lostAt: number | undefined
  private listening: Promise<void> | undefined

  private heartbeatTimer: NodeJS.Timeout | undefined
  /** The handoff desk's tables (pg-handoffs.ts). */
  private readonly desk = new PgHandoffs({
    query: (sql, params) => this.query(sql, params),
    transaction: (fn) => this.transaction(fn),
    notify: (sql, payload) => this.notify(sql, payload),
  })

  private constructor(
    private readonly pool: pg.Pool,
    private readonly config: pg.ClientConfig,
    private readonly heartbeatMs: number,
    private readonly queryTimeoutMs: number,
    private readonly gapMs: number,
    private readonly zones: readonly string[],
    options: StoreOptions = {},
  ) {
    super()
    this.zonePreparer = zonePreparer(
      d,
      options,
      zones,
      (steps) => this.transaction((sql) => runSteps(sql, steps())),
      (steps) => runStepsAsync(steps, (q) => this.query<Row>(d.sql(q.sql), q.params)),
    )
    const reads = analyticsReads(
      d,
      (q: Query): Promise<Row[]> => this.query<Row>(d.sql(q.sql), q.params),
      zones,
      // A read off the request path: its own statement bound (a transaction's SET LOCAL), at least
      // queryTimeoutMs; cancelled by close() (nobody waits for its answer then).
      (ms) =>
        (q: Query): Promise<Row[]> =>
          this.transaction(
            async (sql) => (await sql.query<Row>(d.sql(q.sql), q.params)).rows,
            Math.max(ms, this.queryTimeoutMs),
            this.offPathReads,
          ),
    )
    this.analytics = { ...reads, funnel: (filter) => this.countFunnel(filter, reads.funnel) }
  }

  /** Funnels being packed in the background, and steps asked for meanwhile. */
  private packing: Promise<void> | undefined
  private packTimer: NodeJS.Timeout | undefined
  private readonly packWanted = new Map<string, FunnelStep>()

  /**
   * A funnel from its steps' packs and the last days' rows (funnel-packs-pg.ts); counted by the
   * statement instead while more days are not packed (the packer is started for them).
   */
  private async countFunnel(
    filter: ReadFilter & { steps: readonly FunnelStep[]; budgetMs?: number },
    counted: (filter: ReadFilter & { steps: readonly FunnelStep[]; budgetMs?: number }) => Promise<FunnelLine[]>,
  ): Promise<FunnelLine[]> {
    const found = await this.transaction(
      (sql) => runSteps(sql, packedFunnel(d, filter)),
      Math.max(filter.budgetMs ?? 0, this.queryTimeoutMs),
      this.offPathReads,
    )
    if (found.unpacked > 0) void this.packFunnels(filter.steps).catch(() => {})
    return found.lines ?? counted(filter)
  }

  /**
   * Packs every funnel step (the collector's job, 5 minutes after the store opens and every hour
   * after): the days of every step with rows (up to 200: `MAX_AHEAD_STEPS` in funnel-packs-pg.ts) and of every step
   * packed before that became old enough, or changed since their pack (a record dated in the past,
   * an erasure, the retention sweep) — so a funnel over any steps is counted from packs from its
   * first count.
   */
  async repackFunnels(): Promise<void> {
    const steps = await runStepsAsync(stepsToPack(d), (q) => this.query<Row>(d.sql(q.sql), q.params))
    if (steps.length > 0) await this.packFunnels(steps)
  }

  /**
   * Packs the past days of these funnel steps that have no current pack (what a funnel's count
   * starts in the background when it finds some); resolves when they and any steps asked for
   * meanwhile are packed. Exposed for tests and the scale bench; a collector calls it itself.
   */
  async packFunnels(steps: readonly FunnelStep[]): Promise<void> {
    for (const s of steps) this.packWanted.set(`${s.kind}:${s.name}`, s)
    while (this.packing) await this.packing
    if (this.closed || this.packWanted.size === 0) return
    this.packing = (async () => {
      // A transaction per step: none held open while every step is packed.
      for (const [key, step] of this.packWanted) {
        if (this.closed) break
        this.packWanted.delete(key)
        await this.transaction((sql) => runSteps(sql, packSteps(d, [step])), undefined, this.offPathReads)
      }
    })()
      .catch((e) => {
        if (!this.closed) console.error('[convotrack-collector] packing funnel steps failed', e)
        throw e
      })
      .finally(() => {
        this.packing = undefined
      })
    await this.packing
  }

  /**
   * Connects, applies pending migrations (versioned, idempotent, one instance at a time), and
   * starts listening for other instances' changes.
   */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgRecordStore> {
    const queryTimeout = positiveMs(options.queryTimeoutMs, 'queryTimeoutMs', DEFAULT_QUERY_TIMEOUT_MS)
    const base: pg.ClientConfig = {
      connectionString: url,
      application_name: 'convotrack-collector',
      connectionTimeoutMillis: positiveMs(
        options.connectionTimeoutMs,
        'connectionTimeoutMs',
        DEFAULT_CONNECTION_TIMEOUT_MS,
      ),
      keepAlive: true,
      types: numberTypes,
    }
    // Every statement is bounded on both sides: the server cancels it (statement_timeout, a slow
    // query) and the client stops waiting (query_timeout, a server that does not answer at all).
    const config: pg.ClientConfig = { ...base, statement_timeout: queryTimeout, query_timeout: queryTimeout }
    const heartbeat = positiveMs(options.listenHeartbeatMs, 'listenHeartbeatMs', DEFAULT_LISTEN_HEARTBEAT_MS)
    const pool = new pg.Pool(poolConfig(config, options.maxConnections ?? 10))
    // An idle client whose server went away emits here; the pool drops it. Without a listener it would crash the process.
    pool.on('error', ignore)
    const zones = retentionZones(options.retentionZones)
    const store = new PgRecordStore(pool, config, heartbeat, queryTimeout, sessionGapMs(options), zones, options)
    try {
      // Migrations (and waiting for another instance's) may take long on a big table: their own
      // session, without the statement bounds.
      const client = new pg.Client(base)
      client.on('error', ignore)
      try {
        await client.connect()
        await migrate(client)
        await syncRetentionZones(client, zones)
      } finally {
        await client.end().catch(() => {})
      }
      // Awaited: one short read, done before the store's first use (no second connection at open).
      await store.zonePreparer.resume()
      if (options.listen !== false) await store.startListening()
      warmFunnelPacks()
      // The funnel steps packed 5 minutes after the start, then every hour (repackFunnels).
      const repack = () => void store.repackFunnels().catch(() => {})
      store.packTimer = setTimeout(() => {
        repack()
        if (store.closed) return
        store.packTimer = setInterval(repack, REPACK_EVERY_MS)
        store.packTimer.unref()
      }, PACK_AHEAD_AFTER_MS)
      store.packTimer.unref()
    } catch (e) {
      await pool.end().catch(() => {})
      throw isConnectionFault(e) ? new StoreUnavailableError(`PostgreSQL unreachable: ${(e as Error).message}`, e) : e
    }
    return store
  }

  // ------------------------------------------------------------------ plumbing

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params)).rows
    } catch (e) {
      throw this.mapError(e)
    }
  }

  private mapError(e: unknown): unknown {
    if (e instanceof StoreUnavailableError) return e
    if (this.closed) return new StoreUnavailableError('the store is closed', e)
    const message = (e as Error | undefined)?.message ?? ''
    if (QUERY_TIMEOUT.test(message) || (e as { code?: string } | undefined)?.code === '57014')
      return new StoreUnavailableError(`PostgreSQL does not answer in time (queryTimeoutMs): ${message}`, e)
    return isConnectionFault(e) ? new StoreUnavailableError(`PostgreSQL unreachable: ${message}`, e) : e
  }

  /**
   * Runs `fn` in a transaction; deadlocks and serialization failures are retried (bounded).
   * `statementMs` replaces `queryTimeoutMs` for this transaction's statements (both sides).
   * `running`: the set its server process id is in while it runs (reads close() cancels).
   */
  private async transaction<T>(fn: (sql: Sql) => Promise<T>, statementMs?: number, running?: Set<number>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient
      try {
        client = await this.pool.connect()
      } catch (e) {
        throw this.mapError(e)
      }
      // A checked-out client has no error listener of the pool's: the server going away between
      // two statements would otherwise be an unhandled 'error' event (a crash). The statement
      // in flight rejects, which is what we act on.
      client.on('error', ignore)
      let broken = false
      let pid: number | undefined
      try {
        await client.query('BEGIN')
        if (running) {
          pid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid)
          if (this.closed) throw new StoreUnavailableError('the store is closed')
          running.add(pid)
        }
        let sql: Sql = client
        if (statementMs !== undefined) {
          const c = client
          await c.query(`SET LOCAL statement_timeout = ${Math.ceil(statementMs)}`)
          sql = {
            query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
              c.query<R>({ text, values, query_timeout: statementMs } as pg.QueryConfig),
          }
        }
        const result = await fn(sql)
        await client.query('COMMIT')
        return result
      } catch (e) {
        broken = isConnectionFault(e)
        if (!broken) await client.query('ROLLBACK').catch(() => {})
        if (pid !== undefined && this.closed)
          throw new StoreUnavailableError('the store was closed while this read ran', e)
        const code = (e as { code?: string }).code
        if (!broken && code && RETRYABLE_TX.has(code) && attempt < 5) continue
        throw this.mapError(e)
      } finally {
        if (pid !== undefined) running?.delete(pid)
        client.off('error', ignore)
        client.release(broken)
      }
    }
  }

  /** A transaction of an operator's action (erasure): its statements get ERASE_STATEMENT_MS. */
  private operatorTransaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.transaction(fn, Math.max(this.queryTimeoutMs, ERASE_STATEMENT_MS))
  }

  private async notify(client: Sql, payload: Record<string, unknown>): Promise<void> {
    if (this.closed) return
    await client.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ o: this.origin, ...payload })])
  }

  // ------------------------------------------------------------------ writes

  /**
   * Group commit: records arriving together (concurrent requests) share one transaction. A
   * failing group is retried record by record, so one bad record fails only itself.
   */
  async add(record: IncomingRecord, messages: NormalizedMessage[]): Promise<AddResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ record, messages, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flushPending())
      }
    })
  }

  private flushPending(): void {
    this.flushScheduled = false
    const batch = this.pending.splice(0, 1000)
    if (this.pending.length > 0) {
      this.flushScheduled = true
      setImmediate(() => this.flushPending())
    }
    if (batch.length === 0) return
    this.addMany(batch).then(
      (results) => {
        for (const [i, item] of batch.entries()) item.resolve(results[i] as AddResult)
      },
      async (error) => {
        if (error instanceof StoreUnavailableError || batch.length === 1) {
          for (const item of batch) item.reject(error)
          return
        }
        for (const item of batch) await this.addMany([item]).then((r) => item.resolve(r[0] as AddResult), item.reject)
      },
    )
  }

  async addMany(items: ReadonlyArray<Item>): Promise<AddResult[]> {
    if (items.length === 0) return []
    const results = await this.transaction(async (client) => {
      // Ids for every record and message up front, one round trip (a duplicate's ids stay unused).
      const [recordIds, allMessageIds] = await nextIds(
        client,
        items.length,
        items.reduce((n, i) => n + i.messages.length, 0),
      )
      let cursor = 0
      const messageIdsOf = items.map((i) => {
        const from = cursor
        cursor += i.messages.length
        return allMessageIds.slice(from, cursor)
      })
      // A key whose record was erased stays taken (its tombstone): such a record is not inserted.
      const inserted = new Set(
        (
          await client.query<{ id: number }>(
            `INSERT INTO convotrack_records (id, bot, platform, type, v, received_at, raw, idempotency_key, fingerprint, event_ts)
             SELECT n.id, n.bot, n.platform, n.type, n.v, n.received_at, convert_from(n.raw, 'UTF8'), n.idempotency_key, n.fingerprint, n.event_ts
             FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bytea[], $8::text[], $9::text[], $10::bigint[])
               AS n (id, bot, platform, type, v, received_at, raw, idempotency_key, fingerprint, event_ts)
             WHERE n.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM convotrack_idempotency_tombstones t
               WHERE t.bot = n.bot AND t.idempotency_key = n.idempotency_key)
             ON CONFLICT (bot, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
             RETURNING id`,
            [
              recordIds,
              items.map((i) => i.record.bot),
              items.map((i) => i.record.platform),
              items.map((i) => i.record.type),
              items.map((i) => i.record.v),
              items.map((i) => i.record.receivedAt),
              // As UTF-8 bytes (node-pg writes them as hex, natively): the raw text is the largest
              // value, and the one most likely to be made of escapes (see textArray).
              items.map((i) => Buffer.from(i.record.raw, 'utf8')),
              items.map((i) => i.record.idempotencyKey ?? null),
              items.map((i) => i.record.fingerprint ?? null),
              items.map((i) => eventTsOf(i.record)),
            ],
          )
        ).rows.map((r) => r.id),
      )
      // Records not inserted were already stored (or erased) under their (bot, idempotency key):
      // find their ids and fingerprints.
      const existing = new Map<string, { id: number; fingerprint: string | null }>()
      const dupes = items.filter((_, i) => !inserted.has(recordIds[i] as number))
      if (dupes.length > 0) {
        const rows = await client.query<{ id: number; bot: string; key: string; fingerprint: string | null }>(
          `SELECT r.id, r.bot, r.idempotency_key AS key, r.fingerprint FROM convotrack_records r
           JOIN unnest($1::text[], $2::text[]) AS k (bot, key) ON r.bot = k.bot AND r.idempotency_key = k.key
           UNION ALL
           SELECT t.record_id, t.bot, t.idempotency_key, t.fingerprint FROM convotrack_idempotency_tombstones t
           JOIN unnest($1::text[], $2::text[]) AS k (bot, key) ON t.bot = k.bot AND t.idempotency_key = k.key`,
          [dupes.map((d) => d.record.bot), dupes.map((d) => d.record.idempotencyKey ?? '')],
        )
        for (const r of rows.rows) existing.set(`${r.bot}\n${r.key}`, { id: r.id, fingerprint: r.fingerprint })
      }
      const fresh = items.flatMap((item, i) =>
        inserted.has(recordIds[i] as number)
          ? item.messages.map((m, j) => {
              const made = freshMessage(item.record, m, messageIdsOf[i]?.[j] as number, recordIds[i] as number)
              return { item, m, ...made, rollup: pgSafe(made.rollup) }
            })
          : [],
      )
      if (fresh.length > 0) {
        const col = <T>(f: (x: (typeof fresh)[number]) => T) => fresh.map(f)
        const ids = col((x) => x.stored.id)
        // Other instances hear of the new messages when (and only if) this transaction commits.
        const payloads: string[] = []
        for (let i = 0; i < ids.length; i += IDS_PER_NOTIFY)
          payloads.push(JSON.stringify({ o: this.origin, k: 'm', ids: ids.slice(i, i + IDS_PER_NOTIFY) }))
        await client.query(
          `WITH ins AS (
             INSERT INTO convotrack_messages (id, record_id, bot, platform, direction, user_id, conversation_id, thread,
               session_id, text, intent, confidence, buttons, images, user_json, event_type, event_name, amount,
               event_key, nh, ts, received_at)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
               $8::text[], $9::text[], $10::text[], $11::text[], $12::float8[], $13::text[], $14::text[], $15::text[],
               $16::text[], $17::text[], $18::float8[], $19::text[], $20::smallint[], $21::bigint[], $22::bigint[])
           )
           SELECT pg_notify($23, p) FROM unnest($24::text[]) AS p`,
          [
            ids,
            col((x) => x.stored.recordId),
            col((x) => x.item.record.bot),
            col((x) => x.m.platform),
            col((x) => x.m.direction),
            textArray(col((x) => x.rollup.userId)),
            textArray(col((x) => text(x.m.conversationId))),
            textArray(col((x) => x.rollup.thread)),
            textArray(col((x) => text(x.m.sessionId))),
            textArray(col((x) => x.rollup.text)),
            textArray(col((x) => x.rollup.intent)),
            col((x) => x.m.confidence),
            textArray(col((x) => jsonColumn(x.m.buttons))),
            textArray(col((x) => jsonColumn(x.m.images))),
            textArray(col((x) => x.rollup.userJson)),
            textArray(col((x) => x.m.event?.type ?? null)),
            textArray(col((x) => text(x.m.event?.name ?? null))),
            col((x) => x.m.event?.amount ?? null),
            textArray(col((x) => x.rollup.eventKey)),
            col((x) => (x.rollup.nh ? 1 : 0)),
            col((x) => x.stored.ts),
            col((x) => x.item.record.receivedAt),
            CHANNEL,
            this.closed ? [] : payloads,
          ],
        )
      }
      // The summaries, in the same transaction: committed with the records or not at all.
      await runSteps(
        client,
        ingestSummaries(
          d,
          fresh.map((x) => x.rollup),
          items.flatMap((item, i) =>
            inserted.has(recordIds[i] as number) ? [{ bot: item.record.bot, ts: eventTsOf(item.record) }] : [],
          ),
          this.gapMs,
          this.zones,
        ),
      )
      let at = 0
      return items.map((item, i): AddResult => {
        const id = recordIds[i] as number
        if (!inserted.has(id)) {
          const found = existing.get(`${item.record.bot}\n${item.record.idempotencyKey ?? ''}`)
          if (found === undefined) throw new Error('record neither stored nor found under its idempotency key')
          return {
            id: found.id,
            duplicate: true,
            messages: [],
            ...(found.fingerprint ? { fingerprint: found.fingerprint } : {}),
          }
        }
        const messages = fresh.slice(at, at + item.messages.length).map((x) => x.stored)
        at += item.messages.length
        return { id, duplicate: false, messages }
      })
    })
    for (const r of results) for (const m of r.messages) this.markDelivered(m.id)
    return results
  }

  async setPaused(bot: string, thread: string, paused: boolean): Promise<PauseState> {
    const updatedAt = Date.now()
    const state = { bot, thread, paused, updatedAt }
    await this.transaction(async (client) => {
      await client.query(
        `INSERT INTO convotrack_pauses (bot, thread, paused, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (bot, thread) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at`,
        [bot, thread, paused, updatedAt],
      )
      await this.notify(client, { k: 'p', s: state })
    })
    return state
  }

  async saveMessengerPage(page: MessengerPageConfig): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(
        `INSERT INTO convotrack_messenger_pages (page_id, app_secret, verify_token, bot) VALUES ($1, $2, $3, $4)
         ON CONFLICT (page_id) DO UPDATE SET app_secret = excluded.app_secret, verify_token = excluded.verify_token, bot = excluded.bot`,
        [page.pageId, page.appSecret, page.verifyToken, page.bot ?? null],
      )
      await this.notify(client, { k: 'mp' })
    })
  }

  // ------------------------------------------------------------------ reads

  async record(id: number): Promise<StoredRecord | undefined> {
    if (!Number.isSafeInteger(id)) return undefined
    const rows = await this.query<StoredRecord>(
      'SELECT id, bot, platform, type, v, received_at AS "receivedAt", raw FROM convotrack_records WHERE id = $1',
      [id],
    )
    return rows[0]
  }

  /** The reports, on this database (pooled, bounded like every read). */
  protected override readonly reports = reportReads(
    d,
    (q: Query): Promise<Row[]> => this.query<Row>(d.sql(q.sql), q.params),
  )
  protected override readonly analytics: AnalyticsReads
  protected override readonly zonePreparer: RetentionZonePreparer

  async recent(filter: ReadFilter & { limit?: number; afterId?: number }): Promise<StoredMessage[]> {
    const q = recentQuery(d, filter, clampLimit(filter.limit, 100))
    return (await this.query<MessageRow>(d.sql(q.sql), q.params)).map(toMessage)
  }

  async transcript(
    bot: string,
    thread: string,
    options: { limit?: number; beforeId?: number } = {},
  ): Promise<StoredMessage[]> {
    const before = options.beforeId === undefined ? undefined : Math.floor(options.beforeId)
    const q = transcriptQuery(d, text(bot) as string, text(thread) as string, clampLimit(options.limit, 500), before)
    return (await this.query<MessageRow>(d.sql(q.sql), q.params)).map(toMessage)
  }

  async paused(bot: string, thread: string): Promise<boolean> {
    const rows = await this.query<{ paused: boolean }>(
      'SELECT paused FROM convotrack_pauses WHERE bot = $1 AND thread = $2',
      [bot, thread],
    )
    return rows[0]?.paused === true
  }

  async messengerPages(): Promise<MessengerPageConfig[]> {
    const rows = await this.query<MessengerPageRow>(
      'SELECT page_id, app_secret, verify_token, bot FROM convotrack_messenger_pages ORDER BY page_id',
    )
    return rows.map(toMessengerPage)
  }

  // ------------------------------------------------------------------ lifecycle and audit

  /**
   * Erases one end user of one bot in one transaction: every record that carried one of their
   * messages (with all its messages), the pause state of their threads, the details of audit
   * entries about them. Other instances' dashboards hear of it (an `erase` change).
   */
  async eraseUser(bot: string, userId: string): Promise<ErasureResult> {
    // An operator's action that may delete a very active user's whole history: its statements
    // get ERASE_STATEMENT_MS, not the request bound meant for ingestion and dashboard reads.
    return this.operatorTransaction(async (client) => {
      const threads = (
        await client.query<{ thread: string }>(
          `SELECT thread FROM convotrack_messages WHERE bot = $1 AND user_id = $2 GROUP BY thread ORDER BY min(id)`,
          [bot, text(userId)],
        )
      ).rows.map((r) => r.thread)
      const doomed = (
        await client.query<{ id: number }>(
          'SELECT DISTINCT record_id AS id FROM convotrack_messages WHERE bot = $1 AND user_id = $2',
          [bot, text(userId)],
        )
      ).rows.map((r) => r.id)
      const gone = await this.deleteRecords(client, doomed, { tombstones: true })
      const about = [text(userId), ...threads]
      await client.query('DELETE FROM convotrack_pauses WHERE bot = $1 AND thread = ANY($2::text[])', [bot, about])
      await client.query('UPDATE convotrack_audit SET detail = NULL WHERE bot = $1 AND target = ANY($2::text[])', [
        bot,
        about,
      ])
      await runSteps(client, eraseHandoffMarks(d, bot, text(userId) as string))
      await this.desk.erase(client, bot, userId, threads)
      const result = { removed: gone.records.length, messages: gone.messages, threads }
      // A user id too long for a notification's payload goes by its threads only.
      await this.notify(client, {
        k: 'e',
        bot,
        userId: Buffer.byteLength(userId) <= 2_000 ? userId : '',
        threads: capped(threads),
      })
      return result
    })
  }

  /** One user's records in arrival order, in keyset pages of 500 (bounded memory whatever their number). */
  async *exportUser(bot: string, userId: string): AsyncIterable<StoredRecord> {
    yield* pagedRecords((after) =>
      this.query<StoredRecord>(
        `SELECT r.id, r.bot, r.platform, r.type, r.v, r.received_at AS "receivedAt", r.raw
       FROM convotrack_records r WHERE r.id IN (
         SELECT DISTINCT record_id FROM convotrack_messages WHERE bot = $1 AND user_id = $2 AND record_id > $3
         ORDER BY record_id LIMIT 500)
       ORDER BY r.id`,
        [bot, text(userId), after],
      ),
    )
  }

  /**
   * Retention step: at most `limit` of the oldest records received before `before`, with their
   * messages, in one transaction. Rows another instance is deleting right now are skipped (it
   * has them), so instances sweeping together don't wait on each other.
   */
  async deleteOlderThan(opts: {
    before: number
    bot?: string
    exceptBots?: readonly string[]
    limit: number
  }): Promise<number> {
    const params: unknown[] = [opts.before]
    let where = ''
    if (opts.bot !== undefined) where += ` AND bot = $${params.push(opts.bot)}`
    if (opts.exceptBots?.length) where += ` AND bot <> ALL($${params.push([...opts.exceptBots])}::text[])`
    const limit = `$${params.push(Math.max(1, Math.floor(opts.limit)))}`
    return this.transaction(async (client) => {
      const doomed = (
        await client.query<{ id: number }>(
          `SELECT id FROM convotrack_records WHERE received_at < $1${where}
           ORDER BY received_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
          params,
        )
      ).rows.map((r) => r.id)
      const gone = await this.deleteRecords(client, doomed)
      const bots = [...new Set(gone.records.map((r) => r.bot))].sort()
      if (gone.records.length > 0) await this.notify(client, { k: 'x', bots: capped(bots), before: opts.before })
      return gone.records.length
    })
  }

  /**
   * Deletes these records with their messages and takes their share out of the summaries, in the
   * caller's transaction; gives the records' (bot, event time) and how many messages went.
   */
  private async deleteRecords(
    client: Sql,
    ids: number[],
    options: { tombstones?: boolean } = {},
  ): Promise<{ records: Array<{ bot: string; ts: number }>; messages: number }> {
    if (ids.length === 0) return { records: [], messages: 0 }
    // An erasure keeps the erased records' idempotency keys taken: key, fingerprint and id, nothing personal.
    if (options.tombstones)
      await client.query(
        `INSERT INTO convotrack_idempotency_tombstones (bot, idempotency_key, fingerprint, record_id)
         SELECT bot, idempotency_key, fingerprint, id FROM convotrack_records
         WHERE id = ANY($1::bigint[]) AND idempotency_key IS NOT NULL
         ON CONFLICT (bot, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint, record_id = excluded.record_id`,
        [ids],
      )
    const usage = await runSteps(client, doomedUsage(d, ids))
    const messages = (
      await client.query<Row>(
        `DELETE FROM convotrack_messages WHERE record_id = ANY($1::bigint[]) RETURNING ${ROLLUP_COLUMNS}`,
        [ids],
      )
    ).rows.map(rollupMessage)
    const records = (
      await client.query<{ bot: string; ts: number }>(
        'DELETE FROM convotrack_records WHERE id = ANY($1::bigint[]) RETURNING bot, coalesce(event_ts, received_at) AS ts',
        [ids],
      )
    ).rows
    await runSteps(client, takeBackSummaries(d, messages, records, this.gapMs, usage, this.zones))
    return { records, messages: messages.length }
  }

  /** Stores an audit entry; an operator's handoff action is counted in its session in the same transaction (handoff-summary.ts). */
  async addAudit(entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry> {
    const stored = { ts: entry.ts, action: entry.action, bot: text(entry.bot), target: text(entry.target) }
    const id = await this.transaction(async (sql) => {
      const rows = await sql.query<{ id: number }>(
        `INSERT INTO convotrack_audit (ts, actor, action, bot, target, detail) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [
          stored.ts,
          text(entry.actor),
          text(entry.action),
          stored.bot,
          stored.target,
          entry.detail === null ? null : JSON.stringify(entry.detail),
        ],
      )
      await runSteps(
        sql,
        markHandoff(d, stored, this.gapMs, (key) => lockUsers(d, [key])),
      )
      return Number(rows.rows[0]?.id)
    })
    return { ...entry, id }
  }

  async audit(filter: { bots?: readonly string[]; limit?: number; beforeId?: number }): Promise<AuditEntry[]> {
    const params: unknown[] = []
    let where = ''
    if (filter.bots !== undefined) where += ` AND bot = ANY($${params.push([...filter.bots])}::text[])`
    if (filter.beforeId !== undefined) where += ` AND id < $${params.push(filter.beforeId)}`
    const rows = await this.query<Omit<AuditEntry, 'detail'> & { detail: string | null }>(
      `SELECT id, ts, actor, action, bot, target, detail FROM convotrack_audit WHERE true${where}
       ORDER BY id DESC LIMIT $${params.push(clampLimit(filter.limit, 200))}`,
      params,
    )
    return rows.map((r) => ({ ...r, detail: r.detail === null ? null : JSON.parse(r.detail) }))
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1')
  }

  // ------------------------------------------------------------------ the handoff desk (pg-handoffs.ts)

  updateHandoff(
    bot: string,
    thread: string,
    change: (current: HandoffRow | undefined) => HandoffRow | undefined,
  ): Promise<{ before: HandoffRow | undefined; after: HandoffRow | undefined }> {
    return this.desk
      .update([{ bot, thread, change }])
      .then((r) => r[0] as { before: HandoffRow | undefined; after: HandoffRow | undefined })
  }

  updateHandoffs(
    changes: readonly HandoffChange[],
  ): Promise<Array<{ before: HandoffRow | undefined; after: HandoffRow | undefined }>> {
    return this.desk.update(changes)
  }

  handoffs(filter: HandoffFilter): Promise<HandoffEntry[]> {
    return this.desk.list(filter)
  }

  takeIdlePaused(opts: IdleQuery): Promise<ResumedConversation[]> {
    return this.desk.takeIdlePaused(opts)
  }

  addNote(note: Omit<HandoffNote, 'id'>): Promise<HandoffNote> {
    return this.desk.addNote(note)
  }

  notes(bot: string, thread: string): Promise<HandoffNote[]> {
    return this.desk.notes(bot, thread)
  }

  userNotes(bot: string, userId: string): Promise<HandoffNote[]> {
    return this.desk.userNotes(bot, userId)
  }

  // ------------------------------------------------------------------ other instances

  /** What other collector processes on this database store and change (see {@link RecordStore.subscribe}). */
  subscribe(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(change: StoreChange): void {
    for (const l of this.listeners) {
      try {
        l(change)
      } catch (e) {
        console.error('[convotrack-collector] store change listener failed', e)
      }
    }
  }

  /**
   * A retention sweep notifies once per step (500 records): its steps' notices are gathered for
   * EXPIRE_GATHER_MS, so dashboards refresh once per sweep, not once per step.
   */
  private expired(bots: string[], before: number): void {
    // A step of a sweep whose cutoff a dashboard already heard of (a slow sweep, its steps more
    // than EXPIRE_GATHER_MS apart) changes nothing it shows: only a later cutoff is news.
    const news = bots.filter((bot) => before > (this.expiredUpTo.get(bot) ?? Number.NEGATIVE_INFINITY))
    if (news.length === 0) return
    for (const bot of news) this.expiring.set(bot, Math.max(before, this.expiring.get(bot) ?? before))
    if (this.expireTimer) return
    this.expireTimer = setTimeout(() => {
      this.expireTimer = undefined
      const byBefore = new Map<number, string[]>()
      for (const [bot, b] of this.expiring) {
        byBefore.set(b, [...(byBefore.get(b) ?? []), bot])
        this.expiredUpTo.set(bot, b)
      }
      this.expiring.clear()
      for (const [b, list] of byBefore) this.emit({ kind: 'expire', bots: list, before: b })
    }, EXPIRE_GATHER_MS)
    this.expireTimer.unref()
  }

  private markDelivered(id: number): void {
    this.delivered.add(id)
    if (this.delivered.size > 400_000) {
      let drop = this.delivered.size - 200_000
      for (const old of this.delivered) {
        if (drop-- <= 0) break
        this.delivered.delete(old)
      }
    }
  }

  /**
   * Connects the LISTEN session; on loss it reconnects with backoff and catches up on what it
   * missed. A server that hangs instead of closing the socket (TCP keepalive cannot see a frozen
   * process: its kernel still answers) is found by a heartbeat: `SELECT 1` every
   * `listenHeartbeatMs`, bounded by `queryTimeoutMs`; no answer → the session counts as lost.
   */
  private startListening(): Promise<void> {
    this.listening = (async () => {
      // Its own name, so operators (and tests) tell the live-feed session from the pool's in pg_stat_activity.
      const client = new pg.Client({ ...this.config, application_name: LISTEN_APPLICATION_NAME })
      const lost = () => {
        if (this.listener !== client) return
        this.listener = undefined
        this.lostAt ??= Date.now()
        if (this.heartbeatTimer) clearInterval(this.heartbeatTimer)
        this.heartbeatTimer = undefined
        // A statement in flight (the heartbeat that timed out) makes end() drop the socket at once.
        client.end().catch(() => {})
        this.scheduleReconnect(100)
      }
      client.on('error', lost)
      client.on('end', lost)
      client.on('notification', (n) => {
        if (n.channel === CHANNEL && n.payload) void this.onNotification(n.payload)
      })
      try {
        await client.connect()
        await client.query(`LISTEN ${CHANNEL}`)
      } catch (e) {
        client.end().catch(() => {})
        throw e
      }
      if (this.closed) {
        await client.end().catch(() => {})
        return
      }
      this.listener = client
      let beating = false
      if (this.heartbeatTimer) clearInterval(this.heartbeatTimer)
      this.heartbeatTimer = setInterval(() => {
        if (beating || this.listener !== client) return
        beating = true
        client.query('SELECT 1').then(() => {
          beating = false
        }, lost)
      }, this.heartbeatMs)
      this.heartbeatTimer.unref()
    })()
    return this.listening
  }

  private scheduleCatchUp(delayMs: number): void {
    if (this.closed || this.catchUpTimer) return
    this.catchUpTimer = setTimeout(async () => {
      this.catchUpTimer = undefined
      await this.catchUp().catch(() => this.scheduleCatchUp(Math.min(delayMs * 2, 2_000)))
    }, delayMs)
    this.catchUpTimer.unref()
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.closed || this.reconnectTimer) return
    this.reconnectTimer = setTimeout(async () => {
      this.reconnectTimer = undefined
      try {
        await this.startListening()
      } catch {
        this.scheduleReconnect(Math.min(delayMs * 2, 2_000))
        return
      }
      // Listening again: a catch-up that fails (the server slow to answer) is retried on its own,
      // without opening another session.
      await this.catchUp().catch(() => this.scheduleCatchUp(500))
    }, delayMs)
    this.reconnectTimer.unref()
  }

  /**
   * Messages whose notification may have been lost (stored while the LISTEN session was down, or
   * whose read failed) reach the feed too, once. Ids don't follow commit order across instances,
   * so the window is by arrival time: from CATCH_UP_SLACK_MS before the loss, skipping what was delivered.
   */
  private async catchUp(): Promise<void> {
    const since = this.lostAt
    if (since === undefined) return
    let afterId = 0
    for (let round = 0; round < 100; round++) {
      const rows = await this.query<MessageRow>(
        `${SELECT_MESSAGE} WHERE m.ts >= $1 AND m.id > $2 ORDER BY m.id LIMIT 2000`,
        [since - CATCH_UP_SLACK_MS, afterId],
      )
      const missed = rows.map(toMessage).filter((m) => !this.delivered.has(m.id))
      for (const m of missed) this.markDelivered(m.id)
      if (missed.length > 0 && this.listeners.size > 0) this.emit({ kind: 'messages', messages: missed })
      if (rows.length < 2000) break
      afterId = rows[rows.length - 1]?.id ?? afterId
    }
    if (this.lostAt === since) this.lostAt = undefined
  }

  private async onNotification(payload: string): Promise<void> {
    let n: {
      o?: string
      k?: string
      ids?: number[]
      s?: PauseState
      bot?: string
      userId?: string
      threads?: string[]
      bots?: string[]
      before?: number
      thread?: unknown
      e?: unknown
      n?: unknown
    }
    try {
      n = JSON.parse(payload)
    } catch {
      return
    }
    if (n.o === this.origin) return
    const desk = handoffChangeOf(n)
    if (desk) return this.emit(desk)
    if (n.k === 'p' && n.s) this.emit({ kind: 'pause', state: n.s })
    else if (n.k === 'mp') this.emit({ kind: 'messenger-pages' })
    else if (n.k === 'e' && typeof n.bot === 'string' && typeof n.userId === 'string')
      this.emit({ kind: 'erase', bot: n.bot, userId: n.userId, threads: Array.isArray(n.threads) ? n.threads : [] })
    else if (n.k === 'x' && Array.isArray(n.bots) && typeof n.before === 'number') this.expired(n.bots, n.before)
    else if (n.k === 'm' && Array.isArray(n.ids)) {
      const ids = n.ids.filter((id) => !this.delivered.has(id))
      for (const id of ids) this.markDelivered(id)
      if (ids.length === 0 || this.listeners.size === 0) return
      try {
        const rows = await this.query<MessageRow>(`${SELECT_MESSAGE} WHERE m.id = ANY($1::bigint[]) ORDER BY m.id`, [
          ids,
        ])
        this.emit({ kind: 'messages', messages: rows.map(toMessage) })
      } catch {
        // The database went away between the commit and this read: forget them as delivered and
        // let a catch-up find them (after the reconnect, or shortly when the session survived).
        for (const id of ids) this.delivered.delete(id)
        this.lostAt ??= Date.now()
        if (this.listener) this.scheduleCatchUp(500)
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    await this.zonePreparer.close()
    // Adds already queued are committed first.
    while (this.pending.length > 0 || this.flushScheduled) await new Promise((r) => setImmediate(r))
    this.closed = true
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer)
    if (this.catchUpTimer) clearTimeout(this.catchUpTimer)
    if (this.expireTimer) clearTimeout(this.expireTimer)
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer)
    if (this.packTimer) clearInterval(this.packTimer)
    await this.listening?.catch(() => {})
    const listener = this.listener
    this.listener = undefined
    await listener?.end().catch(() => {})
    // A count off the request path may run for up to a minute: cancelled, not waited for (the
    // pool's end waits for every checked-out session). Writes and erasures are waited for.
    // A cancel reaching a session between two of its statements cancels nothing: asked again
    // until those reads are gone (each ends at its cancelled statement), for at most 5 s.
    for (let tries = 0; this.offPathReads.size > 0 && tries < 50; tries++) {
      await this.pool
        .query('SELECT pg_cancel_backend(pid) FROM unnest($1::int[]) AS pid', [[...this.offPathReads]])
        .catch(() => {})
      await new Promise((r) => setTimeout(r, 100))
    }
    await this.packing?.catch(() => {})
    await this.pool.end().catch(() => {})
  }
}

/**
 * A list carried in a notification, cut so the payload stays far below PostgreSQL's 8 000 bytes
 * (the bot and user are always sent; a dashboard drops lines by user id as well as by thread).
 */
function capped(list: string[]): string[] {
  const out: string[] = []
  let bytes = 0
  for (const v of list) {
    bytes += Buffer.byteLength(v) + 8
    if (bytes > 4_000) break
    out.push(v)
  }
  return out
}

/** `records` record ids and `messages` message ids from their sequences, ascending, in one round trip. */
async function nextIds(client: Sql, records: number, messages: number): Promise<[number[], number[]]> {
  const row = (
    await client.query<{ r: string[]; m: string[] }>(
      `SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('convotrack_records', 'id')) FROM generate_series(1, $1)) AS r,
              ARRAY(SELECT nextval(pg_get_serial_sequence('convotrack_messages', 'id')) FROM generate_series(1, $2)) AS m`,
      [records, messages],
    )
  ).rows[0]
  const sorted = (ids: string[] | undefined) => (ids ?? []).map(Number).sort((a, b) => a - b)
  return [sorted(row?.r), sorted(row?.m)]
}

/** A message's summary fields without U+0000 (PostgreSQL text cannot hold it), as its columns store them. */
function pgSafe(m: RollupMessage): RollupMessage {
  return {
    ...m,
    userId: text(m.userId) as string,
    thread: text(m.thread) as string,
    text: text(m.text),
    intent: text(m.intent),
    eventKey: text(m.eventKey),
  }
}

/** Runs the shared statement generators on a transaction's client. */
function runSteps<T>(client: Sql, steps: Parameters<typeof runStepsAsync<T>>[0]): Promise<T> {
  return runStepsAsync(steps, async (q: Query) => (await client.query<Row>(d.sql(q.sql), q.params)).rows)
}
