/**
 * Scale-bench records as ingest accepts them (validated as the batch route does), for the benches
 * that call the ingest code in-process (ingest-ab.ts, ingest-ab-pg.ts, ingest-pages.ts).
 */
import { validateRecord } from '../packages/collector/src/index'
import type { AcceptedRecord } from '../packages/collector/src/ingest/ingest'
import { type ScaleShape, scaleRecord } from './scale-records'

/**
 * A scale-bench record as accepted, with `sentAt`: when a collector tracking the bot live would
 * have received it (its own time; for a record that carries none, such as a Messenger answer,
 * the time the generator gives its conversation). The bulk seed stores it as the receive time.
 */
export type ScaleAccepted = AcceptedRecord & { sentAt: number }

/** Record `i` of `shape` for bot "bench", its idempotency key `keyPrefix` + i. */
export function acceptedScaleRecord(shape: ScaleShape, keyPrefix: string): (i: number) => ScaleAccepted {
  return (i) => {
    const r = scaleRecord(i, shape)
    const body = JSON.parse(r.body) as Record<string, unknown>
    validateRecord(r.platform as never, r.type, body, '11.1.0-rest')
    return {
      bot: 'bench',
      platform: r.platform as never,
      type: r.type,
      v: '11.1.0-rest',
      raw: r.body,
      body,
      idempotencyKey: `${keyPrefix}${i.toString(36)}`,
      sentAt: r.ts,
    }
  }
}
