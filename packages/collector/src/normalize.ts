import { type AlexaRequestEnvelope, alexaUserId, isObject, type RecordType } from '@convotrack/core'
import { botbuilderV3Message, googleMessage, microsoftActivity } from './legacy-normalize'
import { eventName, isV3Envelope, lineImages, type RecordPlatform, type StoredRecordType } from './legacy-records'

/** A button shown with a message (universal `buttons`, quick replies, Slack buttons, Kik keyboards…). */
export interface MessageButton {
  label: string
  value?: string
}

/** The event part of an event record. */
export interface EventFields {
  type: string
  name: string
  /** `revenueEvent` amount. */
  amount?: number
  /** The whole event body as posted. */
  body: Record<string, unknown>
}

/**
 * One message or event, the same whatever the native shape it came in (spec: "Each native
 * shape is normalized"). A messenger webhook body with several `messaging` items gives several.
 */
export interface NormalizedMessage {
  platform: RecordPlatform
  direction: RecordType
  /** The human user (never the bot). */
  userId: string
  /** Slack channel, Kik chatId, universal `conversationId`; null when the shape has none. */
  conversationId: string | null
  /**
   * The transcript a message belongs to and the `userId` the pause webhook receives: the
   * conversation id when one is sent, else the user id (spec: Pause webhook).
   */
  thread: string
  sessionId: string | null
  text: string | null
  intent: string | null
  confidence: number | null
  buttons: MessageButton[]
  images: string[]
  /** User metadata (`platformUserJson`, Alexa `serviceUser`). */
  userJson: Record<string, unknown> | null
  event: EventFields | null
}

type Obj = Record<string, unknown>

/** Readers of untrusted JSON: the value when it has the type, else undefined / []. */
export const obj = (v: unknown): Obj | undefined => (isObject(v) ? v : undefined)
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

export function intentOf(v: unknown): { intent: string | null; confidence: number | null } {
  const i = obj(v)
  const name = str(i?.name)
  if (!name) return { intent: null, confidence: null }
  return { intent: name, confidence: typeof i?.confidence === 'number' ? i.confidence : null }
}

export function message(
  platform: RecordPlatform,
  direction: RecordType,
  userId: string,
  conversationId: string | null | undefined,
  rest: Partial<NormalizedMessage>,
): NormalizedMessage {
  const conv = conversationId || null
  return {
    platform,
    direction,
    userId,
    conversationId: conv,
    thread: conv ?? userId,
    sessionId: null,
    text: null,
    intent: null,
    confidence: null,
    buttons: [],
    images: [],
    userJson: null,
    event: null,
    ...rest,
  }
}

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
  return message(platform, direction, str(body.userId) ?? '', str(body.conversationId), {
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
    text: str(m.body) ?? (m.type !== 'text' ? `[${String(m.type)}]` : null),
    ...intentOf(body.intent),
    buttons,
    images: m.type === 'picture' && pic ? [pic] : [],
    userJson: obj(body.platformUserJson) ?? null,
  })
}

function stripSsml(ssml: string): string {
  return ssml
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
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
