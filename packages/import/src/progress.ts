/** The importer's progress snapshot, and the CLI's rendering of it. */

/** Where an import stands; handed to `onProgress` a few times a second and once at the end. */
export interface ImportProgress {
  /** Records to send in this run, when known (the source was validated first). */
  total: number | undefined
  /** Acknowledged by the service in this run. */
  sent: number
  /** Failed for good in this run. */
  failed: number
  /** Not sent on purpose (the tracker's ignore list or `redact`). */
  skipped: number
  /** Handed to the tracker and not yet acknowledged. */
  inFlight: number
  /** Acknowledgements per second over the last few seconds. */
  ratePerSecond: number
  /** Seconds left at the current rate, when the total is known and the rate is not zero. */
  etaSeconds: number | undefined
  /** Since the sending started, ms. */
  elapsedMs: number
}

/** Options of {@link progressPrinter}. */
export interface ProgressPrinterOptions {
  /** Where to write (default `process.stderr`). */
  stream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  /** A redrawn bar (TTY) or plain lines. Default: the stream's `isTTY`. */
  tty?: boolean
  /** Plain mode: at most one line per this many ms (default 2000). */
  intervalMs?: number
}

/**
 * A progress renderer for `onProgress`: a one-line bar redrawn in place on a terminal, plain
 * lines every few seconds otherwise (logs, CI). Call `done()` after the last update.
 *
 * @example const p = progressPrinter(); await importRecords(t, src, { onProgress: p.update }); p.done()
 */
export function progressPrinter(options: ProgressPrinterOptions = {}): {
  update(p: ImportProgress): void
  done(): void
} {
  const stream = options.stream ?? process.stderr
  const tty = options.tty ?? stream.isTTY === true
  const every = options.intervalMs ?? 2000
  let lastPlain = Number.NEGATIVE_INFINITY
  let last: ImportProgress | undefined
  let drawn = false
  return {
    update(p) {
      last = p
      if (tty) {
        stream.write(`\r\x1b[2K${formatProgress(p, true)}`)
        drawn = true
      } else if (p.elapsedMs - lastPlain >= every) {
        lastPlain = p.elapsedMs
        stream.write(`${formatProgress(p, false)}\n`)
      }
    },
    done() {
      if (tty && drawn) stream.write('\n')
      else if (!tty && last && last.elapsedMs !== lastPlain) stream.write(`${formatProgress(last, false)}\n`)
    },
  }
}

/**
 * One line: `[#####-----] 4,321/9,900 44% · 312 rec/s · ETA 0:18`.
 *
 * @example formatProgress(p, false) // 'progress: 4321/9900 (44%), 312 rec/s, ETA 0:18'
 */
export function formatProgress(p: ImportProgress, bar: boolean): string {
  const done = p.sent + p.failed + p.skipped
  const rate = `${Math.round(p.ratePerSecond)} rec/s`
  const eta = p.etaSeconds === undefined ? 'ETA --' : `ETA ${clock(p.etaSeconds)}`
  const failed = p.failed > 0 ? `, ${p.failed} failed` : ''
  if (p.total === undefined) return `${bar ? '' : 'progress: '}${done} records, ${rate}${failed}`
  const pct = p.total === 0 ? 100 : Math.min(100, Math.floor((done / p.total) * 100))
  if (!bar) return `progress: ${done}/${p.total} (${pct}%), ${rate}, ${eta}${failed}`
  const width = 24
  const filled = Math.round((pct / 100) * width)
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done.toLocaleString('en')}/${p.total.toLocaleString('en')} ${pct}% · ${rate} · ${eta}${failed}`
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = String(s % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`
}
