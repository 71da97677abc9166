import { describe, expect, it } from 'vitest'
import { BLANKED, blankRecordCredentials } from '../src/ingest/blank-credentials'

describe('blankRecordCredentials (core’s credential names, at ingest)', () => {
  it('blanks non-empty strings and numbers under credential names, anywhere, and says where', () => {
    const body = {
      qs: { access_token: 'EAAB' },
      token: 'xoxb',
      message: { attachments: [{ Authorization: 'Bearer x' }], text: 'my token is fine' },
      apiKey: '',
      pin: { client_secret: 1234 },
    }
    const { body: out, blanked } = blankRecordCredentials(body)
    expect(out).toEqual({
      qs: { access_token: BLANKED },
      token: BLANKED,
      message: { attachments: [{ Authorization: BLANKED }], text: 'my token is fine' },
      apiKey: '',
      pin: { client_secret: BLANKED },
    })
    expect(blanked).toEqual(['qs.access_token', 'token', 'message.attachments[0].Authorization', 'pin.client_secret'])
    expect(body.qs.access_token).toBe('EAAB') // the input is not changed
  })

  it('returns the body itself when nothing is blanked', () => {
    const body = { text: 'hi', userId: 'u', qs: { access_token: '' } }
    expect(blankRecordCredentials(body)).toEqual({ body, blanked: [] })
    expect(blankRecordCredentials(body).body).toBe(body)
  })
})
