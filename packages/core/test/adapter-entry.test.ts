import { type ConvotrackError, createTracker, type SerializedRecord } from '@convotrack/core'
import {
  currentTurn,
  flushForLambda,
  heldTurn,
  holdTurn,
  holdWork,
  reportError,
  trackSerialized,
  useSink,
  withLambdaFlush,
} from '@convotrack/core/adapter'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

// The adapter surface (`@convotrack/core/adapter`) against a real HTTP sink: the hooks adapters
// use, the record transport option, and the one Lambda flush helper.

let sink: Sink
beforeEach(async () => {
  sink = await startSink()
})
afterEach(async () => {
  await sink.close()
})

/** A Lambda context with this much time left (the one thing that cannot run here). */
const lambdaContext = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs })

describe('@convotrack/core/adapter', () => {
  it('holdTurn / heldTurn / holdWork / currentTurn / trackSerialized / reportError work as the old methods did', async () => {
    const errors: ConvotrackError[] = []
    const tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, onError: (e) => errors.push(e) })
    let released: Promise<unknown> = Promise.resolve()
    tracker.withTurn(() => {
      tracker.setNotHandled()
      const held = holdTurn(tracker)
      expect(heldTurn(tracker)).toBe(held)
      expect(currentTurn(tracker)?.notHandled).toBe(true)
      held.hold(() => tracker.universal.logIncoming({ text: 'held', userId: 'u1' }), 'u1')
      released = new Promise((r) => setImmediate(r)).then(() => held.end())
    })
    holdWork(
      tracker,
      released.then(() => tracker.universal.logOutgoing({ text: 'after lookup', userId: 'u1' })),
    )
    expect(
      trackSerialized(tracker, {
        platform: 'universal',
        type: 'incoming',
        userId: 'u2',
        v: '11.1.0-rest',
        body: '{"text":"pre-serialized","userId":"u2"}',
      }),
    ).toBe(true)
    reportError(tracker, new Error('adapter trouble'))
    expect(await tracker.close()).toMatchObject({ delivered: true, sent: 3 })
    expect(sink.records.map((r) => r.body.text).sort()).toEqual(['after lookup', 'held', 'pre-serialized'])
    expect(sink.records.find((r) => r.body.text === 'held')?.body.intent).toEqual({ name: 'NotHandled' })
    expect(errors.map((e) => [e.code, e.message])).toEqual([['adapter', 'adapter trouble']])
  })

  it('a record transport (option or useSink) takes records instead of the service; a throwing one is a failed record, not the bot’s problem', async () => {
    const lines: SerializedRecord[] = []
    const errors: ConvotrackError[] = []
    const tracker = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      transport: { send: (r) => lines.push(r) },
      onError: (e) => errors.push(e),
    })
    expect(tracker.universal.logIncoming({ text: 'to the log', userId: 'u1' })).toBe(true)
    expect(lines).toEqual([
      {
        platform: 'universal',
        type: 'incoming',
        userId: 'u1',
        v: '11.1.0-rest',
        body: '{"text":"to the log","userId":"u1"}',
      },
    ])
    useSink(tracker, {
      send: () => {
        throw new Error('disk full')
      },
    })
    expect(() => tracker.universal.logIncoming({ text: 'lost', userId: 'u1' })).not.toThrow()
    expect(tracker.stats().failed).toBe(1)
    expect(errors.map((e) => e.message)).toEqual(['disk full'])
    useSink(tracker, undefined) // back to the service
    tracker.universal.logIncoming({ text: 'to the service', userId: 'u1' })
    expect(await tracker.close()).toMatchObject({ sent: 1, failed: 1 })
    expect(sink.records.map((r) => r.body.text)).toEqual(['to the service'])
  })

  it('flushForLambda: waits only in Lambda (by default), within the remaining time minus the margin', async () => {
    const tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    const waits: number[] = []
    const probe = {
      // The budget flushForLambda gives is recorded (the property); the delivery itself waits with
      // a hang-sized budget, so a loaded machine's slow loopback cannot turn it into a timeout.
      flush: async (ms?: number) => {
        waits.push(ms ?? -1)
        return tracker.flush(60_000)
      },
      reportError: (e: unknown) => tracker.reportError(e),
    }
    tracker.universal.logIncoming({ text: 'a', userId: 'u1' })
    expect(await flushForLambda(probe, undefined)).toBeUndefined() // not in Lambda: no wait
    expect(await flushForLambda(probe, lambdaContext(2_000), { flushTimeoutMs: 5_000 })).toMatchObject({
      delivered: true,
    })
    expect(await flushForLambda(probe, lambdaContext(2_000), { flushTimeoutMs: 800 })).toMatchObject({ sent: 1 })
    expect(await flushForLambda(probe, undefined, { flush: true, flushTimeoutMs: 100 })).toMatchObject({ sent: 1 })
    expect(await flushForLambda(probe, lambdaContext(2_000), { flush: false })).toBeUndefined()
    expect(waits).toEqual([1_500, 800, 100])
    await tracker.close()
  })

  it('withLambdaFlush: the handler’s answer or error passes unchanged, after the flush; a failing flush is reported', async () => {
    const tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    const ok = withLambdaFlush(async (_event: unknown, _ctx: unknown) => {
      tracker.universal.logIncoming({ text: 'in lambda', userId: 'u1' })
      return 'answer'
    }, tracker)
    expect(await ok({}, lambdaContext(3_000))).toBe('answer')
    expect(sink.records.map((r) => r.body.text)).toEqual(['in lambda']) // delivered before it returned
    const failing = withLambdaFlush(async (_event: unknown, _ctx: unknown) => {
      throw new Error('handler broke')
    }, tracker)
    await expect(failing({}, lambdaContext(3_000))).rejects.toThrow('handler broke')
    const reported: unknown[] = []
    const broken = withLambdaFlush(async (_event: unknown, _ctx: unknown) => 'still answers', {
      flush: () => Promise.reject(new Error('flush broke')),
      reportError: (e) => reported.push(e),
    })
    expect(await broken({}, lambdaContext(3_000))).toBe('still answers')
    expect(reported).toHaveLength(1)
    await tracker.close()
  })
})
