import { type AlexaTrackingOptions, alexaTracking } from '@convotrack/alexa'
import { createTracker, type Tracker } from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'
import { type Faults, type Sink, startSink } from '../../../test/support/sink-server'
import { instrumentedSkill, intentRequest, lambdaContext, launchRequest, untrackedSkill } from './fixtures'

// The skill's answer never depends on the tracking service: down, slow or failing, the skill
// answers in time with its own response. In Lambda the wait is bounded by flushTimeoutMs.

let sink: Sink
let tracker: Tracker

afterEach(async () => {
  await tracker.close(50)
  await sink.close()
})

const FLUSH_MS = 300

async function setup(faults: Faults, options: AlexaTrackingOptions = { flushTimeoutMs: FLUSH_MS }) {
  sink = await startSink(faults)
  tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: () => {} })
  return instrumentedSkill(alexaTracking(tracker, options)).create()
}

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now()
  const value = await p
  return { value, ms: performance.now() - t0 }
}

const scenarios: Array<[string, Faults, (s: Sink) => Promise<void>]> = [
  ['down (connection refused)', {}, (s) => s.down()],
  ['slow (answers after 5 s)', { latencyMs: 5_000 }, async () => {}],
  ['answering 500', { status: 500 }, async () => {}],
  ['resetting connections', { reset: 1 }, async () => {}],
]

describe.each(scenarios)('tracking service %s', (_name, faults, breakIt) => {
  it('in Lambda: the skill answers within the flush deadline, with its own response', async () => {
    const skill = await setup(faults)
    await breakIt(sink)
    const reference = untrackedSkill().create()
    for (const envelope of [
      launchRequest(),
      intentRequest('GetFactIntent', { planet: 'Mars' }),
      intentRequest('BoomIntent'),
    ]) {
      const want = await reference.invoke(structuredClone(envelope))
      const { value, ms } = await timed(skill.invoke(envelope, lambdaContext()))
      expect(value).toEqual(want)
      // Waited for delivery (bounded), then answered.
      expect(ms).toBeLessThan(FLUSH_MS + 700)
    }
  })

  it('outside Lambda: the skill answers at once (no waiting on the network at all)', async () => {
    const skill = await setup(faults)
    await breakIt(sink)
    const reference = untrackedSkill().create()
    const envelope = intentRequest('GetFactIntent', { planet: 'Jupiter' })
    const want = await reference.invoke(structuredClone(envelope))
    const { value, ms } = await timed(skill.invoke(envelope))
    expect(value).toEqual(want)
    expect(ms).toBeLessThan(250)
  })
})

describe('deadlines', () => {
  it('the default flush deadline is under 1 s', async () => {
    const skill = await setup({ latencyMs: 5_000 }, {})
    const { ms } = await timed(skill.invoke(launchRequest(), lambdaContext()))
    expect(ms).toBeGreaterThanOrEqual(700)
    expect(ms).toBeLessThan(1_000 + 300)
  })

  it('the wait stays inside the Lambda’s remaining time (kept 500 ms back)', async () => {
    const skill = await setup({ latencyMs: 5_000 }, { flushTimeoutMs: 5_000 })
    const { ms } = await timed(skill.invoke(launchRequest(), lambdaContext(600)))
    expect(ms).toBeLessThan(600)
  })

  it('a healthy service: records are delivered before the Lambda answer, and the wait is short', async () => {
    const skill = await setup({}, { flushTimeoutMs: 3_000 })
    const { ms } = await timed(skill.invoke(launchRequest(), lambdaContext()))
    expect(sink.records.map((r) => r.type).sort()).toEqual(['incoming', 'outgoing'])
    expect(ms).toBeLessThan(1_000) // answered on delivery, not at the deadline
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
    const { ms } = await timed(skill.invoke(launchRequest(), lambdaContext()))
    expect(ms).toBeLessThan(250)
  })
})
