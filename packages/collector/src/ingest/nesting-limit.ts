import { RequestError } from '../errors'

/**
 * How deeply a record's body may nest objects and arrays (the body itself is level 1). Every
 * platform's shape fits in a fraction of it (an Alexa envelope is 7 deep, a Slack block kit
 * message about 10); past it a record is refused, so the store, the live feed and every read
 * (SQLite's JSON functions stop at 1000 levels, `JSON.stringify` at a few thousand) only ever
 * see shallow JSON.
 */
export const MAX_NESTING = 64

interface Frame {
  value: object
  depth: number
  key: string | number | undefined
  parent: Frame | undefined
}

function pathOf(frame: Frame): string {
  const keys: Array<string | number> = []
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) keys.push(f.key)
  return keys.reverse().reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : p ? `${p}.${k}` : k), '')
}

/**
 * The path (`a.b[0].c`) of the first object or array nested deeper than `max` levels in
 * `value`, or `undefined` when it nests no deeper. Walks with its own stack, never recursion,
 * so any depth `JSON.parse` produced is measured without touching the call stack.
 *
 * @example tooDeepAt({ a: { b: {} } }, 2) // 'a.b'
 */
export function tooDeepAt(value: unknown, max: number = MAX_NESTING): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const stack: Frame[] = [{ value, depth: 1, key: undefined, parent: undefined }]
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > max) return pathOf(frame)
    const v = frame.value
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const item: unknown = v[i]
        if (typeof item === 'object' && item !== null)
          stack.push({ value: item, depth: frame.depth + 1, key: i, parent: frame })
      }
    } else
      for (const key of Object.keys(v)) {
        const item = (v as Record<string, unknown>)[key]
        if (typeof item === 'object' && item !== null)
          stack.push({ value: item, depth: frame.depth + 1, key, parent: frame })
      }
  }
  return undefined
}

/**
 * Refuses a body nested deeper than {@link MAX_NESTING}: 400 `invalid_field` naming the path
 * of the first value past the limit.
 *
 * @example checkNesting(JSON.parse(raw))
 */
export function checkNesting(body: unknown): void {
  const path = tooDeepAt(body)
  if (path !== undefined)
    throw new RequestError(
      400,
      'invalid_field',
      `\`${path.length > 200 ? `${path.slice(0, 200)}…` : path}\` is nested deeper than ${MAX_NESTING} levels of objects and arrays (the collector's limit)`,
      path,
    )
}
