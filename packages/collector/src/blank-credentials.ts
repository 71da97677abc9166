import { isCredentialKey } from '@convotrack/core'

/** What a blanked credential reads in the stored record: the raw view says the field was blanked. */
export const BLANKED = '[blanked by the collector]'

/** Deeper than this, a structure is left as it is (JSON parsing limits it long before). */
const MAX_DEPTH = 64

/**
 * The record with every non-empty string or number under a credential-named field (core's
 * list: `token`, `access_token`, `apiKey`, `apiAccessToken`, `secret`… — `isCredentialKey`)
 * replaced by {@link BLANKED}, and the dotted paths blanked. Returns the body itself when
 * nothing was blanked. Defence in depth: convotrack's trackers blank these before sending, the
 * dashbot SDK does not (`qs.access_token`, Slack `token`, Kik `apiKey`).
 *
 * @example blankRecordCredentials({ qs: { access_token: 'EAAB…' } }).blanked // ['qs.access_token']
 */
export function blankRecordCredentials<T>(body: T): { body: T; blanked: string[] } {
  const blanked: string[] = []
  const walk = (v: unknown, path: string, depth: number): unknown => {
    if (typeof v !== 'object' || v === null || depth > MAX_DEPTH) return v
    let out: unknown[] | Record<string, unknown> | undefined
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        const next = walk(item, `${path}[${i}]`, depth + 1)
        if (next !== item) {
          out ??= [...v]
          ;(out as unknown[])[i] = next
        }
      })
    } else {
      for (const [key, item] of Object.entries(v)) {
        const at = path ? `${path}.${key}` : key
        let next: unknown
        if (
          isCredentialKey(key) &&
          (typeof item === 'number' || (typeof item === 'string' && item !== '' && item !== BLANKED))
        ) {
          next = BLANKED
          blanked.push(at)
        } else next = walk(item, at, depth + 1)
        if (next !== item) {
          out ??= { ...(v as Record<string, unknown>) }
          ;(out as Record<string, unknown>)[key] = next
        }
      }
    }
    return out ?? v
  }
  return { body: walk(body, '', 0) as T, blanked }
}
