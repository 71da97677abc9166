/**
 * Readers of export files: one {@link SourceLine} per message, numbered by the line it starts
 * on, unparsable lines included (as errors) so the validation report can name them.
 */
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { ConfigError } from '@convotrack/core'
import { parse } from 'csv-parse'

/**
 * One item of a file source: the row's data, or why it could not be read, with its line number.
 * Plain objects can be imported too; they are numbered by their order in the source.
 *
 * @example new SourceLine(12, { text: 'hi', userId: 'u1' })
 */
export class SourceLine {
  constructor(
    /** 1-based line the record starts on; the position the checkpoint remembers. */
    readonly line: number,
    /** The parsed row (a JSON value, a CSV row object); undefined when `error` is set. */
    readonly data: unknown,
    /** Why the line could not be parsed. */
    readonly error?: string,
  ) {}
}

/** Export file formats. */
export type FileFormat = 'jsonl' | 'csv'

/** Options of {@link readCsv}. */
export interface CsvOptions {
  /** Field delimiter (default `,`). */
  delimiter?: string
}

/**
 * JSON Lines: one JSON object a line; blank lines are skipped.
 *
 * @example for await (const row of readJsonLines('export.jsonl')) console.log(row.line, row.data)
 */
export async function* readJsonLines(input: string | Readable): AsyncGenerator<SourceLine> {
  const stream = typeof input === 'string' ? createReadStream(input) : input
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })
  let n = 0
  for await (const text of lines) {
    n++
    const line = n === 1 ? text.replace(/^\uFEFF/, '') : text
    if (line.trim() === '') continue
    try {
      yield new SourceLine(n, JSON.parse(line))
    } catch (error) {
      yield new SourceLine(n, undefined, jsonError(error as Error))
    }
  }
}

/**
 * CSV with a header row: each row becomes an object keyed by the header. Rows with the wrong
 * number of columns are reported; a quoted field may span lines (numbered by its first line).
 *
 * @example for await (const row of readCsv('export.csv')) console.log(row.line, row.data)
 */
export async function* readCsv(input: string | Readable, options: CsvOptions = {}): AsyncGenerator<SourceLine> {
  const stream = typeof input === 'string' ? createReadStream(input) : input
  const skipped: SourceLine[] = []
  // csv-parse counts a CRLF inside a quoted field as two lines (but a CRLF ending a row as one):
  // keep the surplus so far, in parse order, and take it off every line number it reports.
  let surplus = 0
  const lineOf = (reported: number, breaks: { lines: number; crlf: number }): number => {
    surplus += breaks.crlf
    return reported - surplus - breaks.lines
  }
  const parser = stream.pipe(
    parse({
      columns: true,
      bom: true,
      raw: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      delimiter: options.delimiter ?? ',',
      // With `raw`, each row reaches on_record as { record, raw }.
      on_record: (row: { record: Record<string, string> }, context: { lines: number }) => ({
        record: row.record,
        line: lineOf(context.lines, breaksIn(Object.values(row.record))),
      }),
      on_skip: (error, raw) => {
        const end = (error as { lines?: number } | undefined)?.lines ?? 0
        const body = (raw ?? '').replace(/^[\r\n]+/, '').replace(/(\r\n|\r|\n)$/, '')
        skipped.push(
          new SourceLine(
            lineOf(end, breaksIn([body])),
            undefined,
            `is not a valid CSV row (${withoutLine(error?.message ?? 'unreadable')})`,
          ),
        )
        return undefined
      },
    }),
  )
  let last = 1
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; line: number }>) {
      while (skipped.length > 0 && (skipped[0]?.line ?? 0) < item.line) yield skipped.shift() as SourceLine
      last = item.line
      yield new SourceLine(item.line, item.record)
    }
  } catch (error) {
    // A fault the parser cannot step over (an unclosed quote): report it where it is and stop.
    yield* skipped.splice(0)
    const reported = (error as { lines?: number }).lines
    const at = reported !== undefined ? Math.max(last + 1, reported - surplus) : last + 1
    yield new SourceLine(
      at,
      undefined,
      `is not valid CSV; reading stopped here (${withoutLine((error as Error).message)})`,
    )
    return
  }
  yield* skipped.splice(0)
}

/**
 * Reads an export file in the given format, or the one its extension says (see {@link formatOf}).
 *
 * @example readRecordsFile('tickets.csv') // CSV rows
 */
export function readRecordsFile(path: string, format?: FileFormat, csv: CsvOptions = {}): AsyncGenerator<SourceLine> {
  const f = format ?? formatOf(path)
  const delimiter = csv.delimiter ?? (path.toLowerCase().endsWith('.tsv') ? '\t' : ',')
  return f === 'csv' ? readCsv(path, { ...csv, delimiter }) : readJsonLines(path)
}

/**
 * The format an extension implies: `.csv`/`.tsv` → csv (tab-separated for `.tsv`); `.jsonl`, `.ndjson` → jsonl.
 *
 * @example formatOf('export.ndjson') // 'jsonl'
 */
export function formatOf(path: string): FileFormat {
  const ext = path.toLowerCase().split('.').pop() ?? ''
  if (ext === 'csv' || ext === 'tsv') return 'csv'
  if (ext === 'jsonl' || ext === 'ndjson') return 'jsonl'
  throw new ConfigError(`cannot tell the format of "${path}" from its extension: pass --format jsonl or --format csv`)
}

/** csv-parse ends its messages with its own (CRLF-miscounted) "on line N": ours is in front. */
function withoutLine(message: string): string {
  return message.replace(/\s+(?:on|at) line \d+\s*$/, '')
}

/**
 * Line breaks inside a row's fields (only quoted fields hold them; CRLF, CR and LF each count
 * once), and how many of them are CRLF (csv-parse counts those twice).
 */
function breaksIn(fields: string[]): { lines: number; crlf: number } {
  let lines = 0
  let crlf = 0
  for (const f of fields) {
    if (typeof f !== 'string' || (!f.includes('\n') && !f.includes('\r'))) continue
    lines += f.match(/\r\n|\r|\n/g)?.length ?? 0
    crlf += f.match(/\r\n/g)?.length ?? 0
  }
  return { lines, crlf }
}

/**
 * The same message on every Node version: V8 changed its JSON errors (Node 20: "… at position
 * 12"; Node 22+: "… at position 12 (line 1 column 13)", and a quoted excerpt of the text).
 * The line is ours (one record a line), so only the column within it is reported.
 */
function jsonError(error: Error): string {
  const message = error.message
  const position = /\bat position (\d+)/.exec(message)
  const reason = message
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/\s*(in JSON )?at position \d+/, (m) => (m.includes('in JSON') ? ' in JSON' : ''))
    .trim()
  return position
    ? `is not valid JSON at column ${Number(position[1]) + 1} (${reason})`
    : `is not valid JSON (${reason})`
}
