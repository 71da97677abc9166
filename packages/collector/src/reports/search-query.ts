/**
 * Full-text search over message text, written once for both databases: the user's query (words,
 * "quoted phrases", prefix*) parsed into terms, then the database's own query language —
 * PostgreSQL `to_tsquery('simple', …)` over a GIN index, SQLite FTS5 (an external-content table
 * kept by triggers on the messages table). Every term must match; hits newest first, in keyset
 * pages. Terms are letters and digits only: nothing the user types reaches either query
 * language as syntax.
 */
import type { ReadFilter } from '../store/store'
import type { Dialect, Query } from './dialect'
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
 * The statement of one search page: hits newest first, after `cursor`.
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
    from = `messages_fts f JOIN ${m} m ON m.id = f.rowid`
    match = 'messages_fts MATCH ?'
    params.push(toFtsQuery(parseSearch(filter.q)))
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

/** Scope, time range and keyset cursor of a search page, on columns prefixed by `p`. */
function pageWhere(
  d: Dialect,
  filter: ReadFilter & { cursor?: string | undefined },
  params: unknown[],
  p: string,
): string {
  let and = scopeSql(d, filter, params, `${p}bot`) + tsRangeSql(filter, params, `${p}ts`)
  const cursor = parseSearchCursor(filter.cursor)
  if (cursor && d.name === 'sqlite') {
    // A range of the time index and a test of each row: an OR of the two made SQLite read both
    // ranges and sort them (MULTI-INDEX OR) when the page has a lower end too.
    and += ` AND ${p}ts <= ? AND (${p}ts < ? OR ${p}id < ?)`
    params.push(cursor[0], cursor[0], cursor[1])
  } else if (cursor) {
    and += ` AND (${p}ts < ? OR (${p}ts = ? AND ${p}id < ?))`
    params.push(cursor[0], cursor[0], cursor[1])
  }
  return and
}

/**
 * How many of the newest messages (in the page's scope and range, after its cursor) a search
 * checks in each step before it sorts every match of the rest: a word in many messages fills its
 * page in the first steps (no sort of all its matches); a rare one pays these steps on top. Each
 * step also reads the word's matches between its smallest and largest id from the full-text
 * index, on SQLite a whole walk of the word's doclist unless the step's ids are close
 * ({@link SEARCH_NEWEST_FIRST_SPAN}): steps growing ×4 (2 000 … 128 000) were slower than these
 * two (README, "Search after the steps", "Search's steps on SQLite").
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
 * SQLite: a step whose messages' ids lie at most this far apart reads the word's matches from
 * its largest id down, at most as many as there are ids in the span (a LIMIT, which stops FTS5's
 * walk); a wider one reads the matches between its smallest and largest id. FTS5 (3.53) walks
 * the rest of a term's doclist past the far end of a rowid range, so the range read cost as much
 * as reading every match (40 ms for a word in 455 000 messages at 1 M), however narrow; walked
 * newest first it costs about 1 µs a match, stopped by the limit (README, "Search's steps on
 * SQLite").
 */
export const SEARCH_NEWEST_FIRST_SPAN = 40_000

/**
 * The page's hits among the newest `scan` messages after the cursor, newest first.
 *
 * SQLite: the (ts, id) index walked newest first from the cursor down to the step's oldest
 * message (`span`), each message kept if the full-text index's matches between the step's
 * smallest and largest id hold it (ids mostly follow time: a narrow slice of the index), until the
 * page is full; only the page's rows read. PostgreSQL: each message of the newest `scan` tested in
 * turn until the page is full; `span` is not needed.
 */
export function searchScanQuery(
  d: Dialect,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
  scan: number,
  span: SearchSpan,
  newestFirstSpan = SEARCH_NEWEST_FIRST_SPAN,
): Query {
  const terms = parseSearch(filter.q)
  const params: unknown[] = []
  const m = d.table('messages')
  const and = pageWhere(d, filter, params, '')
  if (d.name === 'postgres') {
    // PostgreSQL's full-text index has no id order: reading its matches between two ids recomputed
    // the text's vector for every message between them (seconds at 10 M: the newest 200 000
    // messages spanned 2.7 M ids). Each message walked is tested instead, in time order, and the
    // walk stops at the page's last hit (OFFSET 0 keeps the test per message: a phrase's row
    // estimate of 16 made a hash join of every match). `span` is not needed.
    params.push(scan, toTsQuery(terms), filter.limit)
    return {
      sql: `SELECT ${HIT_COLUMNS} FROM (SELECT id, ts FROM ${m} WHERE 1 = 1${and} ORDER BY ts DESC, id DESC LIMIT ?) c
        CROSS JOIN LATERAL (SELECT x.* FROM ${m} x WHERE x.id = c.id AND ${pgSearchVector('x.text')} @@ to_tsquery('simple', ?) OFFSET 0) m
        ORDER BY c.ts DESC, c.id DESC LIMIT ?`,
      params,
    }
  }
  // The step ends at its oldest message: past it, matches outside the id span would be missed.
  let end = ''
  if (span.ts !== undefined && span.id !== undefined) {
    end = ' AND ts >= ? AND (ts > ? OR id >= ?)'
    params.push(span.ts, span.ts, span.id)
  }
  let matches: string
  if (span.hi - span.lo < newestFirstSpan) {
    matches = 'SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT ?'
    params.push(toFtsQuery(terms), span.hi, span.hi - span.lo + 1)
  } else {
    matches = 'SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid BETWEEN ? AND ?'
    params.push(toFtsQuery(terms), span.lo, span.hi)
  }
  params.push(filter.limit)
  // `+id`: the id is tested against the matches, never looked up from them (the walk is by time).
  return {
    sql: `WITH h AS (SELECT id, ts FROM ${m} WHERE 1 = 1${and}${end} AND +id IN (${matches}) ORDER BY ts DESC, id DESC LIMIT ?)
      SELECT ${HIT_COLUMNS} FROM h JOIN ${m} m ON m.id = h.id ORDER BY h.ts DESC, h.id DESC`,
    params,
  }
}

/**
 * The newest `scan` messages after the cursor (a {@link SearchSpan}): `n` how many, `lo`/`hi`
 * their smallest and largest id, `ts`/`id` the oldest of them (where the next step starts).
 * SQLite walks the (ts, id) index once without keeping the step's rows (materialised, 200 000 of
 * them cost three times the walk), and ends a full step at a time: its messages at its oldest
 * time are all in it, `id` the least of them.
 */
export function searchScanSpanQuery(
  d: Dialect,
  filter: ReadFilter & { cursor?: string | undefined },
  scan: number,
): Query {
  const params: unknown[] = []
  const m = d.table('messages')
  const and = pageWhere(d, filter, params, '')
  if (d.name === 'sqlite') {
    // One walk of the index: the step's count, ids and oldest time; the messages at that time past
    // the step's `scan` (ties) are taken into it, so that its end is a time and its smallest id
    // covers them: `id` is the least id at that time, where the next step starts.
    const ties: unknown[] = []
    const tieAnd = pageWhere(d, filter, ties, '')
    params.push(scan, ...ties, scan)
    return {
      sql: `WITH s AS MATERIALIZED (SELECT count(*) AS n, min(id) AS lo, max(id) AS hi, min(ts) AS ts FROM (SELECT id, ts FROM ${m} WHERE 1 = 1${and} ORDER BY ts DESC, id DESC LIMIT ?))
        SELECT s.n, min(s.lo, coalesce(t.lo, s.lo)) AS lo, s.hi, t.ts, t.lo AS id
        FROM s LEFT JOIN (SELECT ts, min(id) AS lo FROM ${m} WHERE 1 = 1${tieAnd} AND ts = (SELECT ts FROM s) GROUP BY ts) t ON s.n = ?`,
      params,
    }
  }
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

/** `n`: how many messages match the query in the whole index, counted up to `cap` only. */
export function searchMatchCountQuery(d: Dialect, q: string, cap: number): Query {
  const terms = parseSearch(q)
  const matches =
    d.name === 'postgres'
      ? `SELECT 1 FROM ${d.table('messages')} WHERE ${pgSearchVector('text')} @@ to_tsquery('simple', ?) LIMIT ?`
      : 'SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?'
  return {
    sql: `SELECT count(*) AS n FROM (${matches}) x`,
    params: [d.name === 'postgres' ? toTsQuery(terms) : toFtsQuery(terms), cap],
  }
}

/** The SQLite full-text index: FTS5 over the messages' text, kept by triggers (insert, delete, update of text). */
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
 * PostgreSQL indexes the first this many characters of a message for search: the index entries
 * of one message are bounded (a 200 kB message of distinct words made its insert cost 12× the
 * rest of the batch), and no text is too long to index (a tsvector holds at most 1 MB).
 */
export const PG_SEARCH_CHARS = 10_000

/** The search vector of a text column: the expression the index is built on and the search matches. */
const pgSearchVector = (col: string) => `to_tsvector('simple', left(coalesce(${col}, ''), ${PG_SEARCH_CHARS}))`

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
