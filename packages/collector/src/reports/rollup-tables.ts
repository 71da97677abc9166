/**
 * The summary tables the reports read, defined once for both databases: their columns, keys,
 * indexes, and how a row of changes merges into a stored row. Every merge is commutative (sums,
 * least/greatest, "the latest by (ts, id) wins"), so two collectors upserting the same row at
 * once (`ON CONFLICT … DO UPDATE SET x = t.x + excluded.x`) give the same result in any order,
 * with no read-modify-write.
 */
import type { ColumnKind, Dialect, Query } from './dialect'

export interface RollupSpec {
  /** Table name without the dialect's prefix. */
  name: string
  columns: Record<string, ColumnKind>
  /** The primary key. */
  keys: readonly string[]
  /** Added: `x = t.x + excluded.x`. */
  sums?: readonly string[]
  /** Kept as the least / greatest seen. */
  mins?: readonly string[]
  maxes?: readonly string[]
  /** Taken from the row whose (`by[0]`, `by[1]`) is greatest: the latest message's fields. */
  latest?: { by: readonly [string, string]; cols: readonly string[] }
  /**
   * Replaced by the written row's (`x = excluded.x`): for per-user rows written only under the
   * user's lock, where the writer knows the whole new value.
   */
  replace?: readonly string[]
  /**
   * A stored row that the written one would not change is left as it is (`DO UPDATE … WHERE` a
   * merge moves it): no new row version for a write that changes nothing. Sums and `latest` are
   * not supported with it.
   */
  skipUnchanged?: true
  /** A stored row whose sum of these reaches 0 (changes taken back) is deleted. */
  live?: readonly string[]
  /**
   * PostgreSQL: columns the primary key's index holds beside the key (`INCLUDE`), so a read of a
   * key range gets them from the index alone (a heap table keeps no row order; SQLite's WITHOUT
   * ROWID table is its key's b-tree already).
   */
  include?: readonly string[]
  /**
   * Secondary indexes for the reports' reads: a column list, or `cols` and the columns it holds
   * beside them (`include`: PostgreSQL's `INCLUDE`, so the read takes them from the index alone;
   * on SQLite they follow the key columns). Named after `cols`.
   */
  indexes?: ReadonlyArray<readonly string[] | { cols: readonly string[]; include: readonly string[] }>
  /**
   * SQLite: a WITHOUT ROWID table (the key's b-tree holds the rows) instead of a rowid table (a
   * b-tree of rows beside the key's index): for narrow rows with few secondary indexes (those
   * carry the whole key instead of a rowid). Wide rows (free text, metadata) stay rowid tables.
   */
  withoutRowid?: true
}

/** Messages, records and directions per bot × hour (event time): `/api/stats`, the timeline. */
export const HOURLY: RollupSpec = {
  name: 'rollup_hourly',
  columns: {
    bot: 'text',
    hour: 'int',
    records: 'int',
    messages: 'int',
    incoming: 'int',
    outgoing: 'int',
    events: 'int',
  },
  keys: ['bot', 'hour'],
  withoutRowid: true,
  sums: ['records', 'messages', 'incoming', 'outgoing', 'events'],
  live: ['records', 'messages'],
  indexes: [['hour']],
}

/** Intents per bot × hour × intent: the intents report. */
export const INTENTS: RollupSpec = {
  name: 'rollup_intents',
  columns: {
    bot: 'text',
    hour: 'int',
    intent: 'text',
    messages: 'int',
    incoming: 'int',
    outgoing: 'int',
    conf_sum: 'real',
    conf_n: 'int',
  },
  keys: ['bot', 'hour', 'intent'],
  withoutRowid: true,
  sums: ['messages', 'incoming', 'outgoing', 'conf_sum', 'conf_n'],
  live: ['messages'],
  indexes: [['hour']],
}

/** Events per bot × hour × type × name (page for page launches, source for referrals). */
export const EVENTS: RollupSpec = {
  name: 'rollup_events',
  columns: { bot: 'text', hour: 'int', type: 'text', name: 'text', n: 'int', amount: 'real' },
  keys: ['bot', 'hour', 'type', 'name'],
  withoutRowid: true,
  sums: ['n', 'amount'],
  live: ['n'],
  indexes: [['hour']],
}

/**
 * A per-hour summary's copy per UTC day: its columns and key with `day` in place of `hour`, indexed
 * by day (the reads take a range's whole days from it, its partial days from the hours).
 *
 * @example dayCopy(INTENTS, 'rollup_intent_days').keys // ['bot', 'day', 'intent']
 */
export function dayCopy(spec: RollupSpec, name: string): RollupSpec {
  const rename = (c: string) => (c === 'hour' ? 'day' : c)
  return {
    ...spec,
    name,
    columns: Object.fromEntries(Object.entries(spec.columns).map(([c, type]) => [rename(c), type])),
    keys: spec.keys.map(rename),
    indexes: [['day']],
  }
}

/**
 * {@link INTENTS} per bot × UTC day × intent: the intents report reads a range's whole UTC days
 * here and only the hours of its partial first and last days from the hour rows — 24 times fewer
 * rows, so a year of history is a year of days, not of hours (PostgreSQL migration 30, SQLite
 * step 25 derive it from the hour rows). Kept from the same changes (rollup-delta.ts).
 */
export const INTENT_DAYS: RollupSpec = dayCopy(INTENTS, 'rollup_intent_days')

/** {@link EVENTS} per bot × UTC day × type × name: the events report, as {@link INTENT_DAYS} for intents. */
export const EVENT_DAYS: RollupSpec = dayCopy(EVENTS, 'rollup_event_days')

/**
 * NotHandled inputs per bot × hour × phrase (text lower-cased and trimmed) × user: the count, the
 * latest time and a spelling of the text. The user in the key makes the `users` column exact over
 * any range and erasure exact (the user's rows go).
 */
export const NOT_HANDLED: RollupSpec = {
  name: 'rollup_not_handled',
  columns: { bot: 'text', hour: 'int', phrase: 'text', user_id: 'text', n: 'int', last_ts: 'int', text: 'text' },
  keys: ['bot', 'hour', 'phrase', 'user_id'],
  sums: ['n'],
  maxes: ['last_ts'],
  mins: ['text'],
  indexes: [['hour']],
}

/**
 * Users active per bot × UTC day (messages, incoming): distinct users over a range. Keyed by day
 * first: the reads take a range of days (of one bot or all), and no index beside the key is kept.
 */
export const USER_DAYS: RollupSpec = {
  name: 'rollup_user_days',
  columns: { bot: 'text', day: 'int', user_id: 'text', messages: 'int', incoming: 'int' },
  keys: ['day', 'bot', 'user_id'],
  withoutRowid: true,
  sums: ['messages', 'incoming'],
  live: ['messages'],
}

/** One row per bot × user: first and last seen (event time) and the latest metadata (segments). */
export const USERS: RollupSpec = {
  name: 'user_profiles',
  columns: {
    bot: 'text',
    user_id: 'text',
    first_ts: 'int',
    last_ts: 'int',
    messages: 'int',
    user_json: 'text',
    json_ts: 'int',
    json_id: 'int',
  },
  keys: ['bot', 'user_id'],
  sums: ['messages'],
  mins: ['first_ts'],
  maxes: ['last_ts'],
  latest: { by: ['json_ts', 'json_id'], cols: ['user_json'] },
  indexes: [['last_ts']],
}

/** One row per transcript (bot × thread): the conversations list, read in keyset pages. */
export const CONVERSATIONS: RollupSpec = {
  name: 'conversation_summaries',
  columns: {
    bot: 'text',
    thread: 'text',
    messages: 'int',
    not_handled: 'int',
    first_ts: 'int',
    last_ts: 'int',
    last_id: 'int',
    last_text: 'text',
    last_user: 'text',
    last_platform: 'text',
    in_user: 'text',
    msg_platform: 'text',
  },
  keys: ['bot', 'thread'],
  sums: ['messages', 'not_handled'],
  mins: ['first_ts'],
  maxes: ['in_user', 'msg_platform'],
  latest: { by: ['last_ts', 'last_id'], cols: ['last_text', 'last_user', 'last_platform'] },
  // One index: every summary row moves in it at each message; a bot's page filters while walking it.
  indexes: [['last_ts', 'last_id']],
}

/** Every summary, in the order writers lock them (ingest, erasure and retention alike). */
export const ROLLUPS: readonly RollupSpec[] = [
  HOURLY,
  INTENTS,
  EVENTS,
  INTENT_DAYS,
  EVENT_DAYS,
  USER_DAYS,
  NOT_HANDLED,
  USERS,
  CONVERSATIONS,
]

/** A row of changes to one summary table: its column values by name. */
export type RollupRow = Record<string, string | number | null>

const NOT_NULL = new Set([
  'bot',
  'hour',
  'day',
  'intent',
  'type',
  'name',
  'phrase',
  'user_id',
  'thread',
  'sid',
  'start_ts',
  'end_ts',
  'kind',
])

/** CREATE TABLE / INDEX statements of these summary tables (default: the reports'; idempotent: IF NOT EXISTS). */
export function rollupDdl(d: Dialect, specs: readonly RollupSpec[] = ROLLUPS): string {
  return specs
    .map((spec) => {
      const t = d.table(spec.name)
      const cols = Object.entries(spec.columns).map(
        ([c, kind]) => `  ${c} ${d.columnType(kind)}${NOT_NULL.has(c) || spec.sums?.includes(c) ? ' NOT NULL' : ''}`,
      )
      const indexes = (spec.indexes ?? []).map((ix) => {
        const { cols, include = [] } = 'cols' in ix ? ix : { cols: ix }
        const on =
          d.name === 'postgres' && include.length > 0
            ? `(${cols.join(', ')}) INCLUDE (${include.join(', ')})`
            : `(${[...cols, ...include].join(', ')})`
        return `CREATE INDEX IF NOT EXISTS ${t}_${cols.join('_')} ON ${t} ${on};`
      })
      // SQLite: one b-tree per table (sqlite-lean-ingest.ts).
      const options = d.name === 'sqlite' && spec.withoutRowid ? ' WITHOUT ROWID' : ''
      const include = d.name === 'postgres' && spec.include ? ` INCLUDE (${spec.include.join(', ')})` : ''
      return [
        `CREATE TABLE IF NOT EXISTS ${t} (\n${cols.join(',\n')},\n  PRIMARY KEY (${spec.keys.join(', ')})${include}\n)${options};`,
        ...indexes,
      ].join('\n')
    })
    .join('\n')
}

function mergeSql(d: Dialect, spec: RollupSpec): string {
  const t = d.table(spec.name)
  const set: string[] = []
  for (const c of spec.sums ?? []) set.push(`${c} = ${t}.${c} + excluded.${c}`)
  for (const c of spec.mins ?? []) set.push(`${c} = ${d.least(`${t}.${c}`, `excluded.${c}`)}`)
  for (const c of spec.maxes ?? []) set.push(`${c} = ${d.greatest(`${t}.${c}`, `excluded.${c}`)}`)
  for (const c of spec.replace ?? []) set.push(`${c} = excluded.${c}`)
  if (spec.latest) {
    const [ts, id] = spec.latest.by
    // Both sides of SET see the row as it was: every column takes the same side.
    const newer = `(excluded.${ts} > ${t}.${ts} OR (excluded.${ts} = ${t}.${ts} AND excluded.${id} > ${t}.${id}))`
    for (const c of [...spec.latest.cols, ts, id])
      set.push(`${c} = CASE WHEN ${newer} THEN excluded.${c} ELSE ${t}.${c} END`)
  }
  let where = ''
  if (spec.skipUnchanged) {
    const moves: string[] = []
    // A least/greatest moves when the written value is beyond the stored one (or none is stored).
    for (const c of spec.mins ?? []) moves.push(`coalesce(excluded.${c} < ${t}.${c}, excluded.${c} IS NOT NULL)`)
    for (const c of spec.maxes ?? []) moves.push(`coalesce(excluded.${c} > ${t}.${c}, excluded.${c} IS NOT NULL)`)
    const differs = d.name === 'postgres' ? 'IS DISTINCT FROM' : 'IS NOT'
    for (const c of spec.replace ?? []) moves.push(`excluded.${c} ${differs} ${t}.${c}`)
    where = ` WHERE ${moves.join(' OR ')}`
  }
  return `ON CONFLICT (${spec.keys.join(', ')}) DO UPDATE SET ${set.join(', ')}${where}`
}

const upsertCache = new Map<string, string>()

/**
 * The statements that merge `rows` into a summary table. Rows must have distinct keys (the
 * caller aggregated them); they are sorted by key, so concurrent writers lock rows in the same
 * order (no deadlock).
 */
export function upsertQueries(d: Dialect, spec: RollupSpec, rows: readonly RollupRow[]): Query[] {
  if (rows.length === 0) return []
  const cols = Object.keys(spec.columns)
  const sorted = [...rows].sort((a, b) => compareKeys(spec, a, b))
  const cacheKey = `${d.name}:${spec.name}`
  let sql = upsertCache.get(cacheKey)
  if (!sql) {
    const t = d.table(spec.name)
    const values = d.multiRow
      ? `SELECT * FROM unnest(${cols.map((c) => `?::${d.arrayType(spec.columns[c] as ColumnKind)}`).join(', ')})`
      : `VALUES (${cols.map(() => '?').join(', ')})`
    sql = `INSERT INTO ${t} (${cols.join(', ')}) ${values} ${mergeSql(d, spec)}`
    upsertCache.set(cacheKey, sql)
  }
  if (d.multiRow) return [{ sql, params: cols.map((c) => sorted.map((r) => r[c] ?? null)) }]
  return sorted.map((r) => ({ sql: sql as string, params: cols.map((c) => r[c] ?? null) }))
}

/** Deletes the rows of these keys whose `live` counts have reached 0 (their changes were taken back). */
export function dropEmptyQueries(d: Dialect, spec: RollupSpec, keys: readonly RollupRow[]): Query[] {
  if (keys.length === 0 || !spec.live) return []
  return deleteKeysQueries(d, spec, keys, ` AND ${spec.live.join(' + ')} <= 0`)
}

/** Deletes the rows of these keys (`extra`: a further condition). */
export function deleteKeysQueries(d: Dialect, spec: RollupSpec, keys: readonly RollupRow[], extra = ''): Query[] {
  if (keys.length === 0) return []
  const t = d.table(spec.name)
  const match = spec.keys.map((k) => `${k} = ?`).join(' AND ')
  if (!d.multiRow) {
    const sql = `DELETE FROM ${t} WHERE ${match}${extra}`
    return keys.map((k) => ({ sql, params: spec.keys.map((c) => k[c] ?? null) }))
  }
  const list = spec.keys.map((k) => `?::${d.arrayType(spec.columns[k] as ColumnKind)}`).join(', ')
  const on = spec.keys.map((k) => `${t}.${k} = k.${k}`).join(' AND ')
  return [
    {
      sql: `DELETE FROM ${t} USING unnest(${list}) AS k (${spec.keys.join(', ')}) WHERE ${on}${extra}`,
      params: spec.keys.map((c) => keys.map((k) => k[c] ?? null)),
    },
  ]
}

function compareKeys(spec: RollupSpec, a: RollupRow, b: RollupRow): number {
  for (const k of spec.keys) {
    const x = a[k] ?? ''
    const y = b[k] ?? ''
    if (x < y) return -1
    if (x > y) return 1
  }
  return 0
}

/** The key of a row, as one string (for maps). */
export function keyOf(spec: RollupSpec, row: RollupRow): string {
  return spec.keys.map((k) => String(row[k])).join('\u0000')
}
