/**
 * CSV answers of the reports (`?format=csv`): RFC 4180 (CRLF line ends, a field with a comma,
 * quote, CR or LF is quoted and its quotes doubled) and safe to open in a spreadsheet: a text cell
 * that starts with `=`, `+`, `-`, `@`, a tab or a carriage return and is not a number is prefixed
 * with `'`, so a user's message cannot run as a formula (OWASP, "CSV Injection").
 */

/** A column of a CSV answer: its header and how to read it from a row. */
export interface CsvColumn<Row> {
  header: string
  value: (row: Row) => unknown
}

const FORMULA_START = /^[=+\-@\t\r]/
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/** One cell: numbers as they are, text neutralised and quoted when it must be. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  let text = typeof value === 'string' ? value : Array.isArray(value) ? value.join(' | ') : JSON.stringify(value)
  if (FORMULA_START.test(text) && !NUMBER.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/**
 * The rows as one CSV document with a header line.
 *
 * @example toCsv([{ text: '=1+1', count: 2 }], [{ header: 'text', value: (r) => r.text }, { header: 'count', value: (r) => r.count }])
 * // "text,count\r\n'=1+1,2\r\n"
 */
export function toCsv<Row>(rows: Iterable<Row>, columns: ReadonlyArray<CsvColumn<Row>>): string {
  const lines = [columns.map((c) => csvCell(c.header)).join(',')]
  for (const row of rows) lines.push(columns.map((c) => csvCell(c.value(row))).join(','))
  return `${lines.join('\r\n')}\r\n`
}
