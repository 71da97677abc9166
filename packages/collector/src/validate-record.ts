import {
  API_VERSIONS,
  type ApiVersion,
  InvalidRecordError,
  PLATFORMS,
  type Platform,
  RECORD_TYPES,
  type RecordType,
  serializeEvent,
  type TrackedEvent,
  validateIntent,
  validateUniversal,
} from '@convotrack/core'
import { RequestError } from './errors'

/** The query value lists are core's: one home for the spec's values. */
export { API_VERSIONS, PLATFORMS, RECORD_TYPES }

/** The query of a `POST /track`, checked. */
export interface TrackQuery {
  platform: Platform
  type: RecordType
  v: ApiVersion
  apiKey: string
}

type Obj = Record<string, unknown>

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function kind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/**
 * Checks the query parameters in the spec's order of importance: `platform`, `type`, `v`, then
 * the presence of `apiKey` (whether the key is known is the caller's business: 401).
 *
 * @example parseTrackQuery(new URLSearchParams('platform=slack&type=incoming&v=11.1.0-rest&apiKey=k'))
 */
export function parseTrackQuery(query: URLSearchParams): TrackQuery {
  const platform = query.get('platform')
  if (!platform || !(PLATFORMS as readonly string[]).includes(platform))
    throw new RequestError(
      400,
      'invalid_platform',
      `query \`platform\` must be one of ${PLATFORMS.join(', ')}`,
      'platform',
    )
  const type = query.get('type')
  if (!type || !(RECORD_TYPES as readonly string[]).includes(type))
    throw new RequestError(400, 'invalid_type', `query \`type\` must be one of ${RECORD_TYPES.join(', ')}`, 'type')
  const v = query.get('v')
  if (!v || !(API_VERSIONS as readonly string[]).includes(v))
    throw new RequestError(400, 'invalid_version', `query \`v\` must be one of ${API_VERSIONS.join(', ')}`, 'v')
  const apiKey = query.get('apiKey')
  if (!apiKey)
    throw new RequestError(
      401,
      'missing_api_key',
      'query `apiKey` is required: the tracking key of the bot or skill',
      'apiKey',
    )
  return { platform: platform as Platform, type: type as RecordType, v: v as ApiVersion, apiKey }
}

/** Value at a dotted path such as `entry[0].messaging[1].sender.id`; '' is the root. */
export function valueAt(root: unknown, path: string): unknown {
  if (!path) return root
  let cur: unknown = root
  for (const part of path.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (part === '') continue
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Obj)[part]
  }
  return cur
}

/** Fails with `missing_field` when the value is absent, else `invalid_field`. */
function fail(path: string, value: unknown, rule: string): never {
  const missing = value === undefined
  const got = missing ? '' : ` (got ${kind(value)})`
  throw new RequestError(
    400,
    missing ? 'missing_field' : 'invalid_field',
    `\`${path || '(body)'}\` ${rule}${got}`,
    path,
  )
}

/** Runs one of core's validators and turns its {@link InvalidRecordError} into a 400 answer. */
function viaCore(root: unknown, check: () => unknown): void {
  try {
    check()
  } catch (e) {
    if (!(e instanceof InvalidRecordError)) throw e
    const value = valueAt(root, e.path)
    throw new RequestError(400, value === undefined ? 'missing_field' : 'invalid_field', e.message, e.path)
  }
}

class Shape {
  constructor(readonly root: unknown) {}
  at(path: string): unknown {
    return valueAt(this.root, path)
  }
  obj(path: string, rule = 'is required and must be an object'): Obj {
    const v = this.at(path)
    if (!isObj(v)) fail(path, v, rule)
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
    if (v !== undefined && !isObj(v)) fail(path, v, 'must be an object when present')
    return v !== undefined
  }
  intent(path: string): void {
    if (this.at(path) !== undefined) viaCore(this.root, () => validateIntent(this.at(path), path, 'intent'))
  }
  /** A root `intent` on a shape whose intent lives elsewhere (spec: Intent, placement). */
  misplaced(path: string, where: string): void {
    if (this.at(path) !== undefined)
      throw new RequestError(
        400,
        'misplaced_intent',
        `\`${path}\` is not where this shape carries its intent: put it ${where} (spec: Intent)`,
        path,
      )
  }
}

/**
 * Checks a `POST /track` body against the shape its `platform` and `type` name (spec 4.2 and
 * "Platform-native message shapes"). Throws {@link RequestError} (400) naming the field: code
 * `missing_field`, `invalid_field`, `misplaced_intent` or `unsupported_record`.
 *
 * @example validateRecord('universal', 'incoming', { text: 'hi', userId: 'u1' })
 */
export function validateRecord(platform: Platform, type: RecordType, body: unknown): void {
  if (!isObj(body)) fail('', body, 'must be a JSON object')
  const s = new Shape(body)
  if (type === 'event') {
    viaCore(body, () => serializeEvent(body as unknown as TrackedEvent))
    return
  }
  switch (platform) {
    case 'universal':
    case 'generic':
    case 'sms':
      viaCore(body, () => validateUniversal(body))
      return
    case 'twitter':
      viaCore(body, () => validateUniversal(body))
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
      throw new RequestError(
        400,
        'unsupported_record',
        'platform `google` carries events only: `type` must be event (spec: Platform-native message shapes); post messages as `universal`',
        'type',
      )
  }
}

function userJson(s: Shape, path: string): void {
  s.optObj(path)
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
      userJson(s, `${m}.platformUserJson`)
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
  userJson(s, 'platformUserJson')
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
  userJson(s, 'platformUserJson')
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
  userJson(s, 'platformUserJson')
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
