import { createTracker } from '@convotrack/core'
import { describe, expect, it } from 'vitest'
import { Ledger } from '../src/ledger'
import { startFakeService } from './support/fake-service'

describe('Ledger', () => {
  it('counts every fate once, and knows which are losses', () => {
    const l = new Ledger()
    l.sent(3)
    l.retried(2)
    l.failed()
    l.failed(2, true)
    l.dropped('queue_full', 4)
    l.dropped('redacted')
    l.ignored()
    l.invalid()
    l.abandoned(2, 'failed')
    l.abandoned(1, 'closed')
    expect(l.snapshot()).toEqual({
      sent: 3,
      retried: 2,
      failed: 5,
      refused: 2,
      dropped: 6,
      droppedByReason: { queue_full: 4, redacted: 1, closed: 1 },
      ignored: 1,
      invalid: 1,
      abandoned: 3,
    })
    // Lost: 3 failed + 2 abandoned (failed) + 4 queue_full + 1 closed; a redacted drop was asked for.
    expect(l.beginFlush()).toBe(10)
    expect(l.beginFlush()).toBe(0)
    const mark = l.mark()
    l.lostAtExit(2)
    expect(l.lostSince(mark)).toBe(2)
  })
})

describe('one ledger behind stats(), close() and the held records', () => {
  it('records abandoned at close count once: failed (transport) or dropped closed (held), and stats agrees with the result', async () => {
    const svc = await startFakeService()
    await svc.down()
    const errors: string[] = []
    const tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, onError: (e) => errors.push(e.code) })
    try {
      tracker.universal.logIncoming({ text: 'a', userId: 'u1' })
      tracker.universal.logIncoming({ text: 'b', userId: 'u2' })
      const held = tracker.withTurn(() => tracker.holdTurn())
      held.hold(() => tracker.universal.logIncoming({ text: 'held', userId: 'u3' }))
      const result = await tracker.close(50)
      const s = tracker.stats()
      expect(result).toMatchObject({ delivered: false, failed: 2, dropped: 1, sent: 0 })
      expect(s).toMatchObject({ failed: result.failed, dropped: result.dropped, abandoned: 3 })
      expect(s.droppedByReason.closed).toBe(1)
      expect(errors).toContain('closed_with_pending')
    } finally {
      await svc.close()
    }
  })
})
