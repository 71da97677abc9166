/**
 * Full-text search over message text, written once for both databases: the user's query (words,
 * "quoted phrases", prefix*) parsed into terms, then the database's own query language —
 * PostgreSQL `to_tsquery('simple', …)` over a GIN index, SQLite FTS5 (a contentless table keyed by
 * time, kept by triggers on the messages table: {@link SQLITE_SEARCH_BY_TIME_DDL}). Every term
 * must match; hits newest first, in keyset pages. Terms are letters and digits only: nothing the
 * user types reaches either query language as syntax.
 */
import type { ReadFilter } from '../store/store'
import { type Dialect, type Query, sqliteDialect } from './dialect'
import { scopeSql, tsRangeSql } from './message-queries'

/** One term of a search: a word, a phrase (words in a row) or a prefix. */
export interface SearchTerm {
  words: string[]
  prefix: boolean
}

/** Why a search query was refused. */
export class SearchQueryError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SearchQueryError'
  }
}

const WORD = /[\p{L}\p{N}]+/gu
const words = (text: string): string[] => (text.toLowerCase().match(WORD) ?? []).slice(0, 16)

/**
 * The terms of a query: `"…"` a phrase, `word*` a prefix, other words each a term. At most 16
 * terms; a query without a letter or digit is refused.
 *
 * @example parseSearch('"where is" order* late') // [{words:['where','is']}, {words:['order'], prefix:true}, {words:['late']}]
 */
export function parseSearch(q: string): SearchTerm[] {
  const terms: SearchTerm[] = []
  for (const m of q.matchAll(/"([^"]*)"|(\S+)/g)) {
    if (m[1] !== undefined) {
      const w = words(m[1])
      if (w.length > 0) terms.push({ words: w, prefix: false })
      continue
    }
    const token = m[2] as string
    const prefix = token.endsWith('*')
    const w = words(token)
    // "can't" is two words in both indexes: a phrase of them.
    if (w.length > 0) terms.push({ words: w, prefix })
  }
  if (terms.length === 0) throw new SearchQueryError('query `q` must contain a word (letters or digits)')
  return terms.slice(0, 16)
}

/** The query in PostgreSQL's tsquery syntax (`a & b <-> c & d:*`). */
export function toTsQuery(terms: readonly SearchTerm[]): string {
  return terms
    .map((t) => t.words.map((w, i) => (t.prefix && i === t.words.length - 1 ? `${w}:*` : w)).join(' <-> '))
    .join(' & ')
}

/** The query in FTS5 syntax (`"a" "b c" "d"*`). */
export function toFtsQuery(terms: readonly SearchTerm[]): string {
  return terms.map((t) => `"${t.words.join(' ')}"${t.prefix ? '*' : ''}`).join(' ')
}

/** A search page's cursor: the last hit's (ts, id). */
export const searchCursor = (ts: number, id: number): string => `${ts}:${id}`

export function parseSearchCursor(cursor: string | undefined): [number, number] | undefined {
  if (cursor === undefined || cursor === '') return undefined
  const m = /^(-?\d+):(\d+)$/.exec(cursor)
  return m ? [Number(m[1]), Number(m[2])] : undefined
}

/**
 * The statement of one search page: hits newest first, after `cursor`. SQLite: the whole page
 * ({@link sqliteSearchQuery}); PostgreSQL: the rest of a page after {@link searchScanQuery}'s steps.
 *
 * `few`: the query's matches are known to be few (counted under {@link SEARCH_FEW_MATCHES}):
 * on PostgreSQL they are read from the full-text index and sorted, whatever the planner
 * estimates. Left to itself it walks the time index of the range and tests every message when
 * it takes a word for common (a word missing from its statistics is estimated at 0.05 % of the
 * messages): a word in no message tested all 3 million messages of the last 30 days at 10 M
 * records and answered 503 after the 3 s budget.
 */
export function searchQuery(
  d: Dialect,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
  few = false,
): Query {
  const params: unknown[] = []
  const m = d.table('messages')
  let match: string
  let from: string
  if (d.name === 'postgres' && few) {
    // OFFSET 0: the page's conditions stay outside, so only the full-text index can find the rows.
    params.push(toTsQuery(parseSearch(filter.q)))
    from = `(SELECT id, bot, thread, user_id, direction, text, ts FROM ${m}
      WHERE ${pgSearchVector('text')} @@ to_tsquery('simple', ?) OFFSET 0) m`
    match = '1 = 1'
  } else if (d.name === 'postgres') {
    from = `${m} m`
    match = `${pgSearchVector('m.text')} @@ to_tsquery('simple', ?)`
    params.push(toTsQuery(parseSearch(filter.q)))
  } else {
    return sqliteSearchQuery(filter)
  }
  const and = pageWhere(d, filter, params, 'm.')
  params.push(filter.limit)
  return {
    sql: `SELECT ${HIT_COLUMNS} FROM ${from}
      WHERE ${match}${and} ORDER BY m.ts DESC, m.id DESC LIMIT ?`,
    params,
  }
}

const HIT_COLUMNS = 'm.id, m.bot, m.thread, m.user_id, m.direction, m.text, m.ts'

/**
 * SQLite's search key of a message with text: its time in the high bits, then its rank among the
 * messages of that millisecond in the order they were stored (ids ascend with it), so the key's
 * order is the page's order — (ts, id), newest first — and the full-text index, keyed by it, is
 * read newest first from its top, stopped by the page's limit. `2^20` messages per millisecond;
 * times are clamped to ±{@link SEARCH_KEY_MAX_TS} (years 1830–2109) so that a key fits 63 bits.
 */
export const SEARCH_KEY_TIES = 1_048_576
/** The largest time (epoch ms, either sign) a search key holds as it is; beyond, clamped. */
export const SEARCH_KEY_MAX_TS = 2 ** 42 - 1

/**
 * The key's time part of the time expression `ts`: a whole number of ms (a time stored as a
 * fraction, which ingest never writes, would make a key no integer primary key takes), clamped,
 * times {@link SEARCH_KEY_TIES}.
 */
const keyBase = (ts: string) =>
  `max(min(CAST(${ts} AS INTEGER), ${SEARCH_KEY_MAX_TS}), -${SEARCH_KEY_MAX_TS}) * ${SEARCH_KEY_TIES}`

/** A time inside the keys' range (a bound on the key is exact for it, clamped times included). */
const keyable = (ts: number) => Number.isSafeInteger(ts) && Math.abs(ts) < SEARCH_KEY_MAX_TS

/** Most bots of a scope the full-text index is asked for (past it, only the messages' rows are tested). */
const SCOPE_BOTS_IN_INDEX = 64

/** An FTS5 string: the text between double quotes, a quote doubled (the tokenizer makes it a phrase). */
const ftsString = (text: string) => `"${text.replaceAll('"', '""')}"`

/**
 * SQLite: one page of hits, newest first, read from the full-text index in key order (time, then
 * the order of storing) from the page's end — its cursor, or the range's end — down, each match's
 * message tested against the page's scope, range and cursor (exactly), until the page is full.
 * The bots of a scope are in the index too (its `bot` column): a bot with few messages does not
 * make the walk read every match of a common word to find its own. A page costs its hits and the
 * matches it passes: the newest matches of any word are at the top (a millisecond for the first
 * page of a word in half of a million messages); a range ending far back, or a cursor deep in the
 * results, passes the matches above it (FTS5 walks a doclist from its top even to a bound: about
 * 0.15 µs a match, 60 ms for every match of that word).
 */
export function sqliteSearchQuery(
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
): Query {
  let match = `text : (${toFtsQuery(parseSearch(filter.q))})`
  const bots = filter.bot !== undefined ? [filter.bot] : filter.bots
  if (bots && bots.length > 0 && bots.length <= SCOPE_BOTS_IN_INDEX && bots.every((b) => words(b).length > 0))
    match += ` AND bot : (${bots.map(ftsString).join(' OR ')})`
  const params: unknown[] = [match]
  // Bounds on the key, from the page's end: the walk starts there (the exact tests follow). A
  // scope of no bot reads nothing (a constant test, before the walk).
  let keys = bots?.length === 0 ? ' AND 0' : ''
  if (filter.to !== undefined && filter.to !== null && keyable(filter.to)) {
    keys += ` AND f.rowid < ? * ${SEARCH_KEY_TIES}`
    params.push(filter.to)
  }
  const cursor = parseSearchCursor(filter.cursor)
  if (cursor && keyable(cursor[0])) {
    // The cursor's own key when its message is still there, else every key of its millisecond.
    keys += ` AND f.rowid < coalesce((SELECT skey FROM search_keys WHERE id = ? AND skey >= ? * ${SEARCH_KEY_TIES} AND skey < (? + 1) * ${SEARCH_KEY_TIES}), (? + 1) * ${SEARCH_KEY_TIES})`
    params.push(cursor[1], cursor[0], cursor[0], cursor[0])
  }
  if (filter.from !== undefined && filter.from > 0 && keyable(filter.from)) {
    keys += ` AND f.rowid >= ? * ${SEARCH_KEY_TIES}`
    params.push(filter.from)
  }
  const and = pageWhere(sqliteDialect, filter, params, 'm.')
  params.push(filter.limit)
  // CROSS JOIN: the index is the outer loop (SQLite keeps the order written). Left to choose, it
  // walked a bot's time index from the cursor and ran the MATCH for each row (500 ms a page of a
  // history of 3 000 messages).
  return {
    sql: `SELECT ${HIT_COLUMNS} FROM search_fts f CROSS JOIN search_keys s ON s.skey = f.rowid CROSS JOIN messages m ON m.id = s.id
      WHERE search_fts MATCH ?${keys}${and} ORDER BY f.rowid DESC LIMIT ?`,
    params,
  }
}

/** Scope, time range and keyset cursor of a search page, on columns prefixed by `p`. */
function pageWhere(
  d: Dialect,
  filter: ReadFilter & { cursor?: string | undefined },
  params: unknown[],
  p: string,
): string {
  let and = scopeSql(d, filter, params, `${p}bot`) + tsRangeSql(filter, params, `${p}ts`)
  const cursor = parseSearchCursor(filter.cursor)
  if (cursor) {
    and += ` AND (${p}ts < ? OR (${p}ts = ? AND ${p}id < ?))`
    params.push(cursor[0], cursor[0], cursor[1])
  }
  return and
}

/**
 * PostgreSQL: how many of the newest messages (in the page's scope and range, after its cursor) a
 * search checks in each step before it sorts every match of the rest: a word in many messages
 * fills its page in the first steps (no sort of all its matches); a rare one pays these steps on
 * top (README, "Search after the steps"). SQLite reads its full-text index in time order instead
 * ({@link sqliteSearchQuery}).
 */
export const SEARCH_SCAN_STEPS: readonly number[] = [2000, 200_000]

/**
 * The newest `scan` messages of a search step (after the page's cursor, in its scope and range),
 * as {@link searchScanSpanQuery} reads them: `n` how many, `lo`/`hi` their smallest and largest
 * id, `ts`/`id` the oldest of them (absent when fewer than `scan` were left).
 */
export interface SearchSpan {
  n: number
  lo: number
  hi: number
  ts?: number | undefined
  id?: number | undefined
}

/**
 * PostgreSQL: the page's hits among the newest `scan` messages after the cursor, newest first:
 * each message of them tested in turn until the page is full.
 *
 * PostgreSQL's full-text index has no id order: reading its matches between two ids recomputed
 * the text's vector for every message between them (seconds at 10 M: the newest 200 000 messages
 * spanned 2.7 M ids). Each message walked is tested instead, in time order, and the walk stops at
 * the page's last hit. The newest messages are a subquery with its `LIMIT`, which no condition of
 * the outer query can enter: the walk reads each message's row from the time index once (the
 * test needs its text) — a join of the time index's ids to the rows by key, as before, paid a
 * second index descent for each; and it cannot become a join of every match (a phrase's row
 * estimate of 16 once made a hash join of them). {@link pgSearchPrefilter} makes the search vector
 * only of the messages whose text can match. At 10 M records, the 9 674 messages the page of
 * `"speak to" human*` walks: 63 ms, then 38 ms with the test before the vector, 13 ms read once.
 */
export function searchScanQuery(
  d: Dialect,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
  scan: number,
): Query {
  const params: unknown[] = []
  const m = d.table('messages')
  const and = pageWhere(d, filter, params, '')
  const terms = parseSearch(filter.q)
  const pre = pgSearchPrefilter('m.text', terms)
  params.push(scan, ...(pre ? [pre.like] : []), toTsQuery(terms), filter.limit)
  return {
    sql: `SELECT ${HIT_COLUMNS} FROM (SELECT id, bot, thread, user_id, direction, text, ts FROM ${m}
        WHERE 1 = 1${and} ORDER BY ts DESC, id DESC LIMIT ?) m
      WHERE ${pre ? `${pre.sql} AND ` : ''}${pgSearchVector('m.text')} @@ to_tsquery('simple', ?)
      ORDER BY m.ts DESC, m.id DESC LIMIT ?`,
    params,
  }
}

/**
 * PostgreSQL: the newest `scan` messages after the cursor (a {@link SearchSpan}): `n` how many,
 * `lo`/`hi` their smallest and largest id, `ts`/`id` the oldest of them (where the next step starts).
 */
export function searchScanSpanQuery(
  d: Dialect,
  filter: ReadFilter & { cursor?: string | undefined },
  scan: number,
): Query {
  const params: unknown[] = []
  const m = d.table('messages')
  const and = pageWhere(d, filter, params, '')
  params.push(scan)
  return {
    sql: `WITH c AS MATERIALIZED (SELECT id, ts FROM ${m} WHERE 1 = 1${and} ORDER BY ts DESC, id DESC LIMIT ?)
      SELECT s.n, s.lo, s.hi, e.ts, e.id FROM (SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM c) s
      LEFT JOIN (SELECT ts, id FROM c ORDER BY ts, id LIMIT 1) e ON 1 = 1`,
    params,
  }
}

/**
 * Past this many matches in the whole index (any scope or range) a search walks the newest
 * messages first; below it, sorting every match is cheaper than the steps.
 */
export const SEARCH_FEW_MATCHES = 20_000

/**
 * PostgreSQL: the planner's estimate of the messages holding each word of the query (from its
 * statistics of the index's words; `EXPLAIN`, nothing read), one statement per word (at most
 * 16). Every word must match, so the least of them bounds the query's matches from above — as
 * far as the statistics are right, which is why it only decides whether counting is worth it.
 */
export function searchEstimateQueries(d: Dialect, q: string): Query[] {
  const seen = new Set<string>()
  for (const t of parseSearch(q))
    for (const [i, w] of t.words.entries()) seen.add(t.prefix && i === t.words.length - 1 ? `${w}:*` : w)
  return [...seen].slice(0, 16).map((w) => ({
    sql: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${d.table('messages')} WHERE ${pgSearchVector('text')} @@ to_tsquery('simple', ?)`,
    params: [w],
  }))
}

/** The row estimate of an `EXPLAIN (FORMAT JSON)` answer (its top node), or undefined. */
export function planRows(rows: ReadonlyArray<Record<string, unknown>>): number | undefined {
  const raw = rows[0]?.['QUERY PLAN']
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as
    | Array<{ Plan?: { 'Plan Rows'?: number } }>
    | undefined
  const n = plan?.[0]?.Plan?.['Plan Rows']
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined
}

/** PostgreSQL: `n`, how many messages match the query in the whole index, counted up to `cap` only. */
export function searchMatchCountQuery(d: Dialect, q: string, cap: number): Query {
  return {
    sql: `SELECT count(*) AS n FROM (SELECT 1 FROM ${d.table('messages')} WHERE ${pgSearchVector('text')} @@ to_tsquery('simple', ?) LIMIT ?) x`,
    params: [toTsQuery(parseSearch(q)), cap],
  }
}

/** The SQLite full-text index of migration 5 (replaced by {@link SQLITE_SEARCH_BY_TIME_DDL}): FTS5 over the messages' text keyed by id, kept by triggers. */
export const SQLITE_SEARCH_DDL = `
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(text, content='messages', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages WHEN new.text IS NOT NULL BEGIN
  INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages WHEN old.text IS NOT NULL BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF text ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, text) SELECT 'delete', old.id, old.text WHERE old.text IS NOT NULL;
  INSERT INTO messages_fts (rowid, text) SELECT new.id, new.text WHERE new.text IS NOT NULL;
END;
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
`

/**
 * A new search key for message `m` (`new`): one past the last of its millisecond, unless that
 * millisecond has {@link SEARCH_KEY_TIES} already; `when` an extra condition. The last key is one
 * seek down the key's index (`ORDER BY … DESC LIMIT 1`): `max(skey)` over the millisecond's range
 * read every key of it: 110 000 records stored in one millisecond did not finish in 15 minutes.
 */
const assignKey = (m: string, when = '') => {
  const b = keyBase(`${m}.ts`)
  const last = `SELECT skey FROM search_keys WHERE skey >= ${b} AND skey < ${b} + ${SEARCH_KEY_TIES} ORDER BY skey DESC LIMIT 1`
  return `INSERT INTO search_keys (skey, id)
    SELECT k, ${m}.id FROM (SELECT coalesce((${last}) + 1, ${b}) AS k)
    WHERE k < ${b} + ${SEARCH_KEY_TIES}${when};`
}

/**
 * The SQLite full-text index keyed by time (replaces {@link SQLITE_SEARCH_DDL}'s, keyed by id):
 * `search_keys` gives each message with text its search key (see {@link SEARCH_KEY_TIES}), and
 * the contentless FTS5 table `search_fts` holds its text and its bot under that key. Triggers keep
 * the keys — a stored message gets the next key of its millisecond (the last there: ids ascend as
 * messages are stored, so the keys of a millisecond are in id order) — and the index where a row
 * changes: a deleted message (erasure, retention) leaves it; a changed text is indexed again under
 * the same key. A stored message's text enters the index with the rest of its batch, in key order,
 * when the store's write ends ({@link SQLITE_SEARCH_INDEX_BATCH}). A message's time and bot never
 * change once stored. Existing messages are keyed in (ts, id) order and indexed (both made again
 * from the messages when the step runs again: a file set back to an earlier version).
 */
export const SQLITE_SEARCH_BY_TIME_DDL = `
DROP TRIGGER IF EXISTS messages_fts_insert;
DROP TRIGGER IF EXISTS messages_fts_delete;
DROP TRIGGER IF EXISTS messages_fts_update;
DROP TABLE IF EXISTS messages_fts;
DROP TRIGGER IF EXISTS search_insert;
DROP TRIGGER IF EXISTS search_delete;
DROP TRIGGER IF EXISTS search_update;
DROP TABLE IF EXISTS search_fts;
DROP TABLE IF EXISTS search_keys;
CREATE TABLE IF NOT EXISTS search_keys (skey INTEGER PRIMARY KEY, id INTEGER NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(text, bot, content='', contentless_delete=1);
INSERT INTO search_keys (skey, id)
  SELECT b + r - 1, id FROM (
    SELECT id, ${keyBase('ts')} AS b, row_number() OVER (PARTITION BY ${keyBase('ts')} ORDER BY id) AS r
    FROM messages WHERE text IS NOT NULL)
  WHERE r <= ${SEARCH_KEY_TIES} ORDER BY 1;
INSERT INTO search_fts (rowid, text, bot) SELECT s.skey, m.text, m.bot FROM search_keys s JOIN messages m ON m.id = s.id ORDER BY s.skey;
CREATE TRIGGER IF NOT EXISTS search_insert AFTER INSERT ON messages WHEN new.text IS NOT NULL BEGIN
  ${assignKey('new')}
END;
CREATE TRIGGER IF NOT EXISTS search_delete AFTER DELETE ON messages WHEN old.text IS NOT NULL BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT skey FROM search_keys WHERE id = old.id);
  DELETE FROM search_keys WHERE id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS search_update AFTER UPDATE OF text ON messages BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT skey FROM search_keys WHERE id = old.id);
  DELETE FROM search_keys WHERE id = old.id AND new.text IS NULL;
  ${assignKey('new', ' AND new.text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM search_keys WHERE id = new.id)')}
  INSERT INTO search_fts (rowid, text, bot) SELECT skey, new.text, new.bot FROM search_keys WHERE id = new.id AND new.text IS NOT NULL;
END;
`

/**
 * SQLite: the texts of the messages stored from id `?` on (a write's batch: ids ascend), into the
 * full-text index in key order. FTS5 writes out its pending terms whenever a row's key is below the
 * one before it: a batch's messages indexed one by one as stored (event times out of order, as a
 * batch of several users' records or of imported history is) cost 3.5× the CPU of the same rows in
 * key order, and 18–22 % more CPU per record at ingest.
 */
export const SQLITE_SEARCH_INDEX_BATCH = `INSERT INTO search_fts (rowid, text, bot)
  SELECT s.skey, m.text, m.bot FROM search_keys s JOIN messages m ON m.id = s.id WHERE s.id >= ? ORDER BY s.skey`

/**
 * PostgreSQL indexes the first this many characters of a message for search: the index entries
 * of one message are bounded (a 200 kB message of distinct words made its insert cost 12× the
 * rest of the batch), and no text is too long to index (a tsvector holds at most 1 MB).
 */
export const PG_SEARCH_CHARS = 10_000

/** The search vector of a text column: the expression the index is built on and the search matches. */
const pgSearchVector = (col: string) => `to_tsvector('simple', left(coalesce(${col}, ''), ${PG_SEARCH_CHARS}))`

/**
 * PostgreSQL: a test a message's text passes whenever it matches the query's terms, a fraction
 * of what making its search vector costs — the text lowercased holds each of the query's ASCII
 * words (`LIKE ALL` of `%word%`), or `undefined` when the query has none. A walk over the newest
 * messages ({@link searchScanQuery}) makes the vector only of the messages that pass: at 10 M
 * records, the page of `"speak to" human*` tested 9 674 messages in 63 ms, 22–38 ms with it.
 *
 * Exact, never a hit lost: the vector's words are the text's pieces lowercased by the database's
 * character type, and `lower(… COLLATE "default")` lowercases with the same one (the column's "C"
 * collation would leave a non-ASCII letter as it is), so a word of the vector is a piece of the
 * lowered text. Only ASCII words are tested: an ASCII letter lowercases the same alone or among
 * other letters (a Greek final sigma does not), and the letters that lowercase to one (`K`, the
 * Kelvin sign U+212A, `İ` to `i` and a dot) do so in the text too. Exported for tests.
 */
export function pgSearchPrefilter(
  col: string,
  terms: readonly SearchTerm[],
): { sql: string; like: string[] } | undefined {
  const ascii = [...new Set(terms.flatMap((t) => t.words))].filter((w) => /^[a-z0-9]+$/.test(w))
  if (ascii.length === 0) return undefined
  return {
    sql: `lower(left(coalesce(${col}, '') COLLATE "default", ${PG_SEARCH_CHARS})) LIKE ALL (?::text[])`,
    like: ascii.map((w) => `%${w}%`),
  }
}

/** Replaces the whole-text search index (PG_SEARCH_DDL) by one over the first {@link PG_SEARCH_CHARS} characters. */
export const PG_SEARCH_BOUNDED_DDL = `
DROP INDEX IF EXISTS convotrack_messages_text_search;
CREATE INDEX IF NOT EXISTS convotrack_messages_text_search_head ON convotrack_messages USING gin (${pgSearchVector('text')});
`

/** The PostgreSQL full-text index of migration 7 (replaced by {@link PG_SEARCH_BOUNDED_DDL}): GIN over the 'simple' configuration (no stemming: any language). */
export const PG_SEARCH_DDL = `
CREATE INDEX IF NOT EXISTS convotrack_messages_text_search ON convotrack_messages
  USING gin (to_tsvector('simple', coalesce(text, '')));
`
