import { type ConvotrackError, createTracker, type HookedRecord, type Tracker } from '@convotrack/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

let sink: Sink
let tracker: Tracker
beforeEach(async () => {
  sink = await startSink()
})
afterEach(async () => {
  await tracker?.close(2_000)
  await sink.close()
})

describe('addRecordHook', () => {
  it('sees every record after serialization; a returned body replaces it; redact still applies after it', async () => {
    const seen: HookedRecord[] = []
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      redact: (body) => ({ ...body, text: String(body.text).replace(/\d/g, '#') }),
    })
    tracker.addRecordHook((r) => {
      seen.push(r)
      return r.type === 'outgoing' ? { ...r.body, platformJson: { traceId: 'abc', n: '42' } } : undefined
    })
    tracker.universal.logIncoming({ text: 'hi 1', userId: 'u1', conversationId: 'c1' }, { intent: { name: 'greet' } })
    tracker.universal.logOutgoing({ text: 'hello 2', userId: 'u1' })
    const got = await sink.waitFor(2)
    expect(seen.map((r) => [r.platform, r.type, r.userId, r.conversation, r.body.text])).toEqual([
      ['universal', 'incoming', 'u1', 'c1', 'hi 1'],
      ['universal', 'outgoing', 'u1', undefined, 'hello 2'],
    ])
    expect(seen[0]?.body.intent).toEqual({ name: 'greet' })
    const bodies = got.map((r) => r.body)
    expect(bodies[0]).toEqual({ text: 'hi #', userId: 'u1', conversationId: 'c1', intent: { name: 'greet' } })
    expect(bodies[1]).toEqual({ text: 'hello #', userId: 'u1', platformJson: { traceId: 'abc', n: '42' } })
  })

  it('a throwing hook is reported and the record goes out unchanged; the remover stops the hook', async () => {
    const errors: ConvotrackError[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, onError: (e) => errors.push(e) })
    let calls = 0
    const remove = tracker.addRecordHook(() => {
      calls++
      throw new Error('boom')
    })
    expect(tracker.universal.logIncoming({ text: 'a', userId: 'u1' })).toBe(true)
    remove()
    tracker.universal.logIncoming({ text: 'b', userId: 'u1' })
    const got = await sink.waitFor(2)
    expect(got.map((r) => r.body.text)).toEqual(['a', 'b'])
    expect(calls).toBe(1)
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      ['record_hook', 'a record hook threw; the record goes out unchanged: boom'],
    ])
  })

  it('refuses a hook that is not a function, naming the rule', () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    expect(() => tracker.addRecordHook('x' as never)).toThrow(/addRecordHook needs a function/)
  })
})
