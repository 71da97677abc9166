import { jsonStringEnd } from '../ingest/json-text'

const QUOTE = 0x22
const OPEN_OBJ = 0x7b
const CLOSE_OBJ = 0x7d
const OPEN_ARR = 0x5b
const CLOSE_ARR = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

class Scanner {
  i = 0
  constructor(readonly text: string) {}

  ws(): number {
    const t = this.text
    while (this.i < t.length && isWs(t.charCodeAt(this.i))) this.i++
    return t.charCodeAt(this.i)
  }

  /** At an opening quote: moves past the closing one. */
  skipString(): void {
    const end = jsonStringEnd(this.text, this.i)
    if (end < 0) throw new SyntaxError('unterminated string')
    this.i = end
  }

  /** At a string: its value (keys are short; escapes decoded by JSON.parse). */
  readString(): string {
    const start = this.i
    this.skipString()
    const s = this.text.slice(start + 1, this.i - 1)
    return s.includes('\\') ? (JSON.parse(this.text.slice(start, this.i)) as string) : s
  }

  /** Moves past one value (after leading whitespace). */
  skipValue(): void {
    const t = this.text
    const c = this.ws()
    if (c === QUOTE) {
      this.skipString()
      return
    }
    if (c === OPEN_OBJ || c === OPEN_ARR) {
      let depth = 0
      while (this.i < t.length) {
        const d = t.charCodeAt(this.i)
        if (d === QUOTE) {
          this.skipString()
          continue
        }
        if (d === OPEN_OBJ || d === OPEN_ARR) depth++
        else if (d === CLOSE_OBJ || d === CLOSE_ARR) {
          depth--
          if (depth === 0) {
            this.i++
            return
          }
        }
        this.i++
      }
      throw new SyntaxError('unterminated value')
    }
    // Number or literal: up to the next delimiter.
    while (this.i < t.length) {
      const d = t.charCodeAt(this.i)
      if (d === COMMA || d === CLOSE_OBJ || d === CLOSE_ARR || isWs(d)) return
      this.i++
    }
  }

  /** At `{`: calls `onKey` with each key, positioned at its value; onKey must move past the value. */
  object(onKey: (key: string) => void): void {
    this.i++ // {
    if (this.ws() === CLOSE_OBJ) {
      this.i++
      return
    }
    for (;;) {
      this.ws()
      const key = this.readString()
      if (this.ws() !== COLON) throw new SyntaxError('expected :')
      this.i++
      this.ws()
      onKey(key)
      const c = this.ws()
      this.i++
      if (c === CLOSE_OBJ) return
      if (c !== COMMA) throw new SyntaxError('expected , or }')
    }
  }
}

/**
 * Where each `records[i].body` value sits in the text of a batch (`{"records":[{…,"body":{…}}]}`),
 * as `[start, end)` offsets, so a record is stored with its JSON exactly as the sender wrote it —
 * as `POST /track` stores its raw body. `undefined` for an element that is not an object or has
 * no `body`; the whole answer `undefined` when `records` is not an array. Call only on text that
 * `JSON.parse` accepted. Like `JSON.parse`, the last of repeated keys wins.
 *
 * @example batchBodySpans('{"records":[{"body":{"a":1}}]}') // [[20, 27]]
 */
export function batchBodySpans(text: string): Array<[number, number] | undefined> | undefined {
  const s = new Scanner(text)
  if (s.ws() !== OPEN_OBJ) return undefined
  let spans: Array<[number, number] | undefined> | undefined
  s.object((key) => {
    if (key !== 'records' || s.ws() !== OPEN_ARR) {
      if (key === 'records') spans = undefined
      s.skipValue()
      return
    }
    const found: Array<[number, number] | undefined> = []
    s.i++ // [
    if (s.ws() === CLOSE_ARR) s.i++
    else
      for (;;) {
        let span: [number, number] | undefined
        if (s.ws() === OPEN_OBJ)
          s.object((field) => {
            if (field !== 'body') {
              s.skipValue()
              return
            }
            const start = s.i
            s.skipValue()
            span = [start, s.i]
          })
        else s.skipValue()
        found.push(span)
        const c = s.ws()
        s.i++
        if (c === CLOSE_ARR) break
        if (c !== COMMA) throw new SyntaxError('expected , or ]')
      }
    spans = found
  })
  return spans
}
