import type { RecordInfo } from './tracker-types'

/** The record fields handed to `onError` and the events: a fresh object, the body only when asked. */
export function info(meta: RecordInfo & { body?: string }, withBody: true): RecordInfo & { body: string }
export function info(meta: RecordInfo, withBody: false): RecordInfo
export function info(meta: RecordInfo & { body?: string }, withBody: boolean): RecordInfo & { body?: string } {
  const out: RecordInfo & { body?: string } = { platform: meta.platform, type: meta.type, userId: meta.userId }
  if (withBody) out.body = meta.body ?? ''
  return out
}

/** Masks the `apiKey` query value for logs. */
export function maskApiKey(pathOrUrl: string): string {
  return pathOrUrl.replace(/([?&]apiKey=)[^&]*/g, '$1***')
}

/**
 * Queue-full drops are reported in summaries, not one error per record: the first drop at once,
 * then one report per second with the count held back (and on `flush()`), so a full queue costs
 * a counter increment per call.
 */
export class DropSummary {
  private held = 0
  private first: RecordInfo | undefined
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly report: (count: number, record: RecordInfo | undefined) => void,
    private readonly windowMs = 1_000,
  ) {}

  /** One more drop; `record` is built only for the first of a window. */
  add(platform: RecordInfo['platform'], type: RecordInfo['type'], userId: string | undefined): void {
    if (this.timer) {
      if (this.held++ === 0) this.first = { platform, type, userId }
      return
    }
    this.report(1, { platform, type, userId })
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.flush()
    }, this.windowMs)
    this.timer.unref()
  }

  /** Reports what is held back now. */
  flush(): void {
    if (this.held === 0) return
    const n = this.held
    const first = this.first
    this.held = 0
    this.first = undefined
    this.report(n, first)
  }
}
