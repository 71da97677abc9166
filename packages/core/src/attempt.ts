import type { Client, Dispatcher } from 'undici'
import type { Timed } from './deadlines'
import type { Shipment } from './transport-types'

/** Most bytes of a batch answer read (its results: 500 small objects). */
const MAX_RESULTS_BYTES = 4 * 1024 * 1024
/** Most bytes of an error answer read (errors quote its first 500 characters). */
const MAX_ERROR_BYTES = 4 * 1024

/** The cause of an attempt cut by its deadline (`timedOut` says so too). */
export class DeadlineExceeded extends Error {
  override name = 'TimeoutError'
}

/** Whoever sent the attempt: told once, when it ends. */
export interface AttemptOwner {
  attemptEnded(attempt: Attempt, error: unknown): void
  /** The attempt's deadline passed before it had a connection: cut its connection. */
  cut(attempt: Attempt, reason: Error): void
}

/**
 * One attempt of one shipment, and the undici dispatch handler that reads its answer. It uses
 * undici's raw-headers handler interface (the one its HTTP/1 client calls; every undici 6 and 7
 * dispatcher accepts it): no response stream, no promise, and only the two headers we read
 * (`Retry-After`, `Convotrack-Batch`) are decoded. The body is read only for a batch's results
 * or an error's text. Ends exactly once, through `owner.attemptEnded`.
 */
export class Attempt implements Timed {
  deadlineAt = 0
  /** When it left, by the clock's monotonic reading (latency for the limiter: loopback answers take < 1 ms). */
  startedAt = 0
  status = 0
  timedOut = false
  retryAfter: string | undefined = undefined
  batchHeader: string | undefined = undefined
  /** The connection it runs on, when the transport owns its connections. */
  client: Client | undefined = undefined
  /** It went over a kept-alive socket of an earlier request (see `Connections.reuses`). */
  reused = false
  private abort: ((err?: Error) => void) | undefined = undefined
  private chunks: Buffer[] | undefined = undefined
  private bodyBytes = 0
  private maxBodyBytes = 0
  private done = false

  constructor(
    private readonly owner: AttemptOwner,
    readonly shipment: Shipment,
    /** Every slot was taken when it left (more concurrency could have sent more). */
    readonly saturated: boolean,
    /** Read `Convotrack-Batch` from the answer. */
    private readonly wantsBatchHeader: boolean,
  ) {}

  /** The answer's body as text ('' when it was not read). */
  text(): string {
    const chunks = this.chunks
    if (!chunks || chunks.length === 0) return ''
    return (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8')
  }

  expire(): void {
    if (this.done) return
    this.timedOut = true
    if (this.abort) this.abort(new DeadlineExceeded('deadline passed'))
    else if (this.client) this.owner.cut(this, new DeadlineExceeded('deadline passed before connecting'))
    // A dispatcher of the user's: aborted as soon as it connects (onConnect).
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.timedOut) abort(new DeadlineExceeded('deadline passed before connecting'))
    else this.abort = abort
  }

  onHeaders(status: number, raw: Buffer[] | string[] | null): boolean {
    this.status = status
    const limited = status === 429 || status === 503
    if ((this.wantsBatchHeader || limited) && raw) {
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i] as Buffer | string
        if (name.length === 11 && limited && lower(name) === 'retry-after') this.retryAfter ??= String(raw[i + 1])
        else if (name.length === 16 && this.wantsBatchHeader && lower(name) === 'convotrack-batch')
          this.batchHeader ??= String(raw[i + 1])
      }
    }
    const ok = status >= 200 && status < 300
    if (this.shipment.batch || !ok) {
      this.chunks = []
      this.maxBodyBytes = ok ? MAX_RESULTS_BYTES : MAX_ERROR_BYTES
    }
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.chunks && this.bodyBytes < this.maxBodyBytes) {
      this.chunks.push(chunk)
      this.bodyBytes += chunk.length
    }
    return true
  }

  onComplete(): void {
    this.end(undefined)
  }

  onError(error: Error): void {
    // Never inside undici's own loop: a connection error fails every request queued on the
    // client at once, and what `end` sets off (the next request on the same connection) must
    // not join that queue while undici empties it. Errors are rare; the microtask costs nothing.
    queueMicrotask(() => this.end(error))
  }

  /** Sends it through `dispatcher` (the connection taken for it, or the user's dispatcher). */
  dispatch(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): void {
    try {
      dispatcher.dispatch(options, this as unknown as Dispatcher.DispatchHandler)
    } catch (error) {
      this.onError(error as Error)
    }
  }

  private end(error: Error | undefined): void {
    if (this.done) return
    this.done = true
    this.abort = undefined
    this.owner.attemptEnded(this, error)
  }
}

function lower(name: Buffer | string): string {
  return (typeof name === 'string' ? name : name.toString('latin1')).toLowerCase()
}
