import { createTracker, lambdaFlushBudget, type Tracker } from '@convotrack/core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

let sink: Sink
let tracker: Tracker
let reported: string[]

beforeAll(async () => {
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
})
beforeEach(() => {
  sink.clear()
  reported = []
  tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, onError: (e) => reported.push(e.code) })
})
afterEach(async () => {
  await tracker.close(1000)
})

/** A lookup the test settles itself: no clock involved. */
function lookup(): { promise: Promise<void>; done: () => void } {
  let done!: () => void
  const promise = new Promise<void>((r) => {
    done = r
  })
  return { promise, done }
}

describe('a turn buffer (holdTurn)', () => {
  it('holds records until the turn ends, then logs them in order with the turn’s NotHandled and intent', async () => {
    await tracker.withTurn(async () => {
      const held = tracker.holdTurn()
      held.hold(() => tracker.universal.logIncoming({ text: 'hi', userId: 'u' }))
      expect(tracker.heldTurn()).toBe(held)
      await new Promise((r) => setImmediate(r)) // the handler goes on after an await
      // decided while handling, after the record was held
      tracker.setNotHandled()
      tracker.setOutgoingIntent({ name: 'greet' })
      tracker.heldTurn()?.hold(() => tracker.universal.logOutgoing({ text: 'hello', userId: 'u' }))
      expect(held.size).toBe(2)
      expect(tracker.stats().held).toBe(2)
      held.end()
      expect(tracker.heldTurn()).toBeUndefined()
    })
    await tracker.flush()
    expect(sink.records.map((r) => [r.type, r.body.intent])).toEqual([
      ['incoming', { name: 'NotHandled' }],
      ['outgoing', { name: 'greet' }],
    ])
  })

  it('release(key) lets one user’s records go first; a hold after end() goes straight through', async () => {
    const held = tracker.withTurn(() => tracker.holdTurn())
    held.hold(() => tracker.universal.logIncoming({ text: 'a', userId: 'ua' }), 'ua')
    held.hold(() => tracker.universal.logIncoming({ text: 'b', userId: 'ub' }), 'ub')
    held.release('ub')
    expect(held.size).toBe(1)
    held.end()
    held.hold(() => tracker.universal.logOutgoing({ text: 'late', userId: 'ua' }))
    await tracker.flush()
    expect(sink.records.map((r) => r.body.text)).toEqual(['b', 'a', 'late'])
  })

  it('flush() waits for a turn that ends within its timeout', async () => {
    const held = tracker.withTurn(() => tracker.holdTurn())
    held.hold(() => tracker.universal.logIncoming({ text: 'hi', userId: 'u' }))
    const flushed = tracker.flush(5000)
    setImmediate(() => held.end()) // the turn ends while flush() waits
    expect(await flushed).toMatchObject({ delivered: true, pending: 0, held: 0, sent: 1 })
  })

  it('what is still held at the flush deadline is reported in FlushResult.held', async () => {
    const held = tracker.withTurn(() => tracker.holdTurn())
    held.hold(() => tracker.universal.logIncoming({ text: 'hi', userId: 'u' }))
    expect(await tracker.flush(20)).toMatchObject({ delivered: false, held: 1 })
    held.end()
    expect(await tracker.flush()).toMatchObject({ delivered: true, held: 0, sent: 1 })
  })

  it('close(): records still held at its deadline are counted as dropped `closed` and reported', async () => {
    const held = tracker.withTurn(() => tracker.holdTurn())
    held.hold(() => tracker.universal.logIncoming({ text: 'hi', userId: 'u' }))
    held.hold(() => tracker.universal.logOutgoing({ text: 'hello', userId: 'u' }))
    const result = await tracker.close(20)
    expect(result).toMatchObject({ delivered: false, held: 2 })
    expect(tracker.stats()).toMatchObject({ held: 0, dropped: 2, droppedByReason: { closed: 2 } })
    expect(reported).toContain('closed_with_pending')
    held.end() // the turn ends after all: nothing is sent, nothing is thrown
    expect(sink.records).toHaveLength(0)
  })

  it('a held log that throws (an invalid record) is reported, never thrown at the code ending the turn', async () => {
    const held = tracker.withTurn(() => tracker.holdTurn())
    held.hold(() => tracker.universal.logIncoming({ text: 'no user' } as never))
    expect(() => held.end()).not.toThrow()
    expect(reported).toEqual(['invalid_record'])
  })
})

describe('work that will produce records (holdWork)', () => {
  it('flush() and close() wait for it, then for the records it handed over', async () => {
    const teamInfo = lookup()
    tracker.holdWork(teamInfo.promise.then(() => tracker.universal.logIncoming({ text: 'after lookup', userId: 'u' })))
    expect(tracker.stats().held).toBe(1)
    const closing = tracker.close(5000)
    teamInfo.done() // the lookup answers while close() waits
    expect(await closing).toMatchObject({ delivered: true, held: 0, sent: 1 })
    expect(sink.records.map((r) => r.body.text)).toEqual(['after lookup'])
  })

  it('a failing piece of work is not the tracker’s error: it just stops being waited for', async () => {
    tracker.holdWork(Promise.reject(new Error('lookup failed')))
    expect(await tracker.flush(1000)).toMatchObject({ delivered: true, held: 0 })
  })

  it('records it hands over after close() are counted as dropped `closed`, never thrown', async () => {
    let thrown: unknown
    const slow = lookup()
    const work = slow.promise.then(() => {
      try {
        tracker.universal.logIncoming({ text: 'too late', userId: 'u' })
      } catch (error) {
        thrown = error
      }
    })
    tracker.holdWork(work)
    expect(await tracker.close(10)).toMatchObject({ delivered: false, held: 1 })
    slow.done() // the lookup answers after close() gave up
    await work
    expect(thrown).toBeUndefined()
    expect(tracker.stats().droppedByReason.closed).toBe(1)
    expect(reported).toContain('dropped_closed')
  })
})

describe('lambdaFlushBudget', () => {
  it('is the timeout, cut to the remaining time minus the safety margin, never negative', () => {
    expect(lambdaFlushBudget(3000)).toBe(3000)
    expect(lambdaFlushBudget(3000, {})).toBe(3000)
    expect(lambdaFlushBudget(3000, { getRemainingTimeInMillis: () => 10_000 })).toBe(3000)
    expect(lambdaFlushBudget(3000, { getRemainingTimeInMillis: () => 1_000 })).toBe(500)
    expect(lambdaFlushBudget(3000, { getRemainingTimeInMillis: () => 100 })).toBe(0)
    expect(lambdaFlushBudget(3000, { getRemainingTimeInMillis: () => 1_000 }, 100)).toBe(900)
    expect(
      lambdaFlushBudget(3000, {
        getRemainingTimeInMillis: () => {
          throw new Error('no')
        },
      }),
    ).toBe(3000)
  })
})
