import { createTracker, type RecordHandle, type RecordOutcome } from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'
import { DrivenClock } from './support/driven-clock'
import { type FakeService, startFakeService } from './support/fake-service'

// A record's fate: the handle a caller asks for with `onRecord` (its idempotency key, and a
// promise of what became of it), against a real local service.

let svc: FakeService | undefined
afterEach(async () => {
  await svc?.close()
  svc = undefined
})

function asking(): { handles: RecordHandle[]; onRecord: (h: RecordHandle) => void } {
  const handles: RecordHandle[] = []
  return { handles, onRecord: (h) => handles.push(h) }
}

const outcomes = (handles: RecordHandle[]): Promise<RecordOutcome[]> => Promise.all(handles.map((h) => h.outcome))

describe('record fate (onRecord)', () => {
  it('sent: the handle carries the key the service got as Idempotency-Key', async () => {
    svc = await startFakeService()
    const tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, batch: false })
    const a = asking()
    expect(tracker.universal.logIncoming({ text: 'hi', userId: 'u1' }, { onRecord: a.onRecord })).toBe(true)
    expect(a.handles).toHaveLength(1)
    const [h] = a.handles as [RecordHandle]
    expect(h).toMatchObject({ platform: 'universal', type: 'incoming', userId: 'u1', key: expect.stringMatching(/\./) })
    expect(await h.outcome).toEqual({ status: 'sent' })
    expect(svc.stored[0]?.key).toBe(h.key)
    await tracker.close()
  })

  it('sent in a batch, and refused in a batch: failed with the service’s reason', async () => {
    svc = await startFakeService({ batch: true })
    const tracker = createTracker({ apiKey: 'k', baseUrl: svc.url })
    tracker.universal.logIncoming({ text: 'discover', userId: 'u0' }) // the first answer advertises batches
    await tracker.flush()
    const a = asking()
    tracker.universal.logIncoming({ text: 'ok', userId: 'u1' }, { onRecord: a.onRecord })
    tracker.trackSerialized({
      platform: 'universal',
      type: 'incoming',
      userId: 'x',
      v: '11.1.0-rest',
      body: '{"text":1}',
    })
    tracker.generic.logIncoming({ text: 'ok too', userId: 'u2' }, { onRecord: a.onRecord })
    const [ok, okToo] = await outcomes(a.handles)
    expect([ok, okToo]).toEqual([{ status: 'sent' }, { status: 'sent' }])
    expect(svc.stored.filter((r) => r.key === a.handles[0]?.key)).toHaveLength(1)
    await tracker.close()
  })

  it('failed: a 400 from the service', async () => {
    svc = await startFakeService()
    const a = asking()
    // A record the service refuses (the fake service requires text); a redact that breaks it does it.
    const bad = createTracker({
      apiKey: 'k',
      baseUrl: svc.url,
      onError: () => {},
      redact: (body) => ({ ...body, text: 5 }),
    })
    bad.universal.logIncoming({ text: 'x', userId: 'u1' }, { onRecord: a.onRecord })
    const [o] = await outcomes(a.handles)
    expect(o).toMatchObject({ status: 'failed', error: { code: 'http_400' } })
    await bad.close()
  })

  it('dropped: invalid, ignored, redacted, queue full, closed; abandoned at close is failed', async () => {
    svc = await startFakeService()
    await svc.down()
    const tracker = createTracker({
      apiKey: 'k',
      baseUrl: svc.url,
      onError: () => {},
      ignoreUserIds: ['bot'],
      redact: (body) => (body.text === 'secret' ? null : body),
      maxQueueSize: 1,
      // The gate's reopening timer never fires unless the test moves this clock: the record
      // refused by the down service stays behind the gate, not in flight, when close() gives up.
      ...new DrivenClock().option,
    })
    const refused = new Promise((resolve) => tracker.once('retry', resolve)) // not events.once: it rejects on 'error'
    const a = asking()
    const on = { onRecord: a.onRecord }
    tracker.universal.logIncoming({ text: 'x', userId: 42 } as never, on)
    tracker.universal.logIncoming({ text: 'x', userId: 'bot' }, on)
    tracker.universal.logIncoming({ text: 'secret', userId: 'u1' }, on)
    tracker.universal.logIncoming({ text: 'kept', userId: 'u1' }, on) // queued: the service is down
    tracker.universal.logIncoming({ text: 'over', userId: 'u2' }, on) // the queue holds one
    tracker.logEvent(
      { type: 'customEvent', name: 'e', userId: 'u3' },
      { platform: 'nope' as never, onRecord: a.onRecord },
    )
    await refused // its connection was refused: behind the gate now
    await tracker.close(50)
    tracker.universal.logIncoming({ text: 'late', userId: 'u1' }, on)
    const got = await outcomes(a.handles)
    expect(got.map((o) => (o.status === 'dropped' ? `dropped ${o.reason}` : o.status))).toEqual([
      'dropped invalid',
      'dropped ignored',
      'dropped redacted',
      'failed', // abandoned at close
      'dropped queue_full',
      'dropped invalid',
      'dropped closed',
    ])
    expect(got[3]).toMatchObject({ error: { code: 'closed_with_pending' } })
    expect(a.handles.map((h) => h.key !== '')).toEqual([false, false, false, true, true, false, false])
  })

  it('a throwing onRecord does not break the call, and the record still goes', async () => {
    svc = await startFakeService()
    const errors: string[] = []
    const tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, onError: (e) => errors.push(e.message) })
    const queued = tracker.universal.logIncoming(
      { text: 'hi', userId: 'u1' },
      {
        onRecord: () => {
          throw new Error('callback broke')
        },
      },
    )
    expect(queued).toBe(true)
    expect(await tracker.close()).toMatchObject({ sent: 1 })
    expect(errors).toEqual(['callback broke'])
  })
})
