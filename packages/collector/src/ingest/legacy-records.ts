import {
  InvalidWireRecordError,
  isObject,
  isPlatform,
  type Platform,
  type RecordType,
  validateWireRecord,
  valueAt,
} from '@convotrack/core'

/**
 * The legacy layer: what the official dashbot SDK (npm `dashbot` 12.1.0) really sends and the
 * spec does not describe. Used only for records whose `v` is not one of the spec's values
 * (the SDK sends `12.1.0-npm`, `-botkit`, `-kiknpm`, `-rest`); a record that passes the
 * spec's own check never gets here. Each case is in the README's table.
 */

/** `platform` values the dashbot SDK sends that the spec does not list. @example LEGACY_PLATFORMS.includes('webchat') // true */
export const LEGACY_PLATFORMS = ['microsoft', 'webchat', 'botcopy', 'recast', 'skype', 'viber', 'wechat'] as const
/** One of {@link LEGACY_PLATFORMS}. @example const p: LegacyPlatform = 'microsoft' */
export type LegacyPlatform = (typeof LEGACY_PLATFORMS)[number]

/** Every `platform` a stored record may have. @example const p: RecordPlatform = 'slack' */
export type RecordPlatform = Platform | LegacyPlatform

/** `type` values the dashbot SDK sends that the spec does not list: Messenger `log()` and Slack `logConnect()`. @example LEGACY_TYPES // ['all', 'connect'] */
export const LEGACY_TYPES = ['all', 'connect'] as const

/**
 * The user of a dashbot-SDK universal / generic / SMS message sent without `userId` (the old
 * service took them; its own test data has one): stored under this clearly labelled name rather
 * than refused. The spec's versions still require `userId`.
 */
export const ANONYMOUS_USER = 'anonymous (no userId sent)'
/** One of {@link LEGACY_TYPES}. @example const t: LegacyType = 'connect' */
export type LegacyType = (typeof LEGACY_TYPES)[number]

/** Every `type` a stored record may have. @example const t: StoredRecordType = 'incoming' */
export type StoredRecordType = RecordType | LegacyType

/** The legacy platforms whose records are universal messages (`{ text, userId, … }`). */
const UNIVERSAL_SHAPED = new Set<string>(['webchat', 'botcopy', 'recast', 'skype', 'viber', 'wechat'])

/** Event types whose SDK helpers (`createPageLaunchEvent`, `createShareEvent`, `createRevenueEvent`) send no `name`. */
const DEFAULT_EVENT_NAMES: Record<string, string> = {
  pageLaunchEvent: 'pageLaunch',
  shareEvent: 'share',
  revenueEvent: 'revenue',
}

export function isLegacyPlatform(value: string): value is LegacyPlatform {
  return (LEGACY_PLATFORMS as readonly string[]).includes(value)
}

export function isLegacyType(value: string): value is LegacyType {
  return (LEGACY_TYPES as readonly string[]).includes(value)
}

/** The name an event is counted under: its own, else one from its type (SDK helpers without `name`). */
export function eventName(body: Record<string, unknown>): string {
  if (typeof body.name === 'string' && body.name !== '') return body.name
  // Own keys only: a `type` of `constructor` or an object must not reach the prototype or toString.
  return typeof body.type === 'string' && Object.hasOwn(DEFAULT_EVENT_NAMES, body.type)
    ? (DEFAULT_EVENT_NAMES[body.type] ?? '')
    : ''
}

/** The platform whose shape a record has: `universal` for the universal-shaped legacy platforms. */
export function shapeOf(platform: RecordPlatform): RecordPlatform {
  return UNIVERSAL_SHAPED.has(platform) ? 'universal' : platform
}

function fail(path: string, rule: string, value: unknown): never {
  throw new InvalidWireRecordError(path, rule, value === undefined ? 'missing_field' : 'invalid_field')
}

function needString(body: unknown, path: string, rule = 'is required and must be a string'): void {
  const v = valueAt(body, path)
  if (typeof v !== 'string' || v === '')
    throw new InvalidWireRecordError(path, rule, v === undefined ? 'missing_field' : 'invalid_field')
}

function needObject(body: unknown, path: string, rule = 'is required and must be an object'): void {
  const v = valueAt(body, path)
  if (!isObject(v)) throw new InvalidWireRecordError(path, rule, v === undefined ? 'missing_field' : 'invalid_field')
}

/**
 * Checks a record from a legacy client: the spec's check first; when that fails, the legacy
 * rule for this platform and type, if there is one. Throws the spec's error when no legacy
 * rule accepts the record, so the answer names what the spec requires.
 *
 * @example validateLegacyRecord('webchat', 'incoming', { text: 'hi', userId: 'u1' })
 */
export function validateLegacyRecord(platform: RecordPlatform, type: StoredRecordType, body: unknown): void {
  if (!isObject(body)) fail('', 'must be a JSON object', body)
  const b = body as Record<string, unknown>
  if (type === 'connect') return // Slack `logConnect(rtm.start answer)`: bot metadata, kept as is.
  // `microsoftDeprecated` (botbuilder v3 middleware): `{ is_microsoft, json: <v3 message> }` on any platform.
  if (isV3Envelope(b) && type !== 'event') return
  if (type === 'all') {
    if (platform !== 'facebook')
      throw new InvalidWireRecordError(
        'type',
        '`all` is sent only for platform facebook (Messenger `log()`)',
        'invalid_field',
      )
    messengerWebhookLenient(b)
    return
  }
  const shape = shapeOf(platform)
  if (type === 'event') {
    // Only an absent name is filled in, and only for the helpers that never send one.
    const fallback = b.name === undefined ? eventName(b) : ''
    validateWireRecord('universal', 'event', fallback ? { ...b, name: fallback } : b)
    return
  }
  if (platform === 'microsoft') {
    activity(b)
    return
  }
  if (platform === 'google' && isObject(b.request_body)) return // api.ai / Actions on Google / Dialogflow request
  if (!isPlatform(shape)) fail('', 'is not a known record shape', b)
  try {
    validateWireRecord(shape, type, b)
  } catch (strict) {
    if (!(strict instanceof InvalidWireRecordError)) throw strict
    if (!legacyShape(shape, type, b)) throw strict
  }
}

/** The legacy rule for a native shape the spec check refused; true when it accepts the record. */
function legacyShape(platform: Platform, type: RecordType, b: Record<string, unknown>): boolean {
  try {
    switch (platform) {
      case 'universal':
      case 'generic':
      case 'sms':
      case 'twitter':
        // LINE (`line.logOutgoing`) sends images as `{ image: { url } }`; a message without
        // `userId` belongs to the anonymous user.
        validateWireRecord('universal', type, {
          ...b,
          images: lineImages(b.images),
          userId: b.userId === undefined && type !== 'event' ? ANONYMOUS_USER : b.userId,
        })
        return true
      case 'facebook':
        if (type === 'incoming') messengerWebhookLenient(b)
        else needString(b, 'json.recipient.id') // Botkit `send`: no uri, `responseBody: null`
        return true
      case 'slack':
        // chat.postMessage replies have no `type`; RTM events (hello, presence…) no channel;
        // `bot.id` is missing when neither the bot nor the team names it.
        needObject(b, 'team')
        needObject(b, 'message')
        return true
      case 'alexa':
        // `alexa.logOutgoing(event, response)` with a response built by hand: no `version`.
        needObject(b, 'event')
        if (type === 'outgoing') needObject(b, 'response')
        return true
      default:
        return false
    }
  } catch (e) {
    if (e instanceof InvalidWireRecordError) return false
    throw e
  }
}

/** A botbuilder v3 message as `microsoftDeprecated` posts it. */
export function isV3Envelope(b: Record<string, unknown>): boolean {
  return b.is_microsoft === true && isObject(b.json)
}

/** LINE image items `{ image: { url } }` as the spec's `{ url }`. */
export function lineImages(images: unknown): unknown {
  if (!Array.isArray(images)) return images
  return images.map((img) => {
    const url = isObject(img) && isObject(img.image) ? img.image.url : undefined
    return typeof url === 'string' ? { url } : img
  })
}

/** A Messenger webhook body as Botkit's `receive` rebuilds it: entries without `id`, items without `recipient`. */
function messengerWebhookLenient(b: Record<string, unknown>): void {
  if (!Array.isArray(b.entry)) fail('entry', 'is required and must be an array', b.entry)
  ;(b.entry as unknown[]).forEach((e, i) => {
    needObject(b, `entry[${i}]`)
    const items = isObject(e) ? e.messaging : undefined
    if (!Array.isArray(items))
      throw new InvalidWireRecordError(`entry[${i}].messaging`, 'is required and must be an array', 'missing_field')
    items.forEach((item, j) => {
      const m = `entry[${i}].messaging[${j}]`
      if (!isObject(item)) throw new InvalidWireRecordError(m, 'must be an object', 'invalid_field')
      if (typeof valueAt(item, 'sender.id') !== 'string' && typeof valueAt(item, 'recipient.id') !== 'string')
        throw new InvalidWireRecordError(`${m}.sender.id`, 'is required and must be a string', 'missing_field')
    })
  })
}

/** A Bot Framework Activity (`microsoft.middleware()` / `logIncoming` / `logOutgoing`). */
function activity(b: Record<string, unknown>): void {
  needString(b, 'type', 'is required: a Bot Framework Activity type (message, conversationUpdate…)')
}
