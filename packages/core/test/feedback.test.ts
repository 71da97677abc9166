import { createTracker, FEEDBACK_EVENT, feedbackEvent, InvalidRecordError, type Tracker } from '@convotrack/core'
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

describe('feedback', () => {
  it('is the spec customEvent named feedback: score, scale and comment inside extraInfo', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, batch: false })
    expect(tracker.feedback({ userId: 'u1', conversationId: 'c1', score: -1, comment: 'wrong answer' })).toBe(true)
    expect(tracker.feedback({ userId: 'u2', score: 4 })).toBe(true)
    await tracker.flush()
    expect(sink.records.map((r) => [r.platform, r.type, r.body])).toEqual([
      [
        'generic',
        'event',
        {
          type: 'customEvent',
          name: 'feedback',
          userId: 'u1',
          conversationId: 'c1',
          extraInfo: { score: -1, scale: 'thumbs', comment: 'wrong answer' },
        },
      ],
      [
        'generic',
        'event',
        { type: 'customEvent', name: 'feedback', userId: 'u2', extraInfo: { score: 4, scale: 'stars' } },
      ],
    ])
  })

  it('reads 2 … 5 as stars, −1 … 1 as thumbs unless scale says stars', () => {
    expect(feedbackEvent({ userId: 'u', score: 0.5 }).extraInfo).toEqual({ score: 0.5, scale: 'thumbs' })
    expect(feedbackEvent({ userId: 'u', score: 1 }).extraInfo).toEqual({ score: 1, scale: 'thumbs' })
    expect(feedbackEvent({ userId: 'u', score: 1, scale: 'stars' }).extraInfo).toEqual({ score: 1, scale: 'stars' })
    expect(feedbackEvent({ userId: 'u', score: 5 }).name).toBe(FEEDBACK_EVENT)
  })

  it.each([
    [{ userId: 'u', score: Number.NaN }, 'score', /a number/],
    [{ userId: 'u', score: 4.5 }, 'score', /whole 1 … 5/],
    [{ userId: 'u', score: 6 }, 'score', /whole 1 … 5/],
    [{ userId: 'u', score: -2 }, 'score', /−1 … 1/],
    [{ userId: 'u', score: 0, scale: 'stars' as const }, 'score', /whole 1 … 5/],
    [{ userId: 'u', score: 1, scale: 'ten' as never }, 'scale', /thumbs' or 'stars/],
    [{ userId: '', score: 1 }, 'userId', /non-empty/],
    [{ userId: 'u', score: 1, comment: 3 as never }, 'comment', /string/],
  ])('refuses %j naming %s', (feedback, path, rule) => {
    const error = (() => {
      try {
        feedbackEvent(feedback)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(InvalidRecordError)
    expect((error as InvalidRecordError).path).toBe(path)
    expect((error as InvalidRecordError).message).toMatch(rule)
  })
})
