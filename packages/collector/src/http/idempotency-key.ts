import { RequestError } from '../errors'

/** The protocol's idempotency key: 1–128 characters of `[A-Za-z0-9._:-]`. */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Checks a sender's per-record id (`Idempotency-Key` header or a batch record's
 * `idempotencyKey`): absent (`undefined` / `null`) gives `undefined`; otherwise it must be 1–128
 * characters of `A-Z a-z 0-9 . _ : -`, else a 400 `invalid_field` naming `path`.
 *
 * @example checkIdempotencyKey(req.get('idempotency-key'), 'idempotency-key') // 'k1.0'
 */
export function checkIdempotencyKey(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string' && IDEMPOTENCY_KEY.test(value)) return value
  throw new RequestError(
    400,
    'invalid_field',
    `\`${path}\` must be 1–128 characters of A-Z a-z 0-9 . _ : - (got ${typeof value === 'string' ? `${value.length} characters` : Array.isArray(value) ? 'array' : typeof value})`,
    path,
  )
}
