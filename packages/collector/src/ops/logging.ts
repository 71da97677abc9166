import { randomUUID } from 'node:crypto'
import type { NextFunction, Request, Response } from 'express'
import pino, { type Level, type Logger } from 'pino'

/** Field paths pino blanks in every log line: keys, tokens, secrets, cookies, passwords. */
export const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'password',
  '*.password',
  'passwordHash',
  '*.passwordHash',
  'appSecret',
  '*.appSecret',
  'webhookSecret',
  '*.webhookSecret',
  'verifyToken',
  '*.verifyToken',
  'metricsToken',
  '*.metricsToken',
  'sessionSecret',
  '*.sessionSecret',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
]

/**
 * The collector's logger: structured JSON lines (pino) with the secrets above redacted.
 * `false` logs nothing; a level makes one on stdout (default `warn` for the library; the CLI uses `info`).
 *
 * @example const log = createLogger('info'); log.info({ bot: 'shop' }, 'bot registered')
 */
export function createLogger(option: LogOption | undefined): Logger {
  if (option === false) return pino({ enabled: false })
  if (typeof option === 'string' || option === undefined) return make(option ?? 'warn')
  if ('child' in option && typeof option.child === 'function') return option as Logger
  const o = option as { level?: Level; stream?: NodeJS.WritableStream }
  return make(o.level ?? 'info', o.stream)
}

/** The `log` option: a pino logger of yours, a level, `{ level, stream }` (JSON lines to a stream), or false. */
export type LogOption = Logger | Level | false | { level?: Level; stream?: NodeJS.WritableStream }

function make(level: Level, stream?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    base: { service: 'convotrack-collector' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  }
  return stream ? pino(options, stream) : pino(options)
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/

/**
 * Gives each request an id (a sane incoming `X-Request-Id` is kept), answers it in
 * `X-Request-Id`, and logs one line per request: method, path (never the query string: it
 * carries the tracking key), status, duration, the signed-in name.
 *
 * @example app.use(requestLogger(log))
 */
export function requestLogger(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id')
    const id = given && REQUEST_ID.test(given) ? given : randomUUID()
    res.locals.requestId = id
    res.setHeader('x-request-id', id)
    const start = process.hrtime.bigint()
    const path = req.path
    res.on('finish', () => {
      if (res.statusCode < 500 && !log.isLevelEnabled('info')) return
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      const line = {
        reqId: id,
        method: req.method,
        path,
        status: res.statusCode,
        ms: Math.round(ms * 10) / 10,
        ...(res.locals.principal ? { user: (res.locals.principal as { name: string }).name } : {}),
        ...(res.locals.errorCode ? { error: res.locals.errorCode } : {}),
      }
      if (res.statusCode >= 500 && (res.locals.errorCode ?? 'internal_error') === 'internal_error')
        log.error(line, 'request')
      else if (res.statusCode >= 500) log.warn(line, 'request')
      else log.info(line, 'request')
    })
    next()
  }
}
