/**
 * `convotrack import <file>`: backfills a JSON Lines or CSV export as universal records
 * (spec 4.4). Validation report and progress go to stderr, the summary to stdout.
 */
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type ApiVersion, ConvotrackError, createTracker } from '@convotrack/core'
import { type ImportSummary, importRecords } from './import-records'
import { parseMapping } from './mapping'
import { progressPrinter } from './progress'
import { type FileFormat, formatOf, readRecordsFile } from './readers'

/** Exit codes: 0 done, 1 records failed or the import stopped, 2 invalid records (the valid ones were sent), 64 usage. */
export const EXIT = { ok: 0, failed: 1, invalid: 2, usage: 64, interrupted: 130 } as const

const USAGE = `Usage: convotrack import <file> [options]

Backfills a JSON Lines or CSV export (one message a line) into the tracking service as
universal records (platform=universal, type=incoming|outgoing, v=10.1.1-rest).

Options:
  --api-key <key>        tracking key (default: $CONVOTRACK_API_KEY)
  --url <url>            service base URL (default: $CONVOTRACK_URL, else http://127.0.0.1:8787)
  --format jsonl|csv     file format (default: from the extension)
  --delimiter <char>     CSV delimiter (default ,)
  --map <pairs>          where fields are, e.g. text=body,userId=author.id,conversationId=ticket,
                         timestamp=created_at,direction=kind,sessionId=…,intent=…
                         (default: columns/keys with the field's own name)
  --checkpoint <file>    resume file (default: <file>.checkpoint.json)
  --no-checkpoint        do not record or resume progress
  --rate <n>             records per second at most (default 100, and no limit once the
                         service takes batches; 0 = no limit)
  --concurrency <n>      most requests in flight (default: the tracker's adaptive limit)
  --max-failures <n>     stop after this many records fail for good (default 100)
  --platform <p>         universal (default), sms or generic
  --v <version>          10.1.1-rest (default) or 11.1.0-rest
  --no-platform-json     do not copy the source row into platformJson
  --dry-run              validate and report, send nothing
  --strict               send nothing when any line is invalid
  --report <file>        write every invalid and failed line as JSON to <file>
  --json                 print the summary as JSON
  --quiet                no progress output
  -h, --help             this help

Exit codes: 0 done · 1 records failed or the import stopped · 2 invalid lines were skipped · 64 usage error`

/** Runs the CLI with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const err = process.stderr
  let args: ReturnType<typeof parseCliArgs>
  try {
    args = parseCliArgs(argv)
  } catch (error) {
    err.write(`convotrack: ${(error as Error).message}\n\n${USAGE}\n`)
    return EXIT.usage
  }
  const { values, positionals } = args
  if (values.help || positionals.length === 0) {
    ;(values.help ? process.stdout : err).write(`${USAGE}\n`)
    return values.help ? EXIT.ok : EXIT.usage
  }
  const [command, file, ...extra] = positionals
  if (command !== 'import' || !file || extra.length > 0) {
    err.write(`convotrack: expected "convotrack import <file>"\n\n${USAGE}\n`)
    return EXIT.usage
  }

  let format: FileFormat
  let map: ReturnType<typeof parseMapping>
  let rate: number
  let concurrency: number | undefined
  let maxFailures: number
  try {
    format = values.format ? oneOf(values.format, ['jsonl', 'csv'] as const, '--format') : formatOf(file)
    map = parseMapping(values.map ?? '')
    rate = count(values.rate ?? '100', '--rate')
    concurrency = values.concurrency === undefined ? undefined : Math.max(1, count(values.concurrency, '--concurrency'))
    maxFailures = count(values['max-failures'] ?? '100', '--max-failures')
    oneOf(values.v ?? '10.1.1-rest', ['10.1.1-rest', '11.1.0-rest'] as const, '--v')
    oneOf(values.platform ?? 'universal', ['universal', 'sms', 'generic'] as const, '--platform')
  } catch (error) {
    err.write(`convotrack: ${(error as Error).message}\n`)
    return EXIT.usage
  }
  const apiKey = values['api-key'] ?? env.CONVOTRACK_API_KEY
  if (!apiKey && !values['dry-run']) {
    err.write('convotrack: a tracking key is required: pass --api-key or set CONVOTRACK_API_KEY\n')
    return EXIT.usage
  }
  const path = resolve(file)
  const checkpoint = values['no-checkpoint'] ? undefined : resolve(values.checkpoint ?? `${file}.checkpoint.json`)
  const quiet = values.quiet === true

  let lastError: string | undefined
  let tracker: ReturnType<typeof createTracker>
  try {
    tracker = createTracker({
      apiKey: apiKey ?? 'dry-run',
      baseUrl: values.url ?? env.CONVOTRACK_URL,
      v: values.v as ApiVersion | undefined,
      concurrency,
      // Failures are counted and reported by the import itself; keep the terminal for the bar.
      onError: (e) => {
        lastError = e.message
      },
    })
  } catch (error) {
    err.write(`convotrack: ${(error as Error).message}\n`)
    return EXIT.usage
  }

  const stop = new AbortController()
  let interrupts = 0
  const onSignal = () => {
    interrupts++
    if (interrupts > 1) process.exit(EXIT.interrupted)
    err.write('\nconvotrack: stopping: waiting for records in flight, then saving the checkpoint (again to quit now)\n')
    stop.abort()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const bar = quiet ? undefined : progressPrinter({ stream: err })
  let summary: ImportSummary
  try {
    summary = await importRecords(tracker, () => readRecordsFile(path, format, { delimiter: values.delimiter }), {
      map,
      platform: values.platform as 'universal' | 'sms' | 'generic' | undefined,
      v: values.v as ApiVersion | undefined,
      rate,
      // An explicit --rate holds for batches too; the default politeness limit only for single records.
      batchRate: values.rate === undefined ? 0 : rate,
      // Enough records outstanding to fill batches (the byte-bounded queue holds them).
      maxInFlight: concurrency === undefined ? 5_000 : Math.max(concurrency * 4, 32),
      checkpoint,
      sourceId: path,
      dryRun: values['dry-run'],
      strict: values.strict,
      maxFailures,
      platformJson: !values['no-platform-json'],
      signal: stop.signal,
      onValidated: (report) => {
        if (quiet && report.invalid.length === 0) return
        err.write(validationText(file, report))
      },
      onProgress: bar?.update,
    })
  } catch (error) {
    bar?.done()
    err.write(`convotrack: ${(error as Error).message}\n`)
    await tracker.close(1000)
    return error instanceof ConvotrackError && error.code === 'config' ? EXIT.usage : EXIT.failed
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
  bar?.done()
  await tracker.close(5000)

  if (values.report)
    writeFileSync(
      values.report,
      `${JSON.stringify({ file: path, invalid: summary.invalid, failed: summary.failed }, null, 2)}\n`,
    )
  if (values.json) process.stdout.write(`${JSON.stringify(summary)}\n`)
  else process.stdout.write(`${summaryText(summary, checkpoint, lastError)}\n`)
  if (summary.stopped === 'aborted') return EXIT.interrupted
  if (!summary.dryRun && !summary.complete) return EXIT.failed
  return summary.invalid.length > 0 ? EXIT.invalid : EXIT.ok
}

function parseCliArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'api-key': { type: 'string' },
      url: { type: 'string' },
      format: { type: 'string' },
      delimiter: { type: 'string' },
      map: { type: 'string' },
      checkpoint: { type: 'string' },
      'no-checkpoint': { type: 'boolean' },
      rate: { type: 'string' },
      concurrency: { type: 'string' },
      'max-failures': { type: 'string' },
      platform: { type: 'string' },
      v: { type: 'string' },
      'no-platform-json': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      strict: { type: 'boolean' },
      report: { type: 'string' },
      json: { type: 'boolean' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

/** How many invalid lines the report prints before "… and N more". */
const REPORT_LINES = 20

function validationText(
  file: string,
  report: {
    records: number
    valid: number
    invalid: Array<{ position: number; message: string }>
    alreadyImported: number
    toSend: number
  },
): string {
  const lines: string[] = []
  if (report.invalid.length > 0) {
    lines.push(
      `${report.invalid.length} invalid line${report.invalid.length === 1 ? '' : 's'} in ${file} (skipped; fix them and run again to send them):`,
    )
    for (const bad of report.invalid.slice(0, REPORT_LINES)) lines.push(`  line ${bad.position}: ${bad.message}`)
    if (report.invalid.length > REPORT_LINES)
      lines.push(`  … and ${report.invalid.length - REPORT_LINES} more (--report <file> lists them all)`)
  }
  const resumed = report.alreadyImported > 0 ? `, ${report.alreadyImported} already imported by an earlier run` : ''
  lines.push(`${report.valid} valid record${report.valid === 1 ? '' : 's'}${resumed}; ${report.toSend} to send`)
  return `${lines.join('\n')}\n`
}

function summaryText(s: ImportSummary, checkpoint: string | undefined, lastError: string | undefined): string {
  if (s.dryRun) return `dry run: ${s.valid} valid, ${s.invalid.length} invalid, nothing sent`
  const parts = [`sent ${s.sent}`]
  if (s.alreadyImported) parts.push(`${s.alreadyImported} already imported`)
  if (s.skipped) parts.push(`${s.skipped} skipped by the tracker`)
  if (s.invalid.length) parts.push(`${s.invalid.length} invalid`)
  if (s.failed.length)
    parts.push(`${s.failed.length} failed (first: line ${s.failed[0]?.position}: ${s.failed[0]?.message})`)
  if (s.unconfirmed) parts.push(`${s.unconfirmed} unconfirmed`)
  let text = `${parts.join(', ')} in ${(s.durationMs / 1000).toFixed(1)} s`
  if (s.stopped) text += `; stopped (${s.stopped.replace(/_/g, ' ')})`
  if (!s.complete && checkpoint) text += `; run the same command again to resume (checkpoint ${checkpoint})`
  if (s.failed.length === 0 && !s.complete && lastError) text += `; last error: ${lastError}`
  return text
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new Error(`${flag} must be one of ${allowed.join(', ')} (got "${value}")`)
  return value as T
}

function count(value: string, flag: string): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${flag} must be a number ≥ 0 (got "${value}")`)
  return n
}
