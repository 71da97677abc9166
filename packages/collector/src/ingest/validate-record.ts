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
 * Checks a `POST /track` body against the shape its `platform` and `type` name (spec 4.2 and
 * "Platform-native message shapes", with core's validators). With a `v` that is not one of the
 * spec's values, a record the spec refuses may still be accepted by the legacy layer for what
 * the dashbot SDK sends. Throws {@link RequestError} (400) naming the field: code
 * `missing_field`, `invalid_field`, `misplaced_intent` or `unsupported_record`.
 *
 * @example validateRecord('universal', 'incoming', { text: 'hi', userId: 'u1' })
 */
export function validateRecord(
  platform: RecordPlatform,
  type: StoredRecordType,
  body: unknown,
  v: string = API_VERSIONS[0] as string,
): void {
  try {
    if (!isSpecVersion(v)) validateLegacyRecord(platform, type, body)
    else if (isPlatform(platform) && isRecordType(type)) validateWireRecord(platform, type, body)
    else
      throw new RequestError(400, 'invalid_type', `platform ${platform} / type ${type} need a dashbot SDK \`v\``, 'v')
  } catch (e) {
    if (e instanceof InvalidWireRecordError) throw new RequestError(400, e.violation, e.message, e.path)
    throw e
  }
}
