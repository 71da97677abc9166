import { InvalidRecordError } from './errors'
import { serializeEvent } from './platforms/events'
import { validateUniversal } from './platforms/universal'
import type { ApiVersion, Platform, RecordType, TrackedEvent } from './types'
import { API_VERSIONS, PLATFORMS, RECORD_TYPES } from './types'
import { describe, isObject, validateIntent } from './validate'

/**
 * The one home of each wire shape on the receiving side: what a tracking service accepts for
 * each `platform` × `type`, exactly as the spec says (the collector's strict path uses it).
 */

/** Why a record broke the spec: the field is absent, present but wrong, misplaced, or the shape is not a record. */
export type WireViolation = 'missing_field' | 'invalid_field' | 'misplaced_intent' | 'unsupported_record'

/**
 * A posted record that does not follow the spec. An {@link InvalidRecordError} (same `path`
 * and `rule`) that also says which kind of rule it broke.
 *
 * @example try { validateWireRecord('slack', 'incoming', {}) } catch (e) { if (e instanceof InvalidWireRecordError) e.violation } // 'missing_field'
 */
export class InvalidWireRecordError extends InvalidRecordError {
  readonly violation: WireViolation
  constructor(path: string, rule: string, violation: WireViolation) {
    super(path, rule)
    this.violation = violation
  }
}

/** `MAJOR.MINOR.PATCH-suffix`: the form of every `v` value seen (`11.1.0-rest`, `12.1.0-npm`…). */
const VERSION_FORM = /^\d{1,6}\.\d{1,6}\.\d{1,6}-[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/

/**
 * True for a `v` of the form `MAJOR.MINOR.PATCH-suffix` (the spec shows two such values and
 * leaves the rules open).
 *
 * @example isVersionForm('12.1.0-npm') // true
 */
export function isVersionForm(v: string): boolean {
  return VERSION_FORM.test(v)
}

/** True for one of the `v` values the spec shows (what convotrack's trackers send). @example isSpecVersion('11.1.0-rest') // true */
export function isSpecVersion(v: string): v is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(v)
}

/** @example isPlatform('slack') // true */
export function isPlatform(value: unknown): value is Platform {
  return typeof value === 'string' && (PLATFORMS as readonly string[]).includes(value)
}

/** @example isRecordType('event') // true */
export function isRecordType(value: unknown): value is RecordType {
  return typeof value === 'string' && (RECORD_TYPES as readonly string[]).includes(value)
}

/** Value at a dotted path such as `entry[0].messaging[1].sender.id`; '' is the root. @example valueAt({ a: [{ b: 1 }] }, 'a[0].b') // 1 */
export function valueAt(root: unknown, path: string): unknown {
  if (!path) return root
  let cur: unknown = root
  for (const part of path.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (part === '') continue
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}

type Obj = Record<string, unknown>

/** `missing_field` when the value is absent, else `invalid_field`. */
function fail(path: string, value: unknown, rule: string): never {
  const missing = value === undefined
  throw new InvalidWireRecordError(
    path,
    `${rule}${missing ? '' : ` (got ${describe(value)})`}`,
    missing ? 'missing_field' : 'invalid_field',
  )
}

/** Runs one of the serializers' validators on the record and re-throws its error with the violation kind. */
function via(root: unknown, check: () => unknown): void {
  try {
    check()
  } catch (e) {
    if (!(e instanceof InvalidRecordError) || e instanceof InvalidWireRecordError) throw e
    const value = valueAt(root, e.path)
    throw new InvalidWireRecordError(e.path, e.rule, value === undefined ? 'missing_field' : 'invalid_field')
  }
}

class Shape {
  constructor(readonly root: unknown) {}
  at(path: string): unknown {
    return valueAt(this.root, path)
  }
  obj(path: string, rule = 'is required and must be an object'): Obj {
    const v = this.at(path)
    if (!isObject(v)) fail(path, v, rule)
    return v
  }
  str(path: string, nonEmpty = false): string {
    const v = this.at(path)
    if (typeof v !== 'string') fail(path, v, 'is required and must be a string')
    if (nonEmpty && v.length === 0) fail(path, v, 'must be a non-empty string')
    return v
  }
  num(path: string): number {
    const v = this.at(path)
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, v, 'is required and must be a number')
    return v
  }
  arr(path: string, nonEmpty = false): unknown[] {
    const v = this.at(path)
    if (!Array.isArray(v)) fail(path, v, 'is required and must be an array')
    if (nonEmpty && v.length === 0) fail(path, v, 'must hold at least one item')
    return v
  }
  optStr(path: string): void {
    const v = this.at(path)
    if (v !== undefined && typeof v !== 'string') fail(path, v, 'must be a string when present')
  }
  optNum(path: string): void {
    const v = this.at(path)
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v)))
      fail(path, v, 'must be a number when present')
  }
  optBool(path: string): void {
    const v = this.at(path)
    if (v !== undefined && typeof v !== 'boolean') fail(path, v, 'must be a boolean when present')
  }
  optObj(path: string): boolean {
    const v = this.at(path)
    if (v !== undefined && !isObject(v)) fail(path, v, 'must be an object when present')
    return v !== undefined
  }
  intent(path: string): void {
    if (this.at(path) !== undefined) via(this.root, () => validateIntent(this.at(path), path, ''))
  }
  /** A root `intent` on a shape whose intent lives elsewhere (spec: Intent, placement). */
  misplaced(path: string, where: string): void {
    if (this.at(path) !== undefined)
      throw new InvalidWireRecordError(
        path,
        `is not where this shape carries its intent: put it ${where} (spec: Intent)`,
        'misplaced_intent',
      )
  }
}

/**
 * Checks a posted record against the shape its `platform` and `type` name, exactly as the
 * spec says (4.2, "Platform-native message shapes", Event record). Throws
 * {@link InvalidWireRecordError} naming the field and the rule.
 *
 * @example validateWireRecord('universal', 'incoming', { text: 'hi', userId: 'u1' })
 */
export function validateWireRecord(platform: Platform, type: RecordType, body: unknown): void {
  if (!isObject(body)) fail('', body, 'must be a JSON object')
  const s = new Shape(body)
  if (type === 'event') {
    via(body, () => serializeEvent(body as unknown as TrackedEvent))
    return
  }
  switch (platform) {
    case 'universal':
    case 'generic':
    case 'sms':
      via(body, () => validateUniversal(body))
      return
    case 'twitter':
      via(body, () => validateUniversal(body))
      if (s.optObj('platformJson') && s.at('platformJson.direct_message_events') !== undefined)
        s.arr('platformJson.direct_message_events')
      return
    case 'facebook':
      if (type === 'incoming') messengerIncoming(s)
      else messengerOutgoing(s)
      return
    case 'slack':
      slack(s)
      return
    case 'kik':
      kik(s, type)
      return
    case 'alexa':
      if (type === 'incoming') alexaIncoming(s)
      else alexaOutgoing(s)
      return
    case 'google':
      throw new InvalidWireRecordError(
        'type',
        'must be event for platform `google`: it carries events only (spec: Platform-native message shapes); post messages as `universal`',
        'unsupported_record',
      )
  }
}

function messengerIncoming(s: Shape): void {
  s.misplaced('intent', 'inside each `entry[].messaging[]` item')
  s.str('object')
  const entries = s.arr('entry', true)
  entries.forEach((_, i) => {
    const e = `entry[${i}]`
    s.obj(e)
    s.str(`${e}.id`)
    s.num(`${e}.time`)
    const items = s.arr(`${e}.messaging`, true)
    items.forEach((_item, j) => {
      const m = `${e}.messaging[${j}]`
      s.obj(m)
      s.obj(`${m}.sender`)
      s.str(`${m}.sender.id`, true)
      s.obj(`${m}.recipient`)
      s.str(`${m}.recipient.id`, true)
      s.num(`${m}.timestamp`)
      if (s.optObj(`${m}.message`)) {
        s.optStr(`${m}.message.mid`)
        s.optNum(`${m}.message.seq`)
        s.optStr(`${m}.message.text`)
        s.optBool(`${m}.message.is_echo`)
      }
      s.intent(`${m}.intent`)
      s.optObj(`${m}.platformUserJson`)
    })
  })
}

function messengerOutgoing(s: Shape): void {
  if (s.at('uri') === undefined && s.at('url') === undefined)
    fail('uri', undefined, 'is required (or `url`): the Send API address the bot posted to')
  s.optStr('uri')
  s.optStr('url')
  s.optStr('method')
  if (s.optObj('qs')) s.optStr('qs.access_token')
  s.obj('json')
  s.obj('json.recipient')
  s.str('json.recipient.id', true)
  if (s.optObj('json.message')) s.optStr('json.message.text')
  s.obj('responseBody', 'is required and must be an object (the Send API answer)')
  s.optStr('responseBody.recipient_id')
  s.optStr('responseBody.message_id')
  s.intent('intent')
  s.optObj('platformUserJson')
}

function slack(s: Shape): void {
  s.optStr('token')
  s.obj('team')
  s.str('team.id', true)
  s.optStr('team.name')
  s.obj('bot')
  s.str('bot.id')
  s.obj('message')
  s.str('message.type')
  s.str('message.channel', true)
  for (const key of ['user', 'text', 'ts', 'team']) s.optStr(`message.${key}`)
  s.intent('intent')
  s.optObj('platformUserJson')
}

function kik(s: Shape, type: RecordType): void {
  s.optStr('apiKey')
  s.str('username')
  s.obj('message')
  s.str('message.type')
  s.optStr('message.body')
  s.optStr('message.chatId')
  s.optStr('message.id')
  if (type === 'incoming') {
    s.str('message.from', true)
    s.optNum('message.timestamp')
    const mention = s.at('message.mention')
    if (mention !== undefined && mention !== null && typeof mention !== 'string')
      fail('message.mention', mention, 'must be a string or null when present')
    const participants = s.at('message.participants')
    if (participants !== undefined) {
      if (!Array.isArray(participants))
        fail('message.participants', participants, 'must be an array of strings when present')
      for (let i = 0; i < participants.length; i++) s.str(`message.participants[${i}]`)
    }
    s.optBool('message.readReceiptRequested')
  } else {
    s.str('message.to', true)
  }
  s.intent('intent')
  s.optObj('platformUserJson')
}

function alexaEvent(s: Shape): void {
  s.obj('event')
  s.str('event.version')
  if (s.optObj('event.session')) {
    s.optBool('event.session.new')
    s.str('event.session.sessionId')
    s.obj('event.session.application')
    s.str('event.session.application.applicationId')
    s.optObj('event.session.attributes')
    s.optObj('event.session.attributes.serviceUser')
    s.obj('event.session.user')
    s.str('event.session.user.userId', true)
  } else if (typeof s.at('event.context.System.user.userId') !== 'string') {
    // Session-less requests (audio player…) name the user in context.System.user.
    fail('event.session', undefined, 'is required (or `event.context.System.user.userId` for session-less requests)')
  }
  s.obj('event.request')
  s.str('event.request.type')
  s.str('event.request.requestId')
  const ts = s.str('event.request.timestamp')
  if (Number.isNaN(Date.parse(ts))) fail('event.request.timestamp', ts, 'must be an ISO 8601 date-time')
  if (s.optObj('event.request.intent')) {
    s.str('event.request.intent.name')
    s.optObj('event.request.intent.slots')
  }
}

function alexaIncoming(s: Shape): void {
  alexaEvent(s)
  s.optObj('context')
  s.intent('intent')
}

function alexaOutgoing(s: Shape): void {
  s.misplaced('intent', 'inside `response` (`response.intent`)')
  alexaEvent(s)
  s.obj('response')
  s.str('response.version')
  s.optObj('response.sessionAttributes')
  s.optObj('response.sessionAttributes.serviceUser')
  s.obj('response.response')
  s.optBool('response.response.shouldEndSession')
  if (s.optObj('response.response.outputSpeech')) {
    s.str('response.response.outputSpeech.type')
    s.optStr('response.response.outputSpeech.ssml')
    s.optStr('response.response.outputSpeech.text')
  }
  s.optObj('response.response.card')
  s.optObj('response.response.reprompt')
  s.intent('response.intent')
  s.optNum('service_timestamp')
}
