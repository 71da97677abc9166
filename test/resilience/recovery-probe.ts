/**
 * How long the tracker takes to deliver again after a short outage, with its DEFAULT retry
 * policy (the load runs cap the backoff at 2 s; this shows why). Records are logged while the
 * service is down; it comes back after `downMs`; we time the first delivery after that and the
 * end of the flush. Run once with one connection and once with the default eight: the wait
 * grows with the number of requests that failed at once, not with the outage's length.
 */
import { createTracker } from '@convotrack/core'
import { HEALTHY, startFaultServer } from './fault-server'

export interface RecoveryResult {
  concurrency: number
  records: number
  downMs: number
  /** ms from the service being back to the first record delivered. */
  firstDeliveryAfterUpMs: number
  /** ms from the service being back to everything delivered. */
  allDeliveredAfterUpMs: number
  delivered: number
  /** Longest wait the transport announced (`retry` event delay) while the service was down. */
  longestAnnouncedWaitMs: number
}

export async function probeRecovery(concurrency: number, downMs = 2_500, records = 200): Promise<RecoveryResult> {
  const server = await startFaultServer(HEALTHY, { down: true })
  const tracker = createTracker({ apiKey: 'probe-key', baseUrl: server.url, concurrency, onError: () => {} })
  let longest = 0
  let firstSent = 0
  tracker.on('retry', (_e, _r, delay) => {
    longest = Math.max(longest, delay)
  })
  tracker.on('sent', () => {
    if (!firstSent) firstSent = Date.now()
  })
  for (let i = 0; i < records; i++) tracker.universal.logIncoming({ text: `probe rzp-${i}`, userId: `u${i % 10}` })
  await new Promise((resolve) => setTimeout(resolve, downMs))
  await server.up()
  const upAt = Date.now()
  const flushed = await tracker.flush(120_000)
  const doneAt = Date.now()
  await tracker.close(1_000)
  await server.close()
  return {
    concurrency,
    records,
    downMs,
    firstDeliveryAfterUpMs: firstSent ? firstSent - upAt : -1,
    allDeliveredAfterUpMs: flushed.delivered ? doneAt - upAt : -1,
    delivered: server.delivered('rzp-').distinct,
    longestAnnouncedWaitMs: longest,
  }
}
