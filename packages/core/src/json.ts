import { InvalidRecordError } from './errors'

/**
 * Serializes a record to its wire JSON at call time (the snapshot: later mutation of the
 * caller's objects does not change what is sent). Values JSON cannot carry get a clear error
 * naming where they are.
 */
export function toWireJson(body: unknown, context: string): string {
  try {
    return JSON.stringify(body)
  } catch (error) {
    let found: { path: string; rule: string } | undefined
    try {
      found = findUnserializable(body)
    } catch {
      // the walk itself overflowed: nesting deeper than the stack
    }
    const rule =
      error instanceof RangeError
        ? 'is nested too deeply to serialize to JSON'
        : `cannot be serialized to JSON (${(error as Error).message})`
    throw new InvalidRecordError(found?.path ?? '', found?.rule ?? rule, context)
  }
}

/** Walks a value (only on the error path) to name the first field JSON.stringify cannot serialize. */
function findUnserializable(root: unknown): { path: string; rule: string } | undefined {
  const ancestors = new Set<unknown>()
  const walk = (value: unknown, path: string): { path: string; rule: string } | undefined => {
    if (typeof value === 'bigint')
      return { path, rule: 'is a BigInt, which JSON cannot carry: convert it to a string or number' }
    if (typeof value !== 'object' || value === null) return undefined
    if (ancestors.has(value)) return { path, rule: 'is a circular reference, which JSON cannot carry' }
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined
    ancestors.add(value)
    const entries = Array.isArray(value)
      ? value.map((v, i) => [`[${i}]`, v] as const)
      : Object.entries(value).map(([k, v]) => [`.${k}`, v] as const)
    for (const [key, child] of entries) {
      const hit = walk(child, path ? `${path}${key}` : key.replace(/^\./, ''))
      if (hit) return hit
    }
    ancestors.delete(value)
    return undefined
  }
  return walk(root, '')
}

/**
 * A JSON-safe copy of an arbitrary object graph: functions and symbols dropped, circular
 * references dropped, BigInt as string. Used for objects the user does not control, such as
 * a Lambda `context`.
 */
export function toPlainJson(value: unknown, maxDepth = 20): unknown {
  const seen = new WeakSet<object>()
  const copy = (v: unknown, depth: number): unknown => {
    if (typeof v === 'bigint') return v.toString()
    if (typeof v === 'function' || typeof v === 'symbol' || v === undefined) return undefined
    if (typeof v !== 'object' || v === null) return v
    if (seen.has(v) || depth > maxDepth) return undefined
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return (v as { toJSON: () => unknown }).toJSON()
    seen.add(v)
    let out: unknown
    if (Array.isArray(v)) out = v.map((item) => copy(item, depth + 1) ?? null)
    else {
      const o: Record<string, unknown> = {}
      for (const [k, item] of Object.entries(v)) {
        const c = copy(item, depth + 1)
        if (c !== undefined) o[k] = c
      }
      out = o
    }
    seen.delete(v)
    return out
  }
  return copy(value, 0)
}
