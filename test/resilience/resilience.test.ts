/**
 * Keeps the resilience harness honest in CI: one adapter (the universal Express bot) through
 * the same harness as `test/resilience/run.ts`, shorter, against the same misbehaving service,
 * plus two self-tests showing the harness does see a lost record and an unhandled rejection.
 */
import { describe, expect, it } from 'vitest'
import { ISSUE_FAULTS } from './fault-server'
import { DEFAULT_OPTIONS, runAdapter, type SuiteOptions } from './harness'
import { goalsMissed } from './report'

const short: SuiteOptions = {
  ...DEFAULT_OPTIONS,
  ratePerSec: { universal: 300 },
  durationMs: 3_000,
  downMs: 1_500,
  warmupMessages: 60,
  drop: { maxQueueSize: 200, messages: 150 },
  flushTimeoutMs: 30_000,
  // Hang detectors (the suite runs beside the others on a 2-core machine, maybe under load):
  // a late reply is slow, not lost; the child is killed only when it hangs.
  replyTimeoutMs: 30_000,
  childTimeoutMs: 110_000,
}

// Above the child's own hang detector, so a hung child is reported by the harness (with its
// stderr) rather than cut off by vitest: the examples project's 60 s default is below it, and the
// first test took 35 s of those 60 beside three CPU burners (issue 30's proof, run 1).
describe('resilience harness (universal Express bot)', { timeout: short.childTimeoutMs + 60_000 }, () => {
  it('delivers every record once after an outage and faults, without crashing, and counts drops exactly', async () => {
    const r = await runAdapter('universal', short)
    const c = r.child
    expect(r.crashed, r.stderrTail).toBe(false)
    expect(r.unhandledRejections + r.uncaughtExceptions).toBe(0)
    expect(c).toBeDefined()
    if (!c) return
    // 300/s for 3 s: 900 messages, each an incoming and an outgoing record.
    expect(c.tracked.messages).toBe(900)
    expect(c.tracked.replied).toBe(900)
    expect(r.logged).toBe(1800)
    // The service really misbehaved, and the tracker still got everything through, once.
    expect(r.server.error500 + r.server.error429 + r.server.reset).toBeGreaterThan(0)
    expect(c.atLoadEnd.retried).toBeGreaterThan(0)
    expect(r.delivered).toBe(1800)
    expect(r.duplicates).toBe(0)
    expect(c.flush.delivered).toBe(true)
    expect(c.afterFlush.failed).toBe(0)
    // 150 messages = 300 records into a queue of 200 while the service is down: 100 dropped,
    // and every count of them agrees.
    expect(c.drop).toMatchObject({ logged: 300, pending: 200, queueFull: 100, droppedEvents: 100, onErrorDropped: 100 })
    expect(c.drop.exact).toBe(true)
    expect(goalsMissed(r)).toEqual([])
  })

  it('reports records the service swallowed as not delivered', async () => {
    const r = await runAdapter('universal', {
      ...short,
      durationMs: 1_000,
      downMs: 300,
      faults: { ...ISSUE_FAULTS, blackhole: 0.05 },
    })
    expect(r.crashed, r.stderrTail).toBe(false)
    expect(r.logged).toBe(600)
    expect(r.delivered).toBeLessThan(r.logged)
    expect(goalsMissed(r).join(' ')).toMatch(/delivered \d+\/600/)
  })

  it('sees an unhandled rejection as a crash under Node’s default handling', async () => {
    const r = await runAdapter('universal', { ...short, durationMs: 1_000, injectUnhandledRejectionAtMs: 200 })
    expect(r.crashed).toBe(true)
    expect(r.exitCode).not.toBe(0)
    expect(r.unhandledRejections).toBe(1)
    expect(r.stderrTail).toContain('injected by the suite')
    expect(goalsMissed(r)[0]).toMatch(/crashed/)
  })
})
