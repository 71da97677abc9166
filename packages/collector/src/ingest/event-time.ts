/**
 * Event time: when a record's own shape says it happened, else when the collector received it.
 * Pure. A time more than {@link FUTURE_SLACK_MS} ahead of the receive time (a wrong clock, seconds
 * taken for milliseconds) is not believed: the receive time is used.
 */
import type { RecordPlatform, StoredRecordType } from './legacy-records'

/** How far ahead of the collector's clock an event time may be. */
export const FUTURE_SLACK_MS = 5 * 60_000
/**
 * Times before 2000-01-01 are not believed either: they are seconds sent as milliseconds (a
 * date in January 1970) or placeholders (Slack test fixtures' `ts: '1.1'`), not history.
 */
export const EARLIEST_EVENT_MS = Date.UTC(2000, 0, 1)

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined

/** Epoch ms from a number of ms or an ISO 8601 string (what `convotrack import` writes). */
function msOrIso(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? v : undefined
  if (typeof v !== 'string' || v.trim() === '') return undefined
  if (/^\d+(\.\d+)?$/.test(v.trim())) return msOrIso(Number(v))
  const t = Date.parse(v)
  return Number.isFinite(t) ? t : undefined
}

/** Slack's `"1712345678.000200"`: seconds with a fraction. */
function slackSeconds(v: unknown): number | undefined {
  const n = typeof v === 'string' ? Number(v) : typeof v === 'number' ? v : Number.NaN
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) : undefined
}

/** The time the record's shape carries, epoch ms; undefined when it carries none. */
export function sourceTime(platform: RecordPlatform, type: StoredRecordType, body: Obj): number | undefined {
  switch (platform) {
    case 'facebook': {
      // A webhook body: its first messaging item's time (epoch ms).
      for (const e of Array.isArray(body.entry) ? body.entry : []) {
        const items = obj(e)?.messaging
        for (const m of Array.isArray(items) ? items : []) {
          const t = msOrIso(obj(m)?.timestamp)
          if (t !== undefined) return t
        }
      }
      return msOrIso(obj(body.json)?.timestamp) ?? msOrIso(obj(body.platformJson)?.timestamp)
    }
    case 'slack': {
      const event = obj(body.event) ?? obj(obj(body.json)?.event)
      const message = obj(body.message) ?? obj(obj(body.json)?.message)
      return (
        slackSeconds(message?.event_ts) ??
        slackSeconds(event?.event_ts) ??
        slackSeconds(event?.ts) ??
        slackSeconds(message?.ts) ??
        slackSeconds(body.event_ts) ??
        slackSeconds(body.ts)
      )
    }
    case 'alexa': {
      const request = obj(body.request) ?? obj(obj(body.event)?.request)
      return msOrIso(request?.timestamp)
    }
    case 'twitter': {
      // The DM platform: `created_timestamp` (epoch ms as a string) on the event or the body.
      // (as the tracker sends it: inside platformJson, one event per record).
      const holder = obj(body.platformJson) ?? body
      const events = holder.direct_message_events
      const event = obj(holder.event) ?? obj(Array.isArray(events) ? events[0] : undefined)
      return msOrIso(event?.created_timestamp) ?? msOrIso(obj(body.platformJson)?.timestamp)
    }
    default:
      if (type === 'event') return msOrIso(body.timestamp) ?? msOrIso(obj(body.platformJson)?.timestamp)
      return msOrIso(obj(body.platformJson)?.timestamp)
  }
}

/**
 * The record's event time: its own time where the shape carries one (Messenger
 * `messaging[].timestamp`, Slack `event_ts` / `ts`, Alexa `request.timestamp`, the DM platform's
 * `created_timestamp`, universal / generic / sms `platformJson.timestamp`), else `receivedAt`;
 * more than 5 minutes ahead of `receivedAt` → `receivedAt`.
 *
 * @example eventTime('universal', 'incoming', { text: 'hi', userId: 'u', platformJson: { timestamp: '2025-03-01T10:00:00Z' } }, Date.now())
 */
export function eventTime(platform: RecordPlatform, type: StoredRecordType, body: Obj, receivedAt: number): number {
  const t = sourceTime(platform, type, body)
  if (t === undefined || t > receivedAt + FUTURE_SLACK_MS || t < EARLIEST_EVENT_MS) return receivedAt
  return Math.floor(t)
}
