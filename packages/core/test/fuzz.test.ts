import { createTracker, InvalidRecordError, type Tracker } from '@convotrack/core'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seeded } from '../../../test/support/fuzz-seed'
import { type Sink, startSink } from '../../../test/support/sink-server'

// Random, truncated, wrongly typed, huge, deeply nested and circular inputs to every tracking
// entry: each call either queues a record or throws InvalidRecordError. Nothing else, no hang.

let sink: Sink
let tracker: Tracker
beforeAll(async () => {
  sink = await startSink()
  tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, maxQueueSize: 1_000_000, strict: true })
})
afterAll(async () => {
  await tracker.close(5_000)
  await sink.close()
})

const deep = (depth: number): unknown => (depth === 0 ? 'leaf' : { nested: deep(depth - 1) })
const circular = () => {
  const o: Record<string, unknown> = { text: 'x', userId: 'u' }
  o.platformJson = { back: o }
  return o
}

/** Anything: JSON-ish values, wrong types, huge strings, deep nesting, cycles, BigInt, functions. */
const anything: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.string({ maxLength: 100_000, size: 'max' }).map((s) => ({ text: s, userId: 'u' })),
  fc.integer({ min: 1, max: 2_000 }).map(deep),
  fc.constant(circular()),
  fc.bigInt().map((n) => ({ text: 'x', userId: 'u', platformJson: { n } })),
  fc.constant(() => 0),
  fc.constant(Symbol('s')),
)

/** A valid record with one field replaced by something random. */
function mutate<T extends Record<string, unknown>>(base: T): fc.Arbitrary<unknown> {
  const keys = Object.keys(base)
  return fc
    .record({ key: fc.constantFrom(...keys, 'extra'), value: anything })
    .map(({ key, value }) => ({ ...base, [key]: value }))
}

const universal = {
  text: 'hi',
  userId: 'u1',
  intent: { name: 'x', confidence: 0.5 },
  buttons: [{ id: 'a', label: 'b', value: 'c' }],
}
const slack = { team: { id: 'T' }, bot: { id: 'B' }, message: { type: 'message', channel: 'C', user: 'U', text: 'x' } }
const kikIn = { username: 'b', message: { type: 'text', from: 'a', body: 'x' } }
const alexaEvent = {
  version: '1.0',
  request: { type: 'LaunchRequest', requestId: 'r', timestamp: 't' },
  session: { new: true, sessionId: 's', application: { applicationId: 'a' }, user: { userId: 'u' } },
}
const messengerIn = {
  object: 'page',
  entry: [
    {
      id: 'P',
      time: 1,
      messaging: [{ sender: { id: 'U' }, recipient: { id: 'P' }, timestamp: 1, message: { text: 'x' } }],
    },
  ],
}
const messengerOut = { json: { recipient: { id: 'U' }, message: { text: 'x' } } }
const dm = {
  event: {
    type: 'message_create',
    message_create: { target: { recipient_id: 'U' }, sender_id: 'B', message_data: { text: 'x' } },
  },
}
const event = { type: 'revenueEvent', name: 'buy', userId: 'u', amount: 3 }

const entries: Array<[string, fc.Arbitrary<unknown>, (input: unknown) => unknown]> = [
  ['universal.logIncoming', fc.oneof(anything, mutate(universal)), (i) => tracker.universal.logIncoming(i as never)],
  ['sms.logOutgoing', fc.oneof(anything, mutate(universal)), (i) => tracker.sms.logOutgoing(i as never)],
  ['twitter.logIncoming', fc.oneof(anything, mutate(dm)), (i) => tracker.twitter.logIncoming(i as never)],
  ['twitter.logOutgoing', fc.oneof(anything, mutate(dm)), (i) => tracker.twitter.logOutgoing(i as never)],
  ['messenger.logIncoming', fc.oneof(anything, mutate(messengerIn)), (i) => tracker.messenger.logIncoming(i as never)],
  [
    'messenger.logOutgoing',
    fc.oneof(anything, mutate(messengerOut)),
    (i) => tracker.messenger.logOutgoing(i as never, i as never),
  ],
  ['slack.logIncoming', fc.oneof(anything, mutate(slack)), (i) => tracker.slack.logIncoming(i as never)],
  ['kik.logIncoming', fc.oneof(anything, mutate(kikIn)), (i) => tracker.kik.logIncoming(i as never)],
  ['alexa.logIncoming', fc.oneof(anything, mutate(alexaEvent)), (i) => tracker.alexa.logIncoming(i as never, i)],
  [
    'alexa.logOutgoing',
    fc.oneof(anything, mutate(alexaEvent)),
    (i) => tracker.alexa.logOutgoing(i as never, i as never),
  ],
  ['logEvent', fc.oneof(anything, mutate(event)), (i) => tracker.logEvent(i as never)],
  ['setOutgoingIntent', anything, (i) => tracker.withTurn(() => tracker.setOutgoingIntent(i as never))],
  ['setUserMetadata', anything, (i) => tracker.withTurn(() => tracker.setUserMetadata(i as never))],
]

describe('every entry takes any input: a queued record or InvalidRecordError', () => {
  it.each(entries)('%s', (_name, arb, call) => {
    fc.assert(
      fc.property(arb, (input) => {
        try {
          const out = call(input)
          expect(out === undefined || typeof out === 'boolean').toBe(true)
        } catch (error) {
          if (!(error instanceof InvalidRecordError)) throw error
          expect(error.path).toEqual(expect.any(String))
          expect(error.message.length).toBeGreaterThan(0)
        }
      }),
      seeded({ numRuns: 200 }),
    )
  })

  // Node 26's JSON.stringify serializes 200 000 levels without a RangeError: there is no stack
  // overflow to turn into a clear error (the tracking service's nesting limit refuses the record).
  let deep: Record<string, unknown> = { text: 'x', userId: 'u' }
  for (let i = 0; i < 200_000; i++) deep = { inner: deep }
  const overflows = (() => {
    try {
      JSON.stringify(deep)
      return false
    } catch {
      return true
    }
  })()

  it.skipIf(!overflows)('nesting deeper than the stack is a clear error, not a RangeError', () => {
    const o = deep
    expect(() => tracker.universal.logIncoming({ text: 'x', userId: 'u', platformJson: o })).toThrow(InvalidRecordError)
    expect(() => tracker.universal.logIncoming({ text: 'x', userId: 'u', platformJson: o })).toThrow(
      /nested too deeply/,
    )
  })

  it('what was queued is delivered, and nothing crashed the process', async () => {
    const result = await tracker.flush(60_000)
    expect(result.failed).toBe(0)
    expect(result.pending).toBe(0)
    expect(sink.records.length).toBe(result.sent)
    expect(sink.records.every((r) => r.body !== undefined)).toBe(true)
  })
})
