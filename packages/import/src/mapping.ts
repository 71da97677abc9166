/**
 * From one row of an export (a JSON object, a CSV row) to a universal message (spec: Universal
 * message; 4.4 third-party pull integrations), through a field mapping such as
 * `text=body,userId=author.id`.
 */
import {
  ConfigError,
  type Intent,
  InvalidRecordError,
  type JsonObject,
  toWireJson,
  type UniversalMessage,
  validateUniversal,
} from '@convotrack/core'

/** Fields a mapping can fill, e.g. `MAPPED_FIELDS.includes('userId')`. */
export const MAPPED_FIELDS = [
  'text',
  'userId',
  'conversationId',
  'sessionId',
  'timestamp',
  'direction',
  'intent',
] as const

/** A field of the universal message (or `timestamp` / `direction`) the source fills. */
export type MappedField = (typeof MAPPED_FIELDS)[number]

/** Where each field comes from in the source row: a key, or a dotted path into nested JSON (`author.id`). Unmapped fields are read from a key of the same name. */
export type FieldMapping = Partial<Record<MappedField, string>>

/** Whether a record is the user's message (`incoming`, the default) or the bot's / agent's (`outgoing`). */
export type Direction = 'incoming' | 'outgoing'

/** A row mapped and validated: what to post, and which way. */
export interface MappedRecord {
  direction: Direction
  message: UniversalMessage
}

/** Options of {@link mapRecord}. */
export interface MapOptions {
  /** Put the source row in `platformJson` (default true): the transcript then shows the original. */
  platformJson?: boolean
}

/**
 * Parses a mapping flag: comma-separated `field=sourceKey` pairs.
 *
 * @example parseMapping('text=body,userId=author.id,direction=kind') // { text: 'body', userId: 'author.id', direction: 'kind' }
 */
export function parseMapping(spec: string): FieldMapping {
  const mapping: FieldMapping = {}
  for (const part of spec.split(',')) {
    const pair = part.trim()
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const field = (eq < 0 ? pair : pair.slice(0, eq)).trim()
    const source = eq < 0 ? '' : pair.slice(eq + 1).trim()
    if (!(MAPPED_FIELDS as readonly string[]).includes(field))
      throw new ConfigError(
        `--map: unknown field "${field}"; map any of ${MAPPED_FIELDS.join(', ')} (e.g. text=body,userId=author)`,
      )
    if (source === '')
      throw new ConfigError(`--map: "${pair}" needs a source column or key after "=" (e.g. ${field}=my_column)`)
    mapping[field as MappedField] = source
  }
  return mapping
}

/**
 * Maps and validates one source row. Throws {@link InvalidRecordError} naming the message
 * field and the source key it came from.
 *
 * @example mapRecord({ body: 'hi', author: 'u1' }, { text: 'body', userId: 'author' }) // { direction: 'incoming', message: { text: 'hi', userId: 'u1', platformJson: {…} } }
 */
export function mapRecord(row: unknown, mapping: FieldMapping = {}, options: MapOptions = {}): MappedRecord {
  if (typeof row !== 'object' || row === null || Array.isArray(row))
    throw new InvalidRecordError('', `must be a JSON object with the message fields (got ${kind(row)})`, '')
  const source = row as JsonObject
  const from = (field: MappedField) => mapping[field] ?? field
  const read = (field: MappedField) => lookup(source, from(field))
  const fail = (field: MappedField, rule: string): never => {
    throw new InvalidRecordError(field, `${rule} (read from "${from(field)}")`, '')
  }

  const message: Record<string, unknown> = {}
  const text = read('text')
  if (typeof text === 'string') message.text = text
  else if (typeof text === 'number' && Number.isFinite(text)) message.text = String(text)
  else fail('text', `is required and must be a string (got ${kind(text)})`)

  const userId = asId(read('userId'))
  if (userId === undefined || userId === '')
    fail('userId', `is required and must be a non-empty string (got ${kind(read('userId'))})`)
  message.userId = userId
  for (const field of ['conversationId', 'sessionId'] as const) {
    const raw = read(field)
    const id = asId(raw)
    if (raw !== undefined && raw !== null && raw !== '' && id === undefined)
      fail(field, `must be a string when present (got ${kind(raw)})`)
    if (id) message[field] = id
  }

  const intent = read('intent')
  if (intent !== undefined && intent !== null && intent !== '') message.intent = toIntent(intent)

  let direction: Direction = 'incoming'
  const dir = read('direction')
  if (dir !== undefined && dir !== null && dir !== '') {
    const d = typeof dir === 'string' ? dir.trim().toLowerCase() : dir
    if (d === 'incoming' || d === 'outgoing') direction = d
    else
      fail(
        'direction',
        `must be "incoming" or "outgoing" (got ${typeof dir === 'string' ? JSON.stringify(dir) : kind(dir)})`,
      )
  }

  const ts = read('timestamp')
  let timestamp: string | undefined
  if (ts !== undefined && ts !== null && ts !== '') {
    timestamp = toIsoTimestamp(ts)
    if (timestamp === undefined)
      fail(
        'timestamp',
        `must be an ISO 8601 date or epoch seconds/milliseconds (got ${typeof ts === 'string' ? JSON.stringify(ts) : kind(ts)})`,
      )
  }

  if (options.platformJson !== false) {
    const platformJson: JsonObject = { ...source }
    if (timestamp) platformJson.timestamp = timestamp
    message.platformJson = platformJson
  }
  // The same rules the tracker applies (spec 4.2 rule 1), so nothing validated here is refused
  // there — JSON's own included (a cycle or BigInt in a row built by code).
  const checked = validateUniversal(message, '')
  toWireJson(checked, '')
  return { direction, message: checked }
}

/** `a.b.c` into nested objects; an exact key wins (CSV headers may contain dots). */
function lookup(row: JsonObject, path: string): unknown {
  if (Object.hasOwn(row, path)) return row[path]
  let value: unknown = row
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as JsonObject)[key]
  }
  return value
}

/** Ids exported as numbers (common in helpdesk exports) become strings. */
function asId(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim()
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}

function toIntent(value: unknown): Intent {
  if (typeof value === 'string') return { name: value.trim() }
  return value as Intent // an intent object; validateUniversal checks it
}

/**
 * A source timestamp as ISO 8601: epoch seconds (< 1e12), epoch milliseconds, or a date string `Date.parse` reads; undefined when unreadable.
 *
 * @example toIsoTimestamp(1700000000) // '2023-11-14T22:13:20.000Z'
 */
export function toIsoTimestamp(value: unknown): string | undefined {
  const numeric =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)
        ? Number(value)
        : undefined
  let ms: number
  if (numeric !== undefined) ms = numeric < 1e12 ? numeric * 1000 : numeric
  else if (typeof value === 'string') ms = Date.parse(value)
  else return undefined
  if (!Number.isFinite(ms)) return undefined
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

function kind(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (value === '') return 'an empty string'
  return `a ${typeof value}`
}
