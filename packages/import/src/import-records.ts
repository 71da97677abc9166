/**
 * `importRecords`: validate a source of third-party messages, then post them as universal
 * records (spec 4.4) through a tracker, paced, with progress, and resumable through a
 * checkpoint that only ever holds what the service acknowledged.
 */
import { type ApiVersion, ConfigError, InvalidRecordError, type Tracker } from '@convotrack/core'
import { Checkpoint } from './checkpoint'
import { Delivery, type ImportPlatform } from './delivery'
import { type FieldMapping, type MapOptions, type MappedRecord, mapRecord } from './mapping'
import type { ImportProgress } from './progress'
import { RateLimit } from './rate-limit'
import { SourceLine } from './readers'

/** Records to import: any (async) iterable of rows, or of {@link SourceLine}s from the file readers. */
export type RecordSource = AsyncIterable<unknown> | Iterable<unknown>

/** A record that cannot be imported, found before anything is sent. */
export interface InvalidRecord {
  /** Line number for file sources, 1-based index otherwise. */
  position: number
  /** The message field at fault (`userId`, `timestamp`…), `''` for a line that is not a record at all. */
  field: string
  message: string
}

/** A record the service did not take (after the tracker's retries). It is not in the checkpoint: a rerun sends it again. */
export interface FailedRecord {
  position: number
  code: string
  message: string
}

/** The result of the validation pass, before anything is sent. */
export interface ValidationReport {
  /** Records read (valid + invalid). */
  records: number
  valid: number
  invalid: InvalidRecord[]
  /** Valid records a previous run already delivered (from the checkpoint). */
  alreadyImported: number
  /** Valid records this run will send. */
  toSend: number
}

/** Options of {@link importRecords}. */
export interface ImportOptions extends MapOptions {
  /** Where each message field is in the source rows (default: keys of the same name). */
  map?: FieldMapping
  /** `platform` to post as (default `universal`). */
  platform?: ImportPlatform
  /** `v` to post with (default `10.1.1-rest`, spec 4.4). */
  v?: ApiVersion
  /** Records per second at most (default: no limit). */
  rate?: number
  /**
   * Records per second at most once the service takes batches (`tracker.stats().batching`):
   * our own collector stores a batch in one transaction, so a politeness limit meant for
   * one-request-per-record services need not hold it back. Default: `rate`.
   */
  batchRate?: number
  /** Records handed to the tracker and not yet acknowledged, at most (default 500). */
  maxInFlight?: number
  /** Checkpoint file: acknowledged positions are recorded there and skipped when the import runs again. */
  checkpoint?: string
  /** What is being imported (e.g. the resolved file path); a checkpoint written for something else is refused. */
  sourceId?: string
  /** How often the checkpoint is written while records are acknowledged, ms (default 50): acknowledgements newer than that are lost by a hard kill, and sent again. */
  checkpointIntervalMs?: number
  /** Validate only: report invalid records, send nothing. */
  dryRun?: boolean
  /** Send nothing when any record is invalid. */
  strict?: boolean
  /** Stop reading after this many records failed for good (default 100). */
  maxFailures?: number
  /** Stops the import: nothing more is read, acknowledgements are awaited up to `drainTimeoutMs`, the checkpoint is written. */
  signal?: AbortSignal
  /** On stop, how long to wait for records already handed over, ms (default 15 000). */
  drainTimeoutMs?: number
  /** Called for each invalid record as it is found. */
  onInvalid?: (record: InvalidRecord) => void
  /** Called once the validation pass is over (only when the source can be read twice, see {@link importRecords}). */
  onValidated?: (report: ValidationReport) => void
  /** Called a few times a second while sending, and once at the end. */
  onProgress?: (progress: ImportProgress) => void
  /** Interval of `onProgress` calls, ms (default 250). */
  progressIntervalMs?: number
}

/** What an import did. */
export interface ImportSummary {
  /** Records read from the source (valid + invalid). */
  records: number
  valid: number
  invalid: InvalidRecord[]
  /** Acknowledged by the service in this run. */
  sent: number
  /** Skipped because a previous run delivered them (checkpoint). */
  alreadyImported: number
  /** Not sent on purpose: the tracker's ignore list or `redact` dropped them. */
  skipped: number
  failed: FailedRecord[]
  /** Handed over, but no acknowledgement could be matched (a `redact` that rewrites bodies, a custom sink); not checkpointed. */
  unconfirmed: number
  dryRun: boolean
  /** Why the import stopped early, if it did. */
  stopped?: 'aborted' | 'too_many_failures' | 'invalid_records' | 'tracker_closed'
  /** True when every valid record has been delivered (in this run or before) or deliberately skipped. */
  complete: boolean
  durationMs: number
}

type Parsed = { position: number; record: MappedRecord } | { position: number; invalid: InvalidRecord }

/**
 * Imports third-party conversation history: each row is mapped to a universal message
 * (`text`, `userId`, …), validated, and posted as `type=incoming` (or `outgoing` for rows whose
 * direction says so) with `v=10.1.1-rest`.
 *
 * Pass a function returning the source (`() => readRecordsFile(path)`) and every record is
 * validated before the first one is sent; pass an iterable (a paginated API) and records are
 * validated as they stream, invalid ones reported and skipped.
 *
 * With `checkpoint`, positions enter the file only once the service acknowledged them, and a
 * rerun skips them: an import stopped at any point (Ctrl-C, a crash, `kill -9`) resumes with
 * nothing lost. A graceful stop (`signal`) waits for what is in flight, so nothing is sent twice;
 * after a hard kill, the requests that were in flight and the acknowledgements of the last
 * `checkpointIntervalMs` are sent again (the spec has no idempotency key to avoid that).
 *
 * @example
 * const summary = await importRecords(tracker, () => readRecordsFile('export.jsonl'), { map: { text: 'body', userId: 'author' }, checkpoint: 'export.checkpoint.json' })
 */
export async function importRecords(
  tracker: Tracker,
  source: RecordSource | (() => RecordSource),
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const started = Date.now()
  const platform = options.platform ?? 'universal'
  if (!['universal', 'sms', 'generic'].includes(platform))
    throw new ConfigError(`platform must be universal, sms or generic (got ${String(platform)})`)
  const v: ApiVersion = options.v ?? '10.1.1-rest'
  const maxInFlight = Math.max(1, options.maxInFlight ?? 500)
  const maxFailures = options.maxFailures ?? 100
  const checkpoint = options.checkpoint ? Checkpoint.load(options.checkpoint, options.sourceId) : undefined
  const mapOptions: MapOptions = { platformJson: options.platformJson }
  const summary: ImportSummary = {
    records: 0,
    valid: 0,
    invalid: [],
    sent: 0,
    alreadyImported: 0,
    skipped: 0,
    failed: [],
    unconfirmed: 0,
    dryRun: options.dryRun === true,
    complete: false,
    durationMs: 0,
  }
  const finish = (): ImportSummary => {
    summary.durationMs = Date.now() - started
    return summary
  }
  const parse = (item: { position: number; data: unknown; error?: string }): Parsed => {
    if (item.error !== undefined)
      return { position: item.position, invalid: { position: item.position, field: '', message: item.error } }
    try {
      return { position: item.position, record: mapRecord(item.data, options.map, mapOptions) }
    } catch (error) {
      if (!(error instanceof InvalidRecordError)) throw error
      return {
        position: item.position,
        invalid: { position: item.position, field: error.path, message: error.message },
      }
    }
  }
  const invalidFound = (invalid: InvalidRecord) => {
    summary.invalid.push(invalid)
    options.onInvalid?.(invalid)
  }

  // Pass 1: validate everything before sending anything, when the source can be read again.
  const twoPass = typeof source === 'function'
  let toSend: number | undefined
  if (twoPass || summary.dryRun) {
    for await (const item of positioned(typeof source === 'function' ? source() : source)) {
      const parsed = parse(item)
      summary.records++
      if ('invalid' in parsed) invalidFound(parsed.invalid)
      else {
        summary.valid++
        if (checkpoint?.has(parsed.position)) summary.alreadyImported++
      }
    }
    toSend = summary.valid - summary.alreadyImported
    options.onValidated?.({
      records: summary.records,
      valid: summary.valid,
      invalid: summary.invalid,
      alreadyImported: summary.alreadyImported,
      toSend,
    })
    if (summary.dryRun) return finish()
    if (options.strict && summary.invalid.length > 0) {
      summary.stopped = 'invalid_records'
      return finish()
    }
    summary.records = 0
    summary.valid = 0
    summary.alreadyImported = 0
  }

  // Pass 2: send.
  const sendStarted = Date.now()
  const samples: Array<{ at: number; done: number }> = [{ at: sendStarted, done: 0 }]
  const delivery = new Delivery(tracker, platform, v, {
    acknowledged: (p) => {
      summary.sent++
      checkpoint?.add(p)
    },
    failed: (p, code, message) => {
      summary.failed.push({ position: p, code, message })
    },
    skipped: (p) => {
      summary.skipped++
      checkpoint?.add(p)
    },
    unconfirmed: () => {
      summary.unconfirmed++
    },
  })
  const progress = (): ImportProgress => {
    const now = Date.now()
    const done = summary.sent + summary.failed.length + summary.skipped + summary.unconfirmed
    samples.push({ at: now, done })
    while (samples.length > 2 && (samples[0]?.at ?? now) < now - 5000) samples.shift()
    const first = samples[0] ?? { at: now, done }
    const rate = now > first.at ? ((done - first.done) * 1000) / (now - first.at) : 0
    const left = toSend === undefined ? undefined : Math.max(0, toSend - done)
    return {
      total: toSend,
      sent: summary.sent,
      failed: summary.failed.length,
      skipped: summary.skipped,
      inFlight: delivery.outstanding,
      ratePerSecond: rate,
      etaSeconds: left === undefined ? undefined : left === 0 ? 0 : rate > 0 ? left / rate : undefined,
      elapsedMs: now - sendStarted,
    }
  }
  let lastDurable = Date.now()
  const saveCheckpoint = () => {
    if (!checkpoint?.dirty) return
    // Every write survives a killed process; one a second also survives a power cut.
    const durable = Date.now() - lastDurable >= 1000
    checkpoint.save(durable)
    if (durable) lastDurable = Date.now()
  }
  const checkpointTimer = checkpoint ? setInterval(saveCheckpoint, options.checkpointIntervalMs ?? 50) : undefined
  const progressTimer = options.onProgress
    ? setInterval(() => options.onProgress?.(progress()), options.progressIntervalMs ?? 250)
    : undefined
  const limit = new RateLimit(options.rate ?? 0)
  const batchLimit = options.batchRate === undefined ? limit : new RateLimit(options.batchRate)
  let batching = false
  let handed = 0
  const signal = options.signal

  try {
    for await (const item of positioned(typeof source === 'function' ? source() : source)) {
      if (signal?.aborted) break
      const parsed = parse(item)
      summary.records++
      if ('invalid' in parsed) {
        if (!twoPass) invalidFound(parsed.invalid)
        continue
      }
      summary.valid++
      if (checkpoint?.has(parsed.position)) {
        summary.alreadyImported++
        continue
      }
      await delivery.below(maxInFlight, signal)
      if (summary.failed.length >= maxFailures) {
        summary.stopped = 'too_many_failures'
        break
      }
      // Whether the service takes batches: learnt from its first answers, looked up now and then.
      if (!batching && (handed++ & 63) === 0) batching = tracker.stats().batching
      await (batching ? batchLimit : limit).take(signal)
      if (signal?.aborted) break
      if (tracker.closed) {
        summary.stopped = 'tracker_closed'
        break
      }
      delivery.send(parsed.position, parsed.record.direction, parsed.record.message)
    }
    const stopWait = options.drainTimeoutMs ?? 15_000
    if (!summary.stopped && !signal?.aborted) await delivery.drain(Number.POSITIVE_INFINITY, signal)
    // A stop (now, or during the wait above) bounds the wait for acknowledgements.
    if (signal?.aborted) summary.stopped ??= 'aborted'
    if (summary.stopped) await delivery.drain(stopWait)
  } finally {
    delivery.detach()
    if (checkpointTimer) clearInterval(checkpointTimer)
    if (progressTimer) clearInterval(progressTimer)
    checkpoint?.save()
  }
  options.onProgress?.(progress())
  summary.complete =
    !summary.stopped && summary.failed.length === 0 && summary.unconfirmed === 0 && delivery.outstanding === 0
  return finish()
}

/** Numbers the items: a {@link SourceLine}'s line, else the 1-based index. Positions must increase (they key the checkpoint). */
async function* positioned(source: RecordSource): AsyncGenerator<{ position: number; data: unknown; error?: string }> {
  let index = 0
  let last = 0
  for await (const item of source as AsyncIterable<unknown>) {
    index++
    const line = item instanceof SourceLine ? item : undefined
    const position = line ? line.line : index
    if (!Number.isInteger(position) || position <= last)
      throw new ConfigError(
        `source positions must increase: got ${position} after ${last} (a SourceLine's line, or the item's index)`,
      )
    last = position
    yield line ? { position, data: line.data, error: line.error } : { position, data: item }
  }
}
