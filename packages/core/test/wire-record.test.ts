import {
  InvalidRecordError,
  InvalidWireRecordError,
  isSpecVersion,
  isVersionForm,
  validateWireRecord,
  type WireViolation,
} from '@convotrack/core'
import { describe, expect, it } from 'vitest'

function violation(fn: () => void): { violation: WireViolation; path: string } {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRecordError)
    if (e instanceof InvalidWireRecordError) return { violation: e.violation, path: e.path }
    throw e
  }
  throw new Error('accepted')
}

describe('validateWireRecord: the spec’s record shapes on the receiving side', () => {
  it('accepts a good record of a shape', () => {
    expect(() => validateWireRecord('universal', 'incoming', { text: 'hi', userId: 'u1' })).not.toThrow()
    expect(() =>
      validateWireRecord('slack', 'outgoing', {
        team: { id: 'T' },
        bot: { id: 'B' },
        message: { type: 'message', channel: 'C' },
      }),
    ).not.toThrow()
  })

  it.each([
    ['missing_field', 'universal', 'incoming', { text: 'hi' }, 'userId'],
    ['invalid_field', 'universal', 'incoming', { text: 'hi', userId: 5 }, 'userId'],
    ['invalid_field', 'universal', 'incoming', [], ''],
    ['misplaced_intent', 'alexa', 'outgoing', { intent: { name: 'x' } }, 'intent'],
    ['unsupported_record', 'google', 'incoming', { text: 'hi', userId: 'u' }, 'type'],
    ['missing_field', 'kik', 'outgoing', { username: 'b', message: { type: 'text' } }, 'message.to'],
    [
      'invalid_field',
      'facebook',
      'event',
      { type: 'customEvent', name: 'x', userId: 'u', extraInfo: 'no' },
      'extraInfo',
    ],
    [
      'invalid_field',
      'slack',
      'incoming',
      {
        team: { id: 'T' },
        bot: { id: 'B' },
        message: { type: 'm', channel: 'C' },
        intent: { name: 'x', confidence: 2 },
      },
      'intent.confidence',
    ],
  ] as const)('%s: %s %s', (kind, platform, type, body, path) => {
    expect(violation(() => validateWireRecord(platform, type, body))).toEqual({ violation: kind, path })
  })

  it('versions: the spec’s two values, and the MAJOR.MINOR.PATCH-suffix form', () => {
    expect(isSpecVersion('11.1.0-rest') && isSpecVersion('10.1.1-rest')).toBe(true)
    expect(isSpecVersion('12.1.0-npm')).toBe(false)
    expect(['12.1.0-npm', '12.1.0-kiknpm', '1.0.0-a.b']).toEqual(
      ['12.1.0-npm', '12.1.0-kiknpm', '1.0.0-a.b'].filter(isVersionForm),
    )
    expect(['12.1.0', 'latest', '1.0-rest', '1.0.0-'].filter(isVersionForm)).toEqual([])
  })
})
