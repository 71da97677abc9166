import { blankCredentials } from '../credentials'
import { InvalidRecordError } from '../errors'
import type { UniversalMessage } from '../types'
import {
  describe,
  isObject,
  optionalArray,
  optionalObject,
  optionalString,
  requireNonEmptyString,
  requireObject,
  requireString,
  validateIntent,
} from '../validate'
import { mergeUserJson, type SerializeContext, type WireRecord } from './context'

/** Checks a universal message against the spec (Universal message table, rule 4.2.1). */
export function validateUniversal(msg: unknown, context = 'universal message'): UniversalMessage {
  const m = requireObject(msg, '', context)
  requireString(m.text, 'text', context)
  requireNonEmptyString(m.userId, 'userId', context)
  optionalString(m.conversationId, 'conversationId', context)
  optionalString(m.sessionId, 'sessionId', context)
  if (m.intent !== undefined) validateIntent(m.intent, 'intent', context)
  if (optionalArray(m.images, 'images', context) && m.images) {
    ;(m.images as unknown[]).forEach((img, i) => {
      if (typeof img === 'string') return
      if (!isObject(img) || typeof img.url !== 'string')
        throw new InvalidRecordError(
          `images[${i}]`,
          `must be {url: string} or a URL string (got ${describe(img)})`,
          context,
        )
    })
  }
  if (optionalArray(m.buttons, 'buttons', context) && m.buttons) {
    ;(m.buttons as unknown[]).forEach((b, i) => {
      const bo = requireObject(b, `buttons[${i}]`, context)
      for (const key of ['id', 'label', 'value'] as const) requireString(bo[key], `buttons[${i}].${key}`, context)
    })
  }
  if (m.postback !== undefined) {
    const p = requireObject(m.postback, 'postback', context)
    const click = requireObject(p.buttonClick, 'postback.buttonClick', context)
    requireString(click.buttonId, 'postback.buttonClick.buttonId', context)
  }
  optionalObject(m.platformJson, 'platformJson', context)
  optionalObject(m.platformUserJson, 'platformUserJson', context)
  return m as unknown as UniversalMessage
}

/**
 * Universal shape (platform `universal`, `generic`, `sms`): the message as given, with the
 * intent at the root. Pure.
 *
 * @example serializeUniversal({ text: 'hi', userId: 'u1' }, { intent: { name: 'greet' } })
 */
export function serializeUniversal(msg: UniversalMessage, ctx: SerializeContext = {}): WireRecord {
  const m = validateUniversal(msg)
  const body: Record<string, unknown> = { ...m }
  if (m.platformJson && !ctx.sendPlatformCredentials) body.platformJson = blankCredentials(m.platformJson)
  if (ctx.intent) body.intent = ctx.intent
  const user = mergeUserJson(ctx.platformUserJson, m.platformUserJson)
  if (user) body.platformUserJson = user
  return { body, userId: m.userId, conversation: m.conversationId }
}
