// Event time per platform, from the bodies the tracker's own serializers build (what reaches
// `POST /track`), and the clamp of a time too far in the future.
import { eventTime, FUTURE_SLACK_MS } from '@convotrack/collector'
import {
  serializeAlexaIncoming,
  serializeEvent,
  serializeMessengerIncoming,
  serializeSlack,
  serializeTwitterIncoming,
  serializeUniversal,
} from '@convotrack/core'
import { describe, expect, it } from 'vitest'

const RECEIVED = Date.UTC(2026, 10, 26, 12, 0, 0)
const THEN = Date.UTC(2025, 5, 1, 8, 30, 15, 250)

describe('eventTime', () => {
  it('Messenger: the messaging item timestamp (epoch ms)', () => {
    const [wire] = serializeMessengerIncoming({
      object: 'page',
      entry: [
        {
          id: 'page',
          time: THEN + 5,
          messaging: [
            { sender: { id: 'u1' }, recipient: { id: 'page' }, timestamp: THEN, message: { mid: 'm1', text: 'hi' } },
          ],
        },
      ],
    })
    expect(eventTime('facebook', 'incoming', wire?.body as Record<string, unknown>, RECEIVED)).toBe(THEN)
  })

  it('Slack: the message ts (seconds with a fraction), else event_ts', () => {
    const msg = { type: 'message', channel: 'C1', user: 'U1', text: 'hi', ts: `${THEN / 1000}` }
    const wire = serializeSlack({ team: { id: 'T1' }, bot: { id: 'B1' }, message: msg }, 'incoming')
    expect(eventTime('slack', 'incoming', wire.body, RECEIVED)).toBe(THEN)
    const eventOnly = { message: { type: 'message', channel: 'C1', event_ts: '1748766615.000200' } }
    expect(eventTime('slack', 'incoming', eventOnly, RECEIVED)).toBe(1748766615000)
  })

  it('Alexa: request.timestamp (ISO 8601)', () => {
    const envelope = {
      version: '1.0',
      session: { new: true, sessionId: 's', application: { applicationId: 'a' }, user: { userId: 'amzn1.u' } },
      context: { System: { application: { applicationId: 'a' }, user: { userId: 'amzn1.u' } } },
      request: { type: 'LaunchRequest', requestId: 'r1', timestamp: new Date(THEN).toISOString(), locale: 'en-US' },
    }
    const wire = serializeAlexaIncoming(envelope as Parameters<typeof serializeAlexaIncoming>[0])
    expect(eventTime('alexa', 'incoming', wire.body, RECEIVED)).toBe(THEN)
  })

  it("the DM platform: the event's created_timestamp", () => {
    const [wire] = serializeTwitterIncoming({
      direct_message_events: [
        {
          type: 'message_create',
          id: '1',
          created_timestamp: String(THEN),
          message_create: { target: { recipient_id: 'bot' }, sender_id: 'u1', message_data: { text: 'hi' } },
        },
      ],
    } as Parameters<typeof serializeTwitterIncoming>[0])
    expect(eventTime('twitter', 'incoming', wire?.body as Record<string, unknown>, RECEIVED)).toBe(THEN)
  })

  it('universal, generic, sms: platformJson.timestamp as epoch ms or ISO 8601 (what convotrack import writes)', () => {
    const iso = serializeUniversal({
      text: 'hi',
      userId: 'u',
      platformJson: { timestamp: new Date(THEN).toISOString() },
    })
    expect(eventTime('universal', 'incoming', iso.body, RECEIVED)).toBe(THEN)
    const ms = serializeUniversal({ text: 'hi', userId: 'u', platformJson: { timestamp: THEN } })
    expect(eventTime('generic', 'outgoing', ms.body, RECEIVED)).toBe(THEN)
    expect(
      eventTime(
        'sms',
        'incoming',
        { text: 'hi', userId: 'u', platformJson: { timestamp: '2025-06-01T10:30:15.250+02:00' } },
        RECEIVED,
      ),
    ).toBe(THEN)
  })

  it('events: their own timestamp or platformJson.timestamp', () => {
    const wire = serializeEvent({ type: 'customEvent', name: 'signup', userId: 'u' })
    expect(eventTime('generic', 'event', { ...wire.body, timestamp: THEN }, RECEIVED)).toBe(THEN)
    expect(eventTime('generic', 'event', wire.body, RECEIVED)).toBe(RECEIVED)
  })

  it('no time in the shape, or one that is not a time: the receive time', () => {
    expect(eventTime('universal', 'incoming', { text: 'hi', userId: 'u' }, RECEIVED)).toBe(RECEIVED)
    for (const timestamp of ['yesterday', '', -5, 0, null, { at: 1 }, Number.NaN])
      expect(
        eventTime('universal', 'incoming', { text: 'hi', userId: 'u', platformJson: { timestamp } }, RECEIVED),
      ).toBe(RECEIVED)
    expect(eventTime('slack', 'incoming', { message: { ts: 'soon' } }, RECEIVED)).toBe(RECEIVED)
  })

  it('more than 5 minutes ahead of the receive time: the receive time; up to 5 minutes: believed', () => {
    const body = (t: number) => ({ text: 'hi', userId: 'u', platformJson: { timestamp: t } })
    expect(eventTime('universal', 'incoming', body(RECEIVED + FUTURE_SLACK_MS), RECEIVED)).toBe(
      RECEIVED + FUTURE_SLACK_MS,
    )
    expect(eventTime('universal', 'incoming', body(RECEIVED + FUTURE_SLACK_MS + 1), RECEIVED)).toBe(RECEIVED)
    // Milliseconds sent as seconds would be far in the future, seconds sent as milliseconds in
    // January 1970: neither is believed.
    expect(eventTime('universal', 'incoming', body(THEN * 1000), RECEIVED)).toBe(RECEIVED)
    expect(eventTime('universal', 'incoming', body(THEN / 1000), RECEIVED)).toBe(RECEIVED)
    expect(eventTime('slack', 'incoming', { message: { ts: '1.1' } }, RECEIVED)).toBe(RECEIVED)
    expect(eventTime('universal', 'incoming', body(Date.UTC(2000, 0, 1)), RECEIVED)).toBe(Date.UTC(2000, 0, 1))
  })
})
