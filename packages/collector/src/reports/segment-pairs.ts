/**
 * What a user counts as in the audience segments: each top-level scalar field of their latest
 * metadata, locales spelled one way (Messenger `en_GB`, Alexa `en-GB`). Fields that identify a
 * person (names, ids, e-mail, phone, pictures, links, addresses) are no segment: their values are
 * one per user, which would make the segment counts as large as the user list.
 */

const LOCALE_FIELD = /locale|language|lang$/i
const LOCALE = /^([a-z]{2,3})[-_]([a-z]{2})$/i
const PERSONAL_FIELD = /name$|e-?mail|phone|pic$|picture|avatar|photo|image|url$|address|(^|_)id$|[a-z]Id$/i
/** Longer values are no segment (free text, not a category). */
const MAX_VALUE = 100

/** One spelling per locale: Messenger sends `en_GB`, Alexa `en-GB` — both count as `en_GB`. */
export function localeOf(value: string): string {
  const m = LOCALE.exec(value)
  return m ? `${(m[1] as string).toLowerCase()}_${(m[2] as string).toUpperCase()}` : value
}

/** The (field, value) pairs a user with this metadata (JSON text) is counted under; none for text that is not an object. */
export function segmentPairs(userJson: string): Array<[field: string, value: string]> {
  let user: unknown
  try {
    user = JSON.parse(userJson)
  } catch {
    return []
  }
  if (typeof user !== 'object' || user === null || Array.isArray(user)) return []
  const pairs: Array<[string, string]> = []
  for (const [key, value] of Object.entries(user)) {
    if (value === null || (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean'))
      continue
    if (PERSONAL_FIELD.test(key)) continue
    const shown = LOCALE_FIELD.test(key) ? localeOf(String(value)) : String(value)
    if (shown.length > MAX_VALUE) continue
    pairs.push([key, shown])
  }
  return pairs
}
