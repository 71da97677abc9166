import type { RecordInfo } from './tracker-types'

/**
 * Counts records lost (failed, dropped, abandoned at close) for `flush()`'s `delivered`: the total
 * since the start, and since the previous flush.
 */
export class LossCount {
  total = 0
  sinceFlush = 0

  add(n = 1): void {
    this.total += n
    this.sinceFlush += n
  }

  /** The losses since the previous flush, and a new period starts. */
  takeSinceFlush(): number {
    const n = this.sinceFlush
    this.sinceFlush = 0
    return n
  }
}

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
