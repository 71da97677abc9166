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
      yield new SourceLine(n, undefined, `is not valid JSON (${(error as Error).message})`)
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
  const parser = stream.pipe(
    parse({
      columns: true,
      bom: true,
      info: true,
      raw: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      delimiter: options.delimiter ?? ',',
      on_skip: (error, raw) => {
        const end = (error as { lines?: number } | undefined)?.lines ?? 0
        skipped.push(
          new SourceLine(startLine(end, raw), undefined, `is not a valid CSV row (${error?.message ?? 'unreadable'})`),
        )
        return undefined
      },
    }),
  )
  let last = 1
  try {
    for await (const item of parser as AsyncIterable<{
      record: Record<string, string>
      info: { lines: number }
      raw: string
    }>) {
      const line = startLine(item.info.lines, item.raw)
      while (skipped.length > 0 && (skipped[0]?.line ?? 0) < line) yield skipped.shift() as SourceLine
      last = item.info.lines
      yield new SourceLine(line, item.record)
    }
  } catch (error) {
    // A fault the parser cannot step over (an unclosed quote): report it where it is and stop.
    yield* skipped.splice(0)
    const at = (error as { lines?: number }).lines ?? last + 1
    yield new SourceLine(at, undefined, `is not valid CSV; reading stopped here (${(error as Error).message})`)
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

/** The parser reports the line a record ends on; a record spanning lines starts earlier. Leading blank lines are not the record's. */
function startLine(endLine: number, raw: string | undefined): number {
  if (!raw) return endLine
  const body = raw.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '')
  return endLine - (body.match(/\n/g)?.length ?? 0)
}
