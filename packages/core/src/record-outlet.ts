import type { RecordTransport } from './tracker-types'
import type { RecordMeta } from './transport-types'
import type { ApiVersion } from './types'

/**
 * Where the tracker hands a serialized record: the HTTP transport (`transport.ts`), or a
 * {@link RecordTransport} of the user's or an adapter's (log lines). One interface, so the
 * tracker's hot path has no "is there a sink?" branches.
 */
export interface RecordOutlet {
  /** True when a new record would be dropped: checked before serializing it. */
  readonly full: boolean
  /** Takes one record; false when it has no room (the caller counts the drop). */
  enqueue(path: string, v: ApiVersion, meta: RecordMeta): boolean
}

/**
 * A {@link RecordTransport} as an outlet: never full. A throwing `send` is the record's failure
 * (reported and counted by `failed`), not a full queue, and never reaches the bot.
 */
export class TransportOutlet implements RecordOutlet {
  readonly full = false

  constructor(
    private readonly transport: RecordTransport,
    private readonly failed: (error: unknown, meta: RecordMeta) => void,
  ) {}

  enqueue(_path: string, v: ApiVersion, meta: RecordMeta): boolean {
    try {
      this.transport.send({ platform: meta.platform, type: meta.type, userId: meta.userId, v, body: meta.body })
      meta.fate?.({ status: 'sent' })
      return true
    } catch (error) {
      this.failed(error, meta)
      return true
    }
  }
}
