import type { JsonObject } from './types'

/**
 * Field names that hold a platform's secrets wherever they appear inside `platformJson`
 * (compared case-insensitively, `_`/`-` ignored): Slack's verification `token` and Azure Bot
 * Service's `ApiToken`, OAuth `access_token`, Kik's `apiKey`, Alexa's `apiAccessToken` /
 * `consentToken`, and the usual secret/password/authorization fields.
 */
const CREDENTIAL_KEYS = new Set([
  'token',
  'accesstoken',
  'apitoken',
  'apikey',
  'apiaccesstoken',
  'consenttoken',
  'bottoken',
  'refreshtoken',
  'idtoken',
  'secret',
  'clientsecret',
  'appsecret',
  'password',
  'authorization',
])

/** Deeper than this, a structure is left as it is (it fails JSON's own checks long before). */
const MAX_DEPTH = 64

export function isCredentialKey(key: string): boolean {
  return CREDENTIAL_KEYS.has(key.toLowerCase().replace(/[_-]/g, ''))
}

/**
 * A copy of `value` with every string or number under a credential-named field replaced by
 * `''`. Copies only the objects on the way to a blanked field; returns `value` itself when
 * there is nothing to blank, so the common case allocates nothing.
 */
export function blankCredentials<T>(value: T): T {
  const ancestors = new Set<unknown>()
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null || depth > MAX_DEPTH || ancestors.has(v)) return v
    ancestors.add(v)
    let out: unknown[] | JsonObject | undefined
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        const next = walk(item, depth + 1)
        if (next !== item) {
          out ??= [...v]
          ;(out as unknown[])[i] = next
        }
      })
    } else {
      for (const [key, item] of Object.entries(v)) {
        const next =
          isCredentialKey(key) && (typeof item === 'string' || typeof item === 'number') ? '' : walk(item, depth + 1)
        if (next !== item) {
          out ??= { ...(v as JsonObject) }
          ;(out as JsonObject)[key] = next
        }
      }
    }
    ancestors.delete(v)
    return out ?? v
  }
  return walk(value, 0) as T
}
