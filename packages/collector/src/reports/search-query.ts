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

/** The statement of one search page: hits newest first, after `cursor`. */
export function searchQuery(
  d: Dialect,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
): Query {
  const params: unknown[] = []
  const m = d.table('messages')
  let match: string
  let from: string
  if (d.name === 'postgres') {
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
  if (cursor) {
    and += ` AND (${p}ts < ? OR (${p}ts = ? AND ${p}id < ?))`
    params.push(cursor[0], cursor[0], cursor[1])
  }
  return and
}

/**
 * How many of the newest messages (in the page's scope, range and after its cursor) a search
 * checks one by one before it falls back to the whole index: a common word fills its page within
 * a few hundred of them (no sort of every match), a rare one costs at most this many checks more.
 */
export const SEARCH_SCAN_ROWS = 2000

/**
 * The page's hits among the newest `scan` messages after the cursor, newest first: walks the
 * (ts, id) index downwards and checks each message against the query, stopping when the page is full.
 */
export function searchScanQuery(
  d: Dialect,
  filter: ReadFilter & { q: string; limit: number; cursor?: string | undefined },
  scan: number,
): Query {
  const terms = parseSearch(filter.q)
  const params: unknown[] = []
  const m = d.table('messages')
  const and = pageWhere(d, filter, params, '')
  params.push(scan)
  const newest = `(SELECT id, ts FROM ${m} WHERE 1 = 1${and} ORDER BY ts DESC, id DESC LIMIT ?) c`
  let sql: string
  if (d.name === 'postgres') {
    params.push(toTsQuery(terms), filter.limit)
    sql = `SELECT ${HIT_COLUMNS} FROM ${newest} JOIN ${m} m ON m.id = c.id
      WHERE ${pgSearchVector('m.text')} @@ to_tsquery('simple', ?) ORDER BY c.ts DESC, c.id DESC LIMIT ?`
  } else {
    params.push(toFtsQuery(terms), filter.limit)
    // CROSS JOIN fixes the order: each newest message is looked up in the index by rowid
    // (otherwise SQLite scans every match of the index and probes the newest messages).
    sql = `SELECT ${HIT_COLUMNS} FROM ${newest} CROSS JOIN messages_fts f CROSS JOIN ${m} m
      WHERE f.rowid = c.id AND messages_fts MATCH ? AND m.id = c.id ORDER BY c.ts DESC, c.id DESC LIMIT ?`
  }
  return { sql, params }
}

/** The `scan`-th newest message after the cursor (its `ts`, `id`), or none when there are fewer. */
export function searchScanEndQuery(
  d: Dialect,
  filter: ReadFilter & { cursor?: string | undefined },
  scan: number,
): Query {
  const params: unknown[] = []
  const and = pageWhere(d, filter, params, '')
  params.push(scan - 1)
  return {
    sql: `SELECT ts, id FROM ${d.table('messages')} WHERE 1 = 1${and} ORDER BY ts DESC, id DESC LIMIT 1 OFFSET ?`,
    params,
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
