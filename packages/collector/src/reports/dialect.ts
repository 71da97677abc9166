/**
 * What differs between SQLite and PostgreSQL in the SQL the reports and rollups share: table
 * names, placeholders, lists of values, NULL-safe greatest/least, string aggregation, column
 * types, and how many rows one upsert statement carries. Report SQL is written once with `?`
 * placeholders; {@link Dialect.sql} turns it into the database's own.
 */

/** A statement with `?` placeholders and its parameters. */
/** A row as the database answers it. */
export type Row = Record<string, unknown>

export interface Query {
  sql: string
  params: unknown[]
}

/** A column's kind; each dialect maps it to its type. */
export type ColumnKind = 'text' | 'int' | 'real'

export interface Dialect {
  readonly name: 'sqlite' | 'postgres'
  /** A table's name in this database (PostgreSQL prefixes `convotrack_`). */
  table(name: string): string
  /** The statement text with this database's placeholders. */
  sql(text: string): string
  /** `col` is one of `values` (an empty list matches nothing); pushes the parameter. */
  inList(col: string, values: readonly unknown[], params: unknown[]): string
  /** `col` is one of these integer ids; pushes the parameter. */
  inIds(col: string, ids: readonly number[], params: unknown[]): string
  /** NULL-safe greatest / least of two expressions (NULL only when both are). */
  greatest(a: string, b: string): string
  least(a: string, b: string): string
  /** Distinct values of `col` over a group, as text joined by commas (SQLite's `group_concat(DISTINCT …)`). */
  distinctList(col: string): string
  columnType(kind: ColumnKind): string
  /** Arrays of this kind as an `unnest` argument (PostgreSQL). */
  arrayType(kind: ColumnKind): string
  /** Several rows per upsert statement (arrays through `unnest`) or one statement per row. */
  readonly multiRow: boolean
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  table: (name) => name,
  sql: (text) => text,
  inList(col, values, params) {
    params.push(JSON.stringify(values))
    return `${col} IN (SELECT value FROM json_each(?))`
  },
  inIds(col, ids, params) {
    params.push(JSON.stringify(ids))
    return `${col} IN (SELECT value FROM json_each(?))`
  },
  greatest: (a, b) => `coalesce(max(${a}, ${b}), ${a}, ${b})`,
  least: (a, b) => `coalesce(min(${a}, ${b}), ${a}, ${b})`,
  distinctList: (col) => `group_concat(DISTINCT ${col})`,
  columnType: (kind) => ({ text: 'TEXT', int: 'INTEGER', real: 'REAL' })[kind],
  arrayType: () => {
    throw new Error('SQLite has no arrays')
  },
  multiRow: false,
}

export const postgresDialect: Dialect = {
  name: 'postgres',
  table: (name) => `convotrack_${name}`,
  sql(text) {
    let n = 0
    return text.replace(/\?/g, () => `$${++n}`)
  },
  inList(col, values, params) {
    params.push([...values])
    return `${col} = ANY(?::text[])`
  },
  inIds(col, ids, params) {
    params.push([...ids])
    return `${col} = ANY(?::bigint[])`
  },
  greatest: (a, b) => `greatest(${a}, ${b})`,
  least: (a, b) => `least(${a}, ${b})`,
  distinctList: (col) => `string_agg(DISTINCT ${col}, ',')`,
  // Text sorts and groups in byte order ("C"), as in SQLite, whatever the database's locale.
  columnType: (kind) => ({ text: 'text COLLATE "C"', int: 'bigint', real: 'double precision' })[kind],
  arrayType: (kind) => ({ text: 'text[]', int: 'bigint[]', real: 'float8[]' })[kind],
  multiRow: true,
}
