/**
 * `collector.resumeIdle(now)` answers as of the `now` it was given, even while the timer's own
 * check is running: it waits for that check, then runs its own (a call without `now` joins it).
 * The store is a real SQLite store; only its `takeIdlePaused` is wrapped, to hold the first check
 * open and to record the time each check asked for.
 */
import { type Collector, SqliteRecordStore, startCollector } from '@convotrack/collector'
import { afterEach, expect, it } from 'vitest'

let collector: Collector | undefined
afterEach(async () => {
  await collector?.close()
})

it('resumeIdle(now) during a running check waits for it, then checks as of its own now', async () => {
  const store = new SqliteRecordStore(':memory:')
  const asked: number[] = []
  let release!: () => void
  const held = new Promise<void>((r) => {
    release = r
  })
  const take = store.takeIdlePaused.bind(store)
  store.takeIdlePaused = async (q) => {
    asked.push(q.idleBefore)
    if (asked.length === 1) await held
    return take(q)
  }
  collector = await startCollector({
    port: 0,
    store,
    handoff: { autoResumeMinutes: 1 },
    handoffCheckMs: 3_600_000,
    bots: [
      { name: 'shop', apiKey: 'shop-key', pauseWebhookUrl: 'http://127.0.0.1:9/pause', webhookSecret: 'x'.repeat(32) },
    ],
  })
  const running = collector.resumeIdle()
  const driven = collector.resumeIdle(5_000_000)
  // A call without now joins the running check: no third check.
  const joined = collector.resumeIdle()
  release()
  await Promise.all([running, driven, joined])
  expect(asked).toHaveLength(2)
  expect(asked[1]).toBe(5_000_000 - 60_000)
  expect(asked[0]).not.toBe(5_000_000 - 60_000)
})
