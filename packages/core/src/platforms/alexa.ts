import { InvalidRecordError } from '../errors'
import { toPlainJson } from '../json'
import type { AlexaRequestEnvelope, AlexaResponseEnvelope, Intent, JsonObject } from '../types'
import { isObject, requireObject, requireString, validateIntent } from '../validate'
import { mergeUserJson, oneRecordOf, type RecordUsers, type SerializeContext, type WireRecord } from './context'

const IN = 'alexa incoming'
const OUT = 'alexa outgoing'

/** The session attribute that carries custom user metadata (spec: Voice assistant). */
export const SERVICE_USER_ATTRIBUTE = 'serviceUser'

/** The voice user: `session.user.userId`, or `context.System.user.userId` for session-less requests. */
export function alexaUserId(event: AlexaRequestEnvelope): string | undefined {
  return event?.session?.user?.userId ?? event?.context?.System?.user?.userId
}

function checkEvent(event: unknown, context: string): AlexaRequestEnvelope {
  const e = requireObject(event, 'event', context)
  requireString(e.version, 'event.version', context)
  const request = requireObject(e.request, 'event.request', context)
  requireString(request.type, 'event.request.type', context)
  if (e.session !== undefined) requireObject(e.session, 'event.session', context)
  return e as unknown as AlexaRequestEnvelope
}

/**
 * The event as sent, with Alexa's own tokens blanked (unless `sendPlatformCredentials`) and
 * the turn's user metadata in session attribute `serviceUser`. Copies only what it changes.
 */
function eventForWire(event: AlexaRequestEnvelope, ctx: SerializeContext): AlexaRequestEnvelope {
  let out = event
  const serviceUser = mergeUserJson(ctx.platformUserJson, event.session?.attributes?.[SERVICE_USER_ATTRIBUTE])
  if (event.session && ctx.platformUserJson) {
    out = {
      ...out,
      session: { ...event.session, attributes: { ...event.session.attributes, [SERVICE_USER_ATTRIBUTE]: serviceUser } },
    }
  }
  if (ctx.sendPlatformCredentials) return out
  const session = out.session
  if (session?.user && hasTokens(session.user)) out = { ...out, session: { ...session, user: blankUser(session.user) } }
  const system = out.context?.System as JsonObject | undefined
  if (system && (system.apiAccessToken !== undefined || hasTokens(system.user) || hasTokens(system.person))) {
    const sys: JsonObject = { ...system }
    if (sys.apiAccessToken !== undefined) sys.apiAccessToken = ''
    if (hasTokens(sys.user)) sys.user = blankUser(sys.user as JsonObject)
    if (hasTokens(sys.person)) sys.person = blankUser(sys.person as JsonObject)
    out = { ...out, context: { ...out.context, System: sys } }
  }
  return out
}

function hasTokens(user: unknown): boolean {
  if (!isObject(user)) return false
  return user.accessToken !== undefined || (isObject(user.permissions) && user.permissions.consentToken !== undefined)
}

function blankUser<T extends JsonObject>(user: T): T {
  const u: JsonObject = { ...user }
  if (u.accessToken !== undefined) u.accessToken = ''
  if (isObject(u.permissions) && u.permissions.consentToken !== undefined)
    u.permissions = { ...u.permissions, consentToken: '' }
  return u as T
}

/**
 * Voice assistant, incoming: `{ event, context? }`. `context` is the Lambda context made
 * JSON-safe (functions and circular fields dropped). A NotHandled intent sits at the root.
 */
export function serializeAlexaIncoming(
  event: AlexaRequestEnvelope,
  lambdaContext?: unknown,
  ctx: SerializeContext = {},
): WireRecord {
  const e = checkEvent(event, IN)
  const body: Record<string, unknown> = { event: eventForWire(e, ctx) }
  if (lambdaContext !== undefined && lambdaContext !== null) body.context = toPlainJson(lambdaContext)
  if (ctx.intent) body.intent = ctx.intent
  return { body, userId: alexaUserId(e) }
}

/**
 * Voice assistant, outgoing: `{ event, response: { version, sessionAttributes, response,
 * intent? }, service_timestamp }` — the intent *inside* `response` (spec: Intent); user
 * metadata in `response.sessionAttributes.serviceUser`.
 */
export function serializeAlexaOutgoing(
  event: AlexaRequestEnvelope,
  response: AlexaResponseEnvelope & { intent?: Intent },
  ctx: SerializeContext = {},
): WireRecord {
  const e = checkEvent(event, OUT)
  const r = requireObject(response, 'response', OUT)
  if (r.response !== undefined && !isObject(r.response))
    throw new InvalidRecordError('response.response', 'must be an object when present', OUT)
  if (r.intent !== undefined) validateIntent(r.intent, 'response.intent', OUT)
  const out: Record<string, unknown> = {
    ...r,
    version: typeof r.version === 'string' ? r.version : '1.0',
    response: r.response ?? {},
  }
  const serviceUser = mergeUserJson(
    ctx.platformUserJson,
    isObject(r.sessionAttributes) ? r.sessionAttributes[SERVICE_USER_ATTRIBUTE] : undefined,
  )
  if (serviceUser)
    out.sessionAttributes = {
      ...(r.sessionAttributes as JsonObject | undefined),
      [SERVICE_USER_ATTRIBUTE]: serviceUser,
    }
  else out.sessionAttributes = r.sessionAttributes ?? {}
  if (ctx.intent) out.intent = ctx.intent
  return {
    body: { event: eventForWire(e, ctx), response: out, service_timestamp: (ctx.now ?? Date.now)() },
    userId: alexaUserId(e),
  }
}

/** One record, for the voice user (see `RecordUsers`). */
export function alexaUsers(event: unknown): RecordUsers {
  return oneRecordOf(isObject(event) ? alexaUserId(event as unknown as AlexaRequestEnvelope) : undefined)
}
