import type { ConvotrackError } from './errors'

/**
 * The default `onError`: at most one line per error code per window (10 s), with a count of the
 * ones held back, so a down service or a full queue never floods the bot's log.
 */
export class WarnLimiter {
  private readonly seen = new Map<string, { at: number; suppressed: number }>()

  constructor(
    private readonly logger: Pick<Console, 'warn'>,
    private readonly windowMs = 10_000,
  ) {}

  warn(err: ConvotrackError): void {
    const now = Date.now()
    const seen = this.seen.get(err.code)
    if (seen && now - seen.at < this.windowMs) {
      seen.suppressed++
      return
    }
    const more = seen?.suppressed ? ` (+${seen.suppressed} similar)` : ''
    this.seen.set(err.code, { at: now, suppressed: 0 })
    this.logger.warn(`[convotrack] ${err.name} ${err.code}: ${err.message}${more}`)
  }
}
