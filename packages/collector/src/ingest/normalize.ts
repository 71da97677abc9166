import { type AlexaRequestEnvelope, alexaUserId, type RecordType } from '@convotrack/core'
import { botbuilderV3Message, googleMessage, microsoftActivity } from './legacy-normalize'
import {
  ANONYMOUS_USER,
  eventName,
  isV3Envelope,
  lineImages,
  type RecordPlatform,
  type StoredRecordType,
} from './legacy-records'
import {
  arr,
  type EventFields,
  intentOf,
  type MessageButton,
  message,
  type NormalizedMessage,
  type Obj,
  obj,
  str,
} from './message-fields'

export type { EventFields, MessageButton, NormalizedMessage } from './message-fields'

/**
 * Turns a validated record into the messages it holds. Pure.
 *
 * @example normalizeRecord('universal', 'incoming', { text: 'hi', userId: 'u1' })[0].thread // 'u1'
 */
export function normalizeRecord(platform: RecordPlatform, type: StoredRecordType, body: Obj): NormalizedMessage[] {
  if (type === 'event') return [eventMessage(platform, body)]
  // A Slack `logConnect` is bot metadata, not a message; `all` is a Messenger webhook body with echoes.
  if (type === 'connect') return []
  if (type === 'all') return messengerIncoming(body)
  if (isV3Envelope(body)) return botbuilderV3Message(platform, body, type)
  switch (platform) {
    case 'microsoft':
      return microsoftActivity(body, type)
    case 'google':
      return googleMessage(body, type)
    case 'facebook':
      // Webhook-shaped bodies (SDK incoming, or the no-code connection's echoes) hold their own direction.
      return Array.isArray(body.entry) ? messengerIncoming(body) : [messengerOutgoing(body)]
    case 'slack':
      return slack(body, type)
    case 'kik':
      return [kik(body, type)]
    case 'alexa':
      return [alexa(body, type)]
    default:
      return [universal(platform, type, body)]
  }
}

function eventMessage(platform: RecordPlatform, body: Obj): NormalizedMessage {
  const type = str(body.type) ?? ''
  const event: EventFields = { type, name: eventName(body), body }
  if (type === 'revenueEvent' && typeof body.amount === 'number') event.amount = body.amount
  return message(platform, 'event', str(body.userId) ?? '', str(body.conversationId), { text: event.name, event })
}

function universal(platform: RecordPlatform, direction: RecordType, body: Obj): NormalizedMessage {
  const buttons = arr(body.buttons).flatMap((b) => {
    const o = obj(b)
    return o && typeof o.label === 'string' ? [{ label: o.label, value: str(o.value) ?? str(o.id) }] : []
  })
  const images = arr(lineImages(body.images)).flatMap((img) => {
    if (typeof img === 'string') return [img]
    const url = str(obj(img)?.url)
    return url ? [url] : []
  })
  const clicked = str(obj(obj(body.postback)?.buttonClick)?.buttonId)
  return message(platform, direction, str(body.userId) ?? ANONYMOUS_USER, str(body.conversationId), {
    sessionId: str(body.sessionId) ?? null,
    text: str(body.text) ?? (clicked ? `[button ${clicked}]` : null),
    ...intentOf(body.intent),
    buttons,
    images,
    userJson: obj(body.platformUserJson) ?? null,
  })
}

function attachmentImages(attachments: unknown[]): string[] {
  return attachments.flatMap((a) => {
    const o = obj(a)
    const url = str(obj(o?.payload)?.url)
    return o?.type === 'image' && url ? [url] : []
  })
}

function messengerIncoming(body: Obj): NormalizedMessage[] {
  return arr(body.entry).flatMap((e) =>
    arr(obj(e)?.messaging).flatMap((raw) => {
      const item = obj(raw) ?? {}
      const msg = obj(item.message)
      const postback = obj(item.postback)
      // Delivery / read receipts are not messages.
      if (!msg && !postback) return []
      const sender = str(obj(item.sender)?.id) ?? ''
      const recipient = str(obj(item.recipient)?.id) ?? ''
      const echo = msg?.is_echo === true
      return [
        message('facebook', echo ? 'outgoing' : 'incoming', echo ? recipient : sender, null, {
          text: str(msg?.text) ?? str(postback?.title) ?? str(postback?.payload) ?? null,
          ...intentOf(item.intent),
          images: attachmentImages(arr(msg?.attachments)),
          buttons: arr(msg?.quick_replies).flatMap(quickReply),
          userJson: obj(item.platformUserJson) ?? null,
        }),
      ]
    }),
  )
}

function quickReply(q: unknown): MessageButton[] {
  const o = obj(q)
  const label = str(o?.title) ?? str(o?.label)
  if (!label) return []
  const value = str(o?.payload) ?? str(o?.url)
  return [value === undefined ? { label } : { label, value }]
}

function messengerOutgoing(body: Obj): NormalizedMessage {
  const json = obj(body.json) ?? {}
  const msg = obj(json.message) ?? {}
  const attachment = obj(msg.attachment)
  const templateButtons = arr(obj(attachment?.payload)?.buttons)
  const elementButtons = arr(obj(attachment?.payload)?.elements).flatMap((el) => arr(obj(el)?.buttons))
  return message('facebook', 'outgoing', str(obj(json.recipient)?.id) ?? '', null, {
    text: str(msg.text) ?? str(obj(attachment?.payload)?.text) ?? null,
    ...intentOf(body.intent),
    buttons: [...arr(msg.quick_replies), ...templateButtons, ...elementButtons].flatMap(quickReply),
    images: attachment ? attachmentImages([attachment]) : [],
    userJson: obj(body.platformUserJson) ?? null,
  })
}

function slack(body: Obj, direction: RecordType): NormalizedMessage[] {
  const m = obj(body.message) ?? {}
  // RTM events the dashbot SDK logs as incoming (hello, presence, typing) are not messages.
  const channel = str(m.channel) ?? str(obj(m.channel)?.id)
  if (!channel) return []
  const user = direction === 'incoming' ? (str(m.user) ?? str(obj(m.user)?.id) ?? channel) : channel
  const blocks = arr(m.blocks).map(obj)
  const buttons: MessageButton[] = []
  const images: string[] = []
  for (const b of blocks) {
    if (b?.type === 'image' && str(b.image_url)) images.push(b.image_url as string)
    const els = [...arr(b?.elements), ...(obj(b?.accessory) ? [b?.accessory] : [])]
    for (const el of els.map(obj)) {
      if (el?.type === 'button') {
        const label = str(obj(el.text)?.text) ?? str(el.action_id) ?? 'button'
        buttons.push({ label, value: str(el.value) ?? str(el.action_id) })
      }
    }
  }
  for (const a of arr(m.attachments).map(obj)) {
    for (const action of arr(a?.actions).map(obj)) {
      const label = str(action?.text)
      if (label) buttons.push({ label, value: str(action?.value) })
    }
    if (str(a?.image_url)) images.push(a?.image_url as string)
  }
  return [
    message('slack', direction, user, channel, {
      // An interactive-message payload (button click) has the pressed action instead of text.
      text: str(m.text) ?? actionText(m.actions),
      ...intentOf(body.intent),
      buttons,
      images,
      userJson: obj(body.platformUserJson) ?? null,
    }),
  ]
}

function actionText(actions: unknown): string | null {
  const a = obj(arr(actions)[0])
  const value = str(a?.value) ?? str(a?.name)
  return value ? `[button ${value}]` : null
}

function kik(body: Obj, direction: RecordType): NormalizedMessage {
  const m = obj(body.message) ?? {}
  const user = str(direction === 'incoming' ? m.from : m.to) ?? ''
  const buttons = arr(m.keyboards).flatMap((k) =>
    arr(obj(k)?.responses).flatMap((r) => {
      const label = str(obj(r)?.body)
      return label ? [{ label }] : []
    }),
  )
  const pic = str(m.picUrl)
  return message('kik', direction, user, str(m.chatId), {
    text: str(m.body) ?? (m.type !== 'text' ? `[${typeof m.type === 'string' ? m.type : 'message'}]` : null),
    ...intentOf(body.intent),
    buttons,
    images: m.type === 'picture' && pic ? [pic] : [],
    userJson: obj(body.platformUserJson) ?? null,
  })
}

/**
 * The spoken text of SSML: every `<…>` tag becomes a space, whitespace runs collapse. One pass
 * with `indexOf` (a regex like `/<[^>]+>/g` rescans the rest of the text from every unclosed
 * `<`: quadratic, seconds for 80 000 of them).
 */
export function stripSsml(ssml: string): string {
  let out = ''
  let i = 0
  while (i < ssml.length) {
    const open = ssml.indexOf('<', i)
    if (open < 0) break
    // `<>` is not a tag; an unclosed `<` means no tag follows anywhere: the rest is text.
    const close = ssml.indexOf('>', open + 2)
    if (close < 0 || ssml.charCodeAt(open + 1) === 0x3e) {
      out += ssml.slice(i, open + 1)
      i = open + 1
      if (close < 0) break
      continue
    }
    out += `${ssml.slice(i, open)} `
    i = close + 1
  }
  out += ssml.slice(i)
  return out.replace(/\s+/g, ' ').trim()
}

function alexa(body: Obj, direction: RecordType): NormalizedMessage {
  const event = obj(body.event) ?? {}
  const session = obj(event.session)
  const request = obj(event.request) ?? {}
  const userId = str(alexaUserId(event as unknown as AlexaRequestEnvelope)) ?? ''
  const sessionUser = obj(obj(session?.attributes)?.serviceUser)
  const base = { sessionId: str(session?.sessionId) ?? null }
  if (direction === 'incoming') {
    const reqIntent = obj(request.intent)
    const slots = Object.values(obj(reqIntent?.slots) ?? {})
      .map(obj)
      .flatMap((s) => (s && str(s.value) !== undefined ? [`${str(s.name) ?? '?'}: ${s.value}`] : []))
    const name = str(reqIntent?.name)
    const text = name ? `${name}${slots.length ? ` (${slots.join(', ')})` : ''}` : (str(request.type) ?? null)
    // A root intent (NotHandled, a classifier's) wins over the voice platform's own.
    const intent = body.intent !== undefined ? intentOf(body.intent) : { intent: name ?? null, confidence: null }
    return message('alexa', 'incoming', userId, null, { ...base, text, ...intent, userJson: sessionUser ?? null })
  }
  const response = obj(body.response) ?? {}
  const inner = obj(response.response) ?? {}
  const speech = obj(inner.outputSpeech)
  const text = str(speech?.text) ?? (str(speech?.ssml) ? stripSsml(speech?.ssml as string) : null)
  const image = obj(obj(inner.card)?.image)
  const images = [str(image?.largeImageUrl) ?? str(image?.smallImageUrl)].filter((u): u is string => !!u)
  const userJson = obj(obj(response.sessionAttributes)?.serviceUser) ?? sessionUser ?? null
  return message('alexa', 'outgoing', userId, null, { ...base, text, ...intentOf(response.intent), images, userJson })
}
