import type { Request } from 'express'
import { RequestError } from '../errors'

/**
 * A numeric query parameter: `undefined` when absent or empty, else a finite number, else a 400
 * `invalid_request` naming it — the same answer on every `/api` route (`?limit=abc`).
 *
 * @example const limit = intParam(req, 'limit') ?? 200
 */
export function intParam(req: Request, name: string): number | undefined {
  const v = req.query[name]
  if (v === undefined || v === '') return undefined
  const n = typeof v === 'string' ? Number(v) : Number.NaN
  if (!Number.isFinite(n)) throw new RequestError(400, 'invalid_request', `query \`${name}\` must be a number`, name)
  return n
}
