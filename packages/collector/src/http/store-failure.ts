import type { Response } from 'express'
import { RequestError } from '../errors'

/**
 * Answers a tracking request whose store call failed because the store is down: logged (the
 * error's message, never the record), 503 `store_unavailable` with `Retry-After: 1` so the
 * tracker keeps the records and sends them again, and no `Convotrack-Batch` advertisement.
 *
 * @example answerStoreFailure(res, e, 'record', 'the record store is unavailable; retry the record')
 */
export function answerStoreFailure(res: Response, error: unknown, what: 'record' | 'batch', message: string): void {
  console.error(`[convotrack-collector] store failed; ${what} answered 503`, (error as Error)?.message ?? error)
  res.removeHeader('Convotrack-Batch')
  res
    .status(503)
    .setHeader('retry-after', '1')
    .json(new RequestError(503, 'store_unavailable', message, '').toJSON())
}
