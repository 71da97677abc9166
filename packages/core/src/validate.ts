import { InvalidRecordError } from './errors'
import type { Intent, JsonObject } from './types'

/** Field checks shared by the serializers. Each throws {@link InvalidRecordError} naming the path and rule. */

/** True for a JSON object: not null, not an array. @example isObject({ a: 1 }) // true */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function requireObject(value: unknown, path: string, context: string): JsonObject {
  if (!isObject(value))
    throw new InvalidRecordError(path, `is required and must be an object (got ${describe(value)})`, context)
  return value
}

export function requireString(value: unknown, path: string, context: string): string {
  if (typeof value !== 'string')
    throw new InvalidRecordError(path, `is required and must be a string (got ${describe(value)})`, context)
  return value
}

export function requireNonEmptyString(value: unknown, path: string, context: string): string {
  requireString(value, path, context)
  if ((value as string).length === 0) throw new InvalidRecordError(path, 'must be a non-empty string', context)
  return value as string
}

export function optionalString(value: unknown, path: string, context: string): void {
  if (value !== undefined && typeof value !== 'string')
    throw new InvalidRecordError(path, `must be a string when present (got ${describe(value)})`, context)
}

export function optionalObject(value: unknown, path: string, context: string): void {
  if (value !== undefined && !isObject(value))
    throw new InvalidRecordError(path, `must be an object when present (got ${describe(value)})`, context)
}

export function optionalArray(value: unknown, path: string, context: string): value is unknown[] | undefined {
  if (value !== undefined && !Array.isArray(value))
    throw new InvalidRecordError(path, `must be an array when present (got ${describe(value)})`, context)
  return true
}

/** Spec: Intent — `name` string, `inputs` of `{name, value}` strings, `confidence` 0..1. */
export function validateIntent(intent: unknown, path: string, context: string): Intent {
  const o = requireObject(intent, path, context)
  requireNonEmptyString(o.name, `${path}.name`, context)
  if (o.inputs !== undefined) {
    if (!Array.isArray(o.inputs))
      throw new InvalidRecordError(`${path}.inputs`, 'must be an array of {name, value}', context)
    o.inputs.forEach((input, i) => {
      const io = requireObject(input, `${path}.inputs[${i}]`, context)
      requireString(io.name, `${path}.inputs[${i}].name`, context)
      requireString(io.value, `${path}.inputs[${i}].value`, context)
    })
  }
  if (o.confidence !== undefined) {
    if (typeof o.confidence !== 'number' || !Number.isFinite(o.confidence) || o.confidence < 0 || o.confidence > 1)
      throw new InvalidRecordError(
        `${path}.confidence`,
        `must be a number from 0.0 to 1.0 (got ${describe(o.confidence)})`,
        context,
      )
  }
  return o as unknown as Intent
}

/** Short description of a value for error messages; never prints the value itself (it may be a secret). */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  return typeof value
}
