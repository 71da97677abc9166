/**
 * The query parameters every dashboard read shares: `?bot=` with the caller's bot scope, the
 * range (`from`, `to`, `tz`, `all`), numbers, and `?format=csv` answers.
 */
import type { Request, Response } from 'express'
import { scopeOf } from '../access/auth'
import { RequestError } from '../errors'
import { RangeParamError, type ReportRange, rangeOf } from '../reports/range'
import type { ReadFilter } from '../store/store'
import { type CsvColumn, toCsv } from './csv'

export { intParam } from './query-params'

/** `?bot=` and the caller's bot scope (the access gate refused bots out of scope already). */
export function filterOf(req: Request, res: Response): ReadFilter {
  const bot = typeof req.query.bot === 'string' && req.query.bot !== '' ? req.query.bot : undefined
  const bots = scopeOf(res)
  return { ...(bot === undefined ? {} : { bot }), ...(bots === undefined ? {} : { bots }) }
}

/**
 * The request's range (`from`, `to`, `tz`, `all`; default the last 30 days), as filter fields;
 * the answer says which range it covers (`X-Range-From` / `X-Range-To` / `X-Range-Tz` headers).
 */
export function rangeFilter(req: Request, res: Response, defaultMs?: number): ReportRange {
  let range: ReportRange
  try {
    range = rangeOf(req.query as Record<string, unknown>, Date.now(), defaultMs)
  } catch (e) {
    if (e instanceof RangeParamError) throw new RequestError(400, 'invalid_request', e.message, e.param)
    throw e
  }
  res.setHeader('X-Range-From', String(range.from))
  if (range.to !== null) res.setHeader('X-Range-To', String(range.to))
  res.setHeader('X-Range-Tz', range.tz)
  return range
}

/** `?bot=`, the caller's bot scope and the range. */
export function readOf(req: Request, res: Response, defaultMs?: number): ReadFilter & ReportRange {
  return { ...filterOf(req, res), ...rangeFilter(req, res, defaultMs) }
}

/** `?format=`: `json` (default) or `csv`. */
export function formatOf(req: Request): 'json' | 'csv' {
  const f = req.query.format
  if (f === undefined || f === '' || f === 'json') return 'json'
  if (f === 'csv') return 'csv'
  throw new RequestError(400, 'invalid_request', 'query `format` must be json or csv', 'format')
}

/**
 * Answers a report: its JSON `body`, or with `?format=csv` its `rows` as a CSV download named
 * `name.csv` (the same rows the view shows).
 */
export function sendReport<Row>(
  req: Request,
  res: Response,
  name: string,
  body: unknown,
  rows: Iterable<Row>,
  columns: ReadonlyArray<CsvColumn<Row>>,
): void {
  if (formatOf(req) === 'json') {
    res.json(body)
    return
  }
  res.setHeader('Content-Type', 'text/csv; charset=utf-8')
  res.setHeader('Content-Disposition', `attachment; filename="${name}.csv"`)
  res.send(toCsv(rows, columns))
}

/** A CSV column reading one field. */
export const col = <Row>(header: string, value: (row: Row) => unknown): CsvColumn<Row> => ({ header, value })

/** An instant as ISO 8601 for a CSV cell (spreadsheets read it as a date). */
export const isoTime = (t: number): string => new Date(t).toISOString()
