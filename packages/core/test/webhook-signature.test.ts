import { createHmac } from 'node:crypto'
import {
  generateWebhookSecret,
  ReplayGuard,
  SignatureError,
  signPauseWebhook,
  verifyPauseWebhook,
} from '@convotrack/core'
import { describe, expect, it } from 'vitest'

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const body = JSON.stringify({ userId: 'u1', paused: true })

describe('Standard Webhooks signatures', () => {
  it('matches the scheme: base64 HMAC-SHA256 of "id.timestamp.body" with the decoded whsec_ key', () => {
    const headers = signPauseWebhook({ secret, body, id: 'msg_1', timestamp: 1_700_000_000 })
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`msg_1.1700000000.${body}`)
      .digest('base64')
    expect(headers).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${expected}`,
    })
  })

  it('verifies raw bytes (string, Buffer, Fetch Headers) and rejects any change', () => {
    const headers = signPauseWebhook({ secret, body })
    expect(verifyPauseWebhook({ secret, headers, rawBody: body }).id).toBe(headers['webhook-id'])
    expect(() =>
      verifyPauseWebhook({ secret, headers: new Headers(headers), rawBody: Buffer.from(body) }),
    ).not.toThrow()
    expect(() => verifyPauseWebhook({ secret, headers, rawBody: body.replace('true', 'false') })).toThrow(
      SignatureError,
    )
    expect(() => verifyPauseWebhook({ secret, headers, rawBody: JSON.stringify(JSON.parse(body), null, 1) })).toThrow(
      SignatureError,
    )
    expect(() => verifyPauseWebhook({ secret: generateWebhookSecret(), headers, rawBody: body })).toThrow(
      SignatureError,
    )
    const { 'webhook-signature': _s, ...unsigned } = headers
    expect(() => verifyPauseWebhook({ secret, headers: unsigned, rawBody: body })).toThrow(SignatureError)
  })

  it('rotation: several secrets accepted, several signatures in one header', () => {
    const next = generateWebhookSecret()
    const signedWithOld = signPauseWebhook({ secret, body })
    expect(() => verifyPauseWebhook({ secret: [next, secret], headers: signedWithOld, rawBody: body })).not.toThrow()
    const signedWithBoth = signPauseWebhook({ secret: [secret, next], body })
    expect(signedWithBoth['webhook-signature']?.split(' ')).toHaveLength(2)
    expect(() => verifyPauseWebhook({ secret: next, headers: signedWithBoth, rawBody: body })).not.toThrow()
  })

  it('±5 minutes tolerance both ways; the error does not say which check failed', () => {
    const now = 1_700_000_000_000
    const at = (offsetSec: number) => signPauseWebhook({ secret, body, timestamp: now / 1000 + offsetSec })
    expect(() => verifyPauseWebhook({ secret, headers: at(-299), rawBody: body, now })).not.toThrow()
    expect(() => verifyPauseWebhook({ secret, headers: at(299), rawBody: body, now })).not.toThrow()
    let stale: unknown
    try {
      verifyPauseWebhook({ secret, headers: at(-301), rawBody: body, now })
    } catch (e) {
      stale = e
    }
    expect(stale).toBeInstanceOf(SignatureError)
    expect((stale as Error).message).toBe('webhook signature verification failed')
    expect(() => verifyPauseWebhook({ secret, headers: at(301), rawBody: body, now })).toThrow(SignatureError)
  })

  it('a replayed id within the window is refused', () => {
    const guard = new ReplayGuard()
    const headers = signPauseWebhook({ secret, body })
    expect(() => verifyPauseWebhook({ secret, headers, rawBody: body, replayGuard: guard })).not.toThrow()
    expect(() => verifyPauseWebhook({ secret, headers, rawBody: body, replayGuard: guard })).toThrow(/already seen/)
    guard.forget(headers['webhook-id'] as string)
    expect(() => verifyPauseWebhook({ secret, headers, rawBody: body, replayGuard: guard })).not.toThrow()
  })

  it('a signature with junk around its base64 is refused', () => {
    const headers = signPauseWebhook({ secret, body })
    const junk = { ...headers, 'webhook-signature': `${headers['webhook-signature']}!!` }
    expect(() => verifyPauseWebhook({ secret, headers: junk, rawBody: body })).toThrow(SignatureError)
  })
})
