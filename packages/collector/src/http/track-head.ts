import type { BotRegistry } from '../access/bot-registry'
import { RequestError } from '../errors'
import type { BotConfig } from '../options'

/** `application/json`, with or without parameters, and `application/*+json`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false
  const type = header.split(';')[0]?.trim().toLowerCase() ?? ''
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** The `charset` parameter of a Content-Type, lower-cased and unquoted; undefined when absent. */
function charsetOf(header: string | undefined): string | undefined {
  for (const param of (header ?? '').split(';').slice(1)) {
    const eq = param.indexOf('=')
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    return param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase()
  }
  return undefined
}

/**
 * The query's `apiKey`, or 401 `missing_api_key` when it is absent or empty.
 *
 * @example requireApiKey(new URL(req.originalUrl, 'http://collector').searchParams.get('apiKey'))
 */
export function requireApiKey(apiKey: string | null | undefined): string {
  if (!apiKey)
    throw new RequestError(
      401,
      'missing_api_key',
      'query `apiKey` is required: the tracking key of the bot or skill',
      'apiKey',
    )
  return apiKey
}

/**
 * The head checks of `POST /track` and `POST /track/batch`, in order: the bot whose tracking key
 * `apiKey` is (else 401 `invalid_api_key`), then a JSON `Content-Type` (else 415, naming `what`
 * is sent).
 *
 * @example const bot = checkTrackHead(bots, apiKey, req.headers['content-type'], 'record')
 */
export function checkTrackHead(
  bots: BotRegistry,
  apiKey: string,
  contentType: string | undefined,
  what: 'record' | 'batch',
): BotConfig {
  const bot = bots.forKey(apiKey)
  if (!bot)
    throw new RequestError(401, 'invalid_api_key', 'query `apiKey` is not the key of a registered bot', 'apiKey')
  if (!isJsonContentType(contentType))
    throw new RequestError(
      415,
      'unsupported_media_type',
      `send the ${what} as JSON with \`Content-Type: application/json\``,
      'content-type',
    )
  const charset = charsetOf(contentType)
  // JSON is UTF-8 (RFC 8259): another charset would be decoded wrongly, not ignored.
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new RequestError(
      415,
      'unsupported_media_type',
      `send the ${what} as UTF-8 JSON (got charset=${charset.slice(0, 40)})`,
      'content-type',
    )
  return bot
}
