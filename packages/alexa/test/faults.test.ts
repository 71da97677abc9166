import { type AlexaTrackingOptions, alexaTracking, DEFAULT_FLUSH_TIMEOUT_MS } from '@convotrack/alexa'
import { createTracker, type FlushResult, type Tracker } from '@convotrack/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type Faults, type Sink, startSink } from '../../../test/support/sink-server'
import { instrumentedSkill, intentRequest, lambdaContext, launchRequest, untrackedSkill } from './fixtures'

// The skill's answer never depends on the tracking service: down, slow or failing, the skill
// answers in time with its own response. In Lambda the wait is bounded by flushTimeoutMs: the
// tests read the budget the skill gave `tracker.flush` and that flush's result (core's flush
// keeping to its timeout is core's own test), never the wall clock.

let sink: Sink
let tracker: Tracker
/** Every wait for delivery the skill made: the budget it gave and what the flush found. */
let flushes: Array<{ budgetMs: number | undefined; result: Promise<FlushResult> }>

afterEach(async () => {
  vi.restoreAllMocks()
  await tracker.close(50)
  await sink.close()
})

const FLUSH_MS = 300

async function setup(faults: Faults, options: AlexaTrackingOptions = { flushTimeoutMs: FLUSH_MS }) {
  sink = await startSink(faults)
  tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: () => {} })
  flushes = []
  const flush = tracker.flush.bind(tracker)
  vi.spyOn(tracker, 'flush').mockImplementation((budgetMs?: number) => {
    const result = flush(budgetMs)
    flushes.push({ budgetMs, result })
    return result
  })
  return instrumentedSkill(alexaTracking(tracker, options)).create()
}

const scenarios: Array<[string, Faults, (s: Sink) => Promise<void>]> = [
  ['down (connection refused)', {}, (s) => s.down()],
  ['slow (answers after 5 s)', { latencyMs: 5_000 }, async () => {}],
  ['answering 500', { status: 500 }, async () => {}],
  ['resetting connections', { reset: 1 }, async () => {}],
]

describe.each(scenarios)('tracking service %s', (_name, faults, breakIt) => {
  it('in Lambda: the skill waits for delivery at most the flush deadline, then answers with its own response', async () => {
    const skill = await setup(faults)
    await breakIt(sink)
    const reference = untrackedSkill().create()
    for (const envelope of [
      launchRequest(),
      intentRequest('GetFactIntent', { planet: 'Mars' }),
      intentRequest('BoomIntent'),
    ]) {
      const want = await reference.invoke(structuredClone(envelope))
      flushes.length = 0
      expect(await skill.invoke(envelope, lambdaContext(7_000))).toEqual(want)
      // One bounded wait, and the answer only once it ended (undelivered: the service is broken).
      expect(flushes.map((f) => f.budgetMs)).toEqual([FLUSH_MS])
      expect((await flushes[0]?.result)?.delivered).toBe(false)
    }
  })

  it('outside Lambda: the skill answers at once (no waiting on the network at all)', async () => {
    const skill = await setup(faults)
    await breakIt(sink)
    const reference = untrackedSkill().create()
    const envelope = intentRequest('GetFactIntent', { planet: 'Jupiter' })
    const want = await reference.invoke(structuredClone(envelope))
    expect(await skill.invoke(envelope)).toEqual(want)
    expect(flushes).toEqual([])
  })
})

describe('deadlines', () => {
  it('the default flush deadline is under 1 s (800 ms)', async () => {
    const skill = await setup({ latencyMs: 5_000 }, {})
    await skill.invoke(launchRequest(), lambdaContext(7_000))
    expect(flushes.map((f) => f.budgetMs)).toEqual([DEFAULT_FLUSH_TIMEOUT_MS])
    expect(DEFAULT_FLUSH_TIMEOUT_MS).toBe(800)
    expect(await flushes[0]?.result).toMatchObject({ delivered: false }) // waited it out: the service is slow
  })

  it('the wait stays inside the Lambda’s remaining time (kept 500 ms back)', async () => {
    const skill = await setup({ latencyMs: 5_000 }, { flushTimeoutMs: 5_000 })
    await skill.invoke(launchRequest(), lambdaContext(600))
    expect(flushes.map((f) => f.budgetMs)).toEqual([100])
  })

  it('a healthy service: records are delivered before the Lambda answer, on delivery, not at the deadline', async () => {
    // A deadline far past the test's own timeout: answering at all proves it came on delivery.
    const skill = await setup({}, { flushTimeoutMs: 3_600_000 })
    await skill.invoke(launchRequest(), lambdaContext(4_000_000))
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
    expect(flushes.map((f) => f.budgetMs)).toEqual([3_600_000])
    expect(await flushes[0]?.result).toMatchObject({ delivered: true })
  })

  it('the service comes back: records held during the outage are delivered later', async () => {
    const skill = await setup({})
    await sink.down()
    await skill.invoke(launchRequest(), lambdaContext())
    expect(sink.records).toHaveLength(0)
    await sink.up()
    await tracker.flush(10_000)
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
  })

  it('flush: false never waits, even in Lambda', async () => {
    const skill = await setup({ latencyMs: 5_000 }, { flushTimeoutMs: 5_000, flush: false })
    await skill.invoke(launchRequest(), lambdaContext(7_000))
    expect(flushes).toEqual([])
  })
})
