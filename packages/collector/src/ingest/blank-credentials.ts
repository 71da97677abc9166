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
  // The keys on the way down; a path string is built only for a field that is blanked.
  const trail: Array<string | number> = []
  const pathOf = (key: string) =>
    [...trail, key].reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : p ? `${p}.${k}` : k), '')
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null || depth > MAX_DEPTH) return v
    let out: unknown[] | Record<string, unknown> | undefined
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item = v[i]
        if (typeof item !== 'object' || item === null) continue
        trail.push(i)
        const next = walk(item, depth + 1)
        trail.pop()
        if (next !== item) {
          out ??= [...v]
          ;(out as unknown[])[i] = next
        }
      }
    } else {
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key]
        let next = item
        if (typeof item === 'object' && item !== null) {
          trail.push(key)
          next = walk(item, depth + 1)
          trail.pop()
        } else if (
          (typeof item === 'number' || (typeof item === 'string' && item !== '' && item !== BLANKED)) &&
          isCredentialKey(key)
        ) {
          next = BLANKED
          blanked.push(pathOf(key))
        }
        if (next !== item) {
          out ??= { ...(v as Record<string, unknown>) }
          ;(out as Record<string, unknown>)[key] = next
        }
      }
    }
    return out ?? v
  }
  return { body: walk(body, 0) as T, blanked }
}
