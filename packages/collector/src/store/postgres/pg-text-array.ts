const QUOTE = 0x22
const BACKSLASH = 0x5c
/** Control characters, which JSON escapes differently from an array literal, and lone surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const NOT_PLAIN = /[\u0000-\u001f\ud800-\udfff]/u

/** One element of an array literal: quoted, `"` and `\` escaped. */
function element(value: string): string {
  if (value.indexOf('"') < 0 && value.indexOf('\\') < 0) return `"${value}"`
  // Without control characters or lone surrogates, JSON escapes exactly `"` and `\`, as the
  // array literal does — natively.
  if (!NOT_PLAIN.test(value)) return JSON.stringify(value)
  // Else byte by byte (UTF-8 replaces a lone surrogate as the driver would).
  const bytes = Buffer.from(value, 'utf8')
  let specials = 0
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === QUOTE || bytes[i] === BACKSLASH) specials++
  const out = Buffer.allocUnsafe(bytes.length + specials + 2)
  let j = 0
  out[j++] = QUOTE
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number
    if (c === QUOTE || c === BACKSLASH) out[j++] = BACKSLASH
    out[j++] = c
  }
  out[j] = QUOTE
  return out.toString('utf8')
}

/**
 * A `text[]` query parameter written as PostgreSQL's array literal by the store itself. node-pg
 * escapes array elements with two global regex replaces, which hold the event loop for hundreds
 * of milliseconds on a value made of escaped quotes and backslashes (`\"` a hundred thousand
 * times); here such a value is escaped natively (`JSON.stringify` escapes the same two
 * characters) or in one pass over its bytes. Pass it where the array would go (`$1::text[]`).
 *
 * @example await client.query('SELECT unnest($1::text[])', [textArray(['a"b', null])])
 */
export function textArray(values: ReadonlyArray<string | null | undefined>): { toPostgres(): string } {
  return {
    toPostgres: () => `{${values.map((v) => (v === null || v === undefined ? 'NULL' : element(v))).join(',')}}`,
  }
}
