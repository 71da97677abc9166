import {
  API_VERSIONS,
  InvalidWireRecordError,
  isPlatform,
  isRecordType,
  isSpecVersion,
  isVersionForm,
  PLATFORMS,
  RECORD_TYPES,
  validateWireRecord,
} from '@convotrack/core'
import { RequestError } from '../errors'
import { requireApiKey } from '../http/track-head'
import {
  isLegacyPlatform,
  isLegacyType,
  LEGACY_PLATFORMS,
  LEGACY_TYPES,
  type RecordPlatform,
  type StoredRecordType,
  validateLegacyRecord,
} from './legacy-records'
import { checkNesting } from './nesting-limit'

export { valueAt } from '@convotrack/core'
/** The query value lists are core's: one home for the spec's values. */
export { API_VERSIONS, PLATFORMS, RECORD_TYPES }

/** The query of a `POST /track`, checked. */
export interface TrackQuery {
  platform: RecordPlatform
  type: StoredRecordType
  /** Recorded as sent: any `MAJOR.MINOR.PATCH-suffix` (the spec's two values, the dashbot SDK's `12.1.0-npm`…). */
  v: string
  apiKey: string
}

/**
 * Checks the query parameters in the spec's order of importance: `platform`, `type`, `v`, then
 * the presence of `apiKey` (whether the key is known is the caller's business: 401). The spec's
 * values are always accepted; the dashbot SDK's other platform and type values only with a
 * `v` other than the spec's (see the README, "Coming from dashbot").
 *
 * @example parseTrackQuery(new URLSearchParams('platform=slack&type=incoming&v=11.1.0-rest&apiKey=k'))
 */
export function parseTrackQuery(query: URLSearchParams): TrackQuery {
  const v = query.get('v')
  const legacy = v !== null && isVersionForm(v) && !isSpecVersion(v)
  const platform = query.get('platform')
  if (!platform || !(isPlatform(platform) || (legacy && isLegacyPlatform(platform))))
    throw new RequestError(
      400,
      'invalid_platform',
      `query \`platform\` must be one of ${PLATFORMS.join(', ')} (dashbot SDK versions also ${LEGACY_PLATFORMS.join(', ')})`,
      'platform',
    )
  const type = query.get('type')
  if (!type || !(isRecordType(type) || (legacy && isLegacyType(type))))
    throw new RequestError(
      400,
      'invalid_type',
      `query \`type\` must be one of ${RECORD_TYPES.join(', ')} (dashbot SDK versions also ${LEGACY_TYPES.join(', ')})`,
      'type',
    )
  if (!v || !isVersionForm(v))
    throw new RequestError(
      400,
      'invalid_version',
      `query \`v\` must be a version MAJOR.MINOR.PATCH-suffix, e.g. ${API_VERSIONS.join(' or ')}`,
      'v',
    )
  const apiKey = requireApiKey(query.get('apiKey'))
  return { platform: platform as RecordPlatform, type: type as StoredRecordType, v, apiKey }
}

/**
 * Largest revenue `amount` (either sign) the collector takes: far above any real sale, and small
 * enough that the revenue totals of any number of records stay finite numbers (two amounts near
 * `Number.MAX_VALUE` add up to `Infinity`, which JSON shows as `null`).
 */
export const MAX_AMOUNT = 1e15

function checkAmount(type: StoredRecordType, body: unknown): void {
  if (type !== 'event' || typeof body !== 'object' || body === null) return
  const { amount } = body as Record<string, unknown>
  if (typeof amount === 'number' && Math.abs(amount) > MAX_AMOUNT)
    throw new RequestError(
      400,
      'invalid_field',
      `\`amount\` must be at most ${MAX_AMOUNT} in size (got ${amount})`,
      'amount',
    )
}

/**
 * Checks a `POST /track` body against the shape its `platform` and `type` name (spec 4.2 and
 * "Platform-native message shapes", with core's validators). With a `v` that is not one of the
 * spec's values, a record the spec refuses may still be accepted by the legacy layer for what
 * the dashbot SDK sends. Throws {@link RequestError} (400) naming the field: code
 * `missing_field`, `invalid_field` (also for a body nested deeper than 64 levels),
 * `misplaced_intent` or `unsupported_record`.
 *
 * @example validateRecord('universal', 'incoming', { text: 'hi', userId: 'u1' })
 */
export function validateRecord(
  platform: RecordPlatform,
  type: StoredRecordType,
  body: unknown,
  v: string = API_VERSIONS[0] as string,
): void {
  // First: the shape checks (and everything after them) then only meet bounded nesting.
  checkNesting(body)
  checkAmount(type, body)
  try {
    if (!isSpecVersion(v)) validateLegacyRecord(platform, type, body)
    else if (isPlatform(platform) && isRecordType(type)) validateWireRecord(platform, type, body)
    else
      throw new RequestError(400, 'invalid_type', `platform ${platform} / type ${type} need a dashbot SDK \`v\``, 'v')
  } catch (e) {
    if (e instanceof InvalidWireRecordError) throw new RequestError(400, e.violation, e.message, e.path)
    if (e instanceof RequestError) throw e
    // A validator that trips over a value it did not expect refuses the record; it never fails the request.
    console.error('[convotrack-collector] validating a record failed; refused with 422:', (e as Error)?.name)
    throw new RequestError(
      422,
      'unsupported_record',
      `the collector cannot check this ${platform} ${type} record (a value of an unexpected type)`,
      '',
    )
  }
}
