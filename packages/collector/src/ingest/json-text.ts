const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * End (exclusive) of the JSON string literal whose opening quote is at `start`; -1 when it is
 * not closed. One pass over its characters: an escape skips the next one.
 * (Finding each quote with `indexOf` and counting the backslashes before it costs a call per
 * escaped quote: 100 000 of them held the event loop for tens of milliseconds.)
 *
 * @example jsonStringEnd('"a\\"b" x', 0) // 6
 */
export function jsonStringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === BACKSLASH) i++
    else if (c === QUOTE) return i + 1
  }
  return -1
}
