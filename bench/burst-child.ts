/**
 * One side of the burst benchmark, in a fresh process so peak RSS is its own: 21 000 records
 * from 10 callers, no pacing, into a LAN sink, by a default tracker or by a raw undici client.
 * argv: <tracker|raw> <sink url>. Sends { delivered, ms, rssPeakMb, rssBeforeMb } to the parent.
 */
import { createTracker } from '@convotrack/core'
import { Pool } from 'undici'
import { message, trackPath } from './sink'

const [, , who, url] = process.argv as [string, string, 'tracker' | 'raw', string]
const N = 21_000
const CALLERS = 10
const before = process.memoryUsage().rss
let peak = before
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss)
}, 5)
const t0 = performance.now()
let delivered = 0
if (who === 'tracker') {
  const tracker = createTracker({ apiKey: 'bench-key', baseUrl: url, onError: () => {} })
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, c) => {
      for (let i = 0; i < N / CALLERS; i++) tracker.universal.logIncoming(message(c * 100_000 + i))
    }),
  )
  peak = Math.max(peak, process.memoryUsage().rss)
  const r = await tracker.flush(120_000)
  delivered = r.sent
  await tracker.close()
} else {
  // The raw client: every record posted at once over 128 keep-alive sockets (unbounded would exhaust file descriptors here), no retries.
  const pool = new Pool(url, { connections: 128, keepAliveTimeout: 30_000 })
  const pending: Promise<void>[] = []
  for (let c = 0; c < CALLERS; c++)
    for (let i = 0; i < N / CALLERS; i++)
      pending.push(
        pool
          .request({
            path: trackPath,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(message(c * 100_000 + i)),
          })
          .then(async (res) => {
            await res.body.dump()
            if (res.statusCode === 200) delivered++
          })
          .catch(() => {}),
      )
  peak = Math.max(peak, process.memoryUsage().rss)
  await Promise.all(pending)
  await pool.close()
}
const ms = performance.now() - t0
clearInterval(sampler)
peak = Math.max(peak, process.memoryUsage().rss)
process.send?.({
  delivered,
  ms: Math.round(ms),
  rssPeakMb: +(peak / 2 ** 20).toFixed(1),
  rssBeforeMb: +(before / 2 ** 20).toFixed(1),
})
process.exit(0)
