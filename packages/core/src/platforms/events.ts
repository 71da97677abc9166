import { InvalidRecordError } from '../errors'
import type { EventType, TrackedEvent } from '../types'
import { describe, optionalObject, optionalString, requireNonEmptyString, requireObject } from '../validate'
import type { WireRecord } from './context'

const CONTEXT = 'event'

/** The event types the service accepts (spec: Events). */
export const EVENT_TYPES: readonly EventType[] = [
  'customEvent',
  'revenueEvent',
  'shareEvent',
  'pageLaunchEvent',
  'referralEvent',
]

/**
 * Event record (spec: Event record; rule 4.2.4): `name`, `userId`, `type` and the
 * type-specific fields. Referral aliases `ad_id` / `referer_uri` are sent as `adid` /
 * `refereruri`, the spellings of the main listing.
 */
export function serializeEvent(event: TrackedEvent): WireRecord {
  const e = requireObject(event, '', CONTEXT)
  requireNonEmptyString(e.name, 'name', CONTEXT)
  const userId = requireNonEmptyString(e.userId, 'userId', CONTEXT)
  optionalString(e.conversationId, 'conversationId', CONTEXT)
  if (typeof e.type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(e.type))
    throw new InvalidRecordError('type', `is required and must be one of ${EVENT_TYPES.join(', ')}`, CONTEXT)
  const body: Record<string, unknown> = { ...e }
  switch (e.type as EventType) {
    case 'customEvent':
    case 'pageLaunchEvent':
      optionalObject(e.extraInfo, 'extraInfo', CONTEXT)
      break
    case 'revenueEvent':
      if (typeof e.amount !== 'number' || !Number.isFinite(e.amount))
        throw new InvalidRecordError(
          'amount',
          `is required for revenueEvent and must be a finite number (got ${describe(e.amount)})`,
          CONTEXT,
        )
      optionalString(e.referenceNumber, 'referenceNumber', CONTEXT)
      optionalObject(e.metadata, 'metadata', CONTEXT)
      break
    case 'shareEvent':
      optionalObject(e.sharedMessage, 'sharedMessage', CONTEXT)
      break
    case 'referralEvent': {
      for (const key of ['ref', 'source', 'adid', 'ad_id', 'refereruri', 'referer_uri'])
        optionalString(e[key], key, CONTEXT)
      if (body.adid === undefined && body.ad_id !== undefined) body.adid = body.ad_id
      if (body.refereruri === undefined && body.referer_uri !== undefined) body.refereruri = body.referer_uri
      delete body.ad_id
      delete body.referer_uri
      break
    }
  }
  return { body, userId }
}
