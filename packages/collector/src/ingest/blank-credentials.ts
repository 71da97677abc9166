import { isCredentialKey } from '@convotrack/core'
import { jsonStringEnd } from './json-text'

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

const QUOTE = 0x22

const BLANKED_JSON = JSON.stringify(BLANKED)

/** Digits, `-`, `+`, `.`, `e`, `E`: what a JSON number is spelled with. */
const isNumberChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45

/**
 * The raw JSON text with the same values {@link blankRecordCredentials} blanks (a non-empty
 * string or a number under a credential-named key, at any depth) replaced by
 * `"[blanked by the collector]"` — edited in place, so everything else stays byte for byte as
 * sent (key order, number spelling, escapes) and nothing is re-serialised. One pass, no
 * recursion. Call only on text `JSON.parse` accepted.
 *
 * @example blankRawCredentials('{"qs":{"access_token":"EAAB"}}') // '{"qs":{"access_token":"[blanked by the collector]"}}'
 */
export function blankRawCredentials(raw: string): string {
  const parts: string[] = []
  let copied = 0
  // What the scanner expects next inside the innermost object: its key names the value after it.
  let key: string | undefined
  let afterColon = false
  for (let i = 0; i < raw.length; ) {
    const c = raw.charCodeAt(i)
    if (c === QUOTE) {
      const closed = jsonStringEnd(raw, i)
      const end = closed < 0 ? raw.length : closed
      if (afterColon) {
        // A string value: blanked when its key is a credential's.
        if (key !== undefined && end - i > 2 && isCredentialKey(key)) {
          const value = raw.slice(i, end)
          if (value !== BLANKED_JSON) {
            parts.push(raw.slice(copied, i), BLANKED_JSON)
            copied = end
          }
        }
        afterColon = false
        key = undefined
      } else {
        // A key when a colon follows (after whitespace); else a string inside an array.
        let k = end
        while (k < raw.length && raw.charCodeAt(k) <= 0x20) k++
        if (raw.charCodeAt(k) === 0x3a) {
          const text = raw.slice(i + 1, end - 1)
          key = text.includes('\\') ? (JSON.parse(raw.slice(i, end)) as string) : text
          afterColon = true
          i = k + 1
          continue
        }
      }
      i = end
      continue
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1
      while (end < raw.length && isNumberChar(raw.charCodeAt(end))) end++
      if (afterColon && key !== undefined && isCredentialKey(key)) {
        parts.push(raw.slice(copied, i), BLANKED_JSON)
        copied = end
      }
      afterColon = false
      key = undefined
      i = end
      continue
    }
    // `{`, `[`, a literal or punctuation: a value that is not a string or number ends the key's reach.
    if (c > 0x20) {
      afterColon = false
      key = undefined
    }
    i++
  }
  if (copied === 0) return raw
  parts.push(raw.slice(copied))
  return parts.join('')
}
