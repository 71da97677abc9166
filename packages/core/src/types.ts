/**
 * Wire types: every shape of the tracking-service spec (`shared/spec/tracking-service.md`).
 * Field names are the spec's, exactly; optional fields are optional here too.
 */

/** JSON object with free-form keys. */
export type JsonObject = { [key: string]: unknown }

/** `platform` query values (spec: "Platform-native message shapes"). */
export type Platform = 'facebook' | 'slack' | 'kik' | 'twitter' | 'alexa' | 'google' | 'sms' | 'universal' | 'generic'

/** Every `platform` query value, in the spec's order. */
export const PLATFORMS: readonly Platform[] = [
  'facebook',
  'slack',
  'kik',
  'twitter',
  'alexa',
  'google',
  'sms',
  'universal',
  'generic',
]

/** `type` query values (spec 4.1). */
export type RecordType = 'incoming' | 'outgoing' | 'event'

/** Every `type` query value. */
export const RECORD_TYPES: readonly RecordType[] = ['incoming', 'outgoing', 'event']

/** `v` query values seen in the spec (spec: Versioning). */
export type ApiVersion = '11.1.0-rest' | '10.1.1-rest'

/** Every `v` value the spec shows. */
export const API_VERSIONS: readonly ApiVersion[] = ['11.1.0-rest', '10.1.1-rest']

/** An entity of an intent (spec: Intent, `inputs`). */
export interface IntentInput {
  name: string
  value: string
}

/** Spec: Intent. `NotHandled` is the reserved name for inputs the bot did not understand. */
export interface Intent {
  name: string
  inputs?: IntentInput[]
  /** 0.0 (completely uncertain) to 1.0 (completely certain). */
  confidence?: number
}

/** A button of a universal message (spec: Universal message, `buttons`). */
export interface UniversalButton {
  id: string
  label: string
  value: string
}

/** Spec: Universal message — used for `universal`, `generic`, `sms` and inside twitter records. */
export interface UniversalMessage {
  /** Message text (required). */
  text: string
  /** The human user's id, the same for their incoming and outgoing messages; never the bot's own id. */
  userId: string
  conversationId?: string
  sessionId?: string
  intent?: Intent
  /** Items `{ url }`; a bare URL string is accepted too. */
  images?: Array<{ url: string } | string>
  buttons?: UniversalButton[]
  postback?: { buttonClick: { buttonId: string } }
  /** All platform-specific JSON of the sender's platform. */
  platformJson?: JsonObject
  /** Custom user metadata (first name, locale, experiment group…). */
  platformUserJson?: JsonObject
}

// ---------------------------------------------------------------- twitter (short-post DM)

/** A quick-reply option of an outgoing DM. */
export interface TwitterQuickReplyOption {
  label: string
  description?: string
  metadata?: string
}

/** `message_data` of a DM. */
export interface TwitterMessageData {
  text: string
  entities?: JsonObject
  quick_reply?: { type: 'options' | string; options: TwitterQuickReplyOption[] }
  quick_reply_response?: { type: 'options' | string; metadata?: string }
  attachment?: JsonObject
  [key: string]: unknown
}

/** One item of `direct_message_events`. */
export interface TwitterDirectMessageEvent {
  type: 'message_create' | string
  id?: string
  created_timestamp?: string
  message_create: {
    target: { recipient_id: string }
    sender_id?: string
    source_app_id?: string
    message_data: TwitterMessageData
  }
}

/** The platform's own DM payload (spec: universal message, short-post DM platform). */
export interface TwitterDmPayload {
  /** Account Activity webhooks name the subscribed (bot) account. */
  for_user_id?: string
  direct_message_events?: TwitterDirectMessageEvent[]
  /** The send API's request/response carries a single `event`. */
  event?: TwitterDirectMessageEvent
  users?: Record<string, JsonObject>
  apps?: Record<string, JsonObject>
  [key: string]: unknown
}

// ---------------------------------------------------------------- messenger

/** One item of an entry's `messaging` array (spec: Social messenger, incoming). */
export interface MessengerMessagingItem {
  sender: { id: string }
  recipient: { id: string }
  timestamp: number
  message?: {
    mid?: string
    seq?: number
    text?: string
    is_echo?: boolean
    quick_reply?: { payload: string }
    attachments?: unknown[]
    [key: string]: unknown
  }
  postback?: { title?: string; payload?: string; [key: string]: unknown }
  delivery?: JsonObject
  read?: JsonObject
  intent?: Intent
  platformUserJson?: JsonObject
  [key: string]: unknown
}

/** A Messenger webhook body, as the platform sent it to the bot. */
export interface MessengerWebhookBody {
  object: 'page' | string
  entry: Array<{ id: string; time: number; messaging: MessengerMessagingItem[]; [key: string]: unknown }>
}

/** The bot's Send API request (spec: Social messenger, outgoing). */
export interface MessengerSendRequest {
  uri?: string
  url?: string
  method?: string
  qs?: { access_token?: string; [key: string]: unknown }
  json: {
    recipient: { id: string; [key: string]: unknown }
    message?: { text?: string; [key: string]: unknown }
    messaging_type?: string
    [key: string]: unknown
  }
}

/** The Send API's answer (or its error body for a failed send). */
export interface MessengerSendResponse {
  recipient_id?: string
  message_id?: string
  [key: string]: unknown
}

/** The outgoing messenger record as posted. */
export interface MessengerOutgoingRecord extends MessengerSendRequest {
  responseBody: MessengerSendResponse
  intent?: Intent
  platformUserJson?: JsonObject
}

// ---------------------------------------------------------------- slack (team chat)

/** Spec: Team chat, incoming and outgoing. */
export interface SlackRecord {
  /** Slack's verification token: blanked unless `sendPlatformCredentials`. */
  token?: string
  team: { id: string; name?: string }
  bot: { id: string }
  message: {
    type: string
    channel: string
    user?: string
    text?: string
    ts?: string
    team?: string
    [key: string]: unknown
  }
  intent?: Intent
  platformUserJson?: JsonObject
  [key: string]: unknown
}

// ---------------------------------------------------------------- kik (mobile chat)

/** Spec: Mobile chat, incoming message. */
export interface KikIncomingMessage {
  type: string
  body?: string
  from: string
  timestamp?: number
  mention?: string | null
  participants?: string[]
  readReceiptRequested?: boolean
  id?: string
  chatId?: string
  [key: string]: unknown
}

/** Spec: Mobile chat, outgoing message. */
export interface KikOutgoingMessage {
  type: string
  body?: string
  to: string
  chatId?: string
  [key: string]: unknown
}

/** Spec: Mobile chat record. `apiKey` is Kik's own bot key, blanked unless `sendPlatformCredentials`. */
export interface KikRecord<M = KikIncomingMessage | KikOutgoingMessage> {
  apiKey?: string
  username: string
  message: M
  intent?: Intent
  platformUserJson?: JsonObject
}

// ---------------------------------------------------------------- alexa (voice assistant)

/** Spec: Voice assistant, incoming `event`. Structural subset of ask-sdk-model's RequestEnvelope. */
export interface AlexaRequestEnvelope {
  version: string
  session?: {
    new: boolean
    sessionId: string
    application: { applicationId: string }
    attributes?: JsonObject
    user: { userId: string; [key: string]: unknown }
    [key: string]: unknown
  }
  context?: { System?: { user?: { userId: string }; [key: string]: unknown }; [key: string]: unknown }
  request: {
    type: string
    requestId: string
    timestamp: string
    intent?: { name: string; slots?: Record<string, { name: string; value?: string; [key: string]: unknown }> }
    [key: string]: unknown
  }
}

/** Spec: Voice assistant, outgoing `response` (a ResponseEnvelope). */
export interface AlexaResponseEnvelope {
  version: string
  sessionAttributes?: JsonObject
  response: {
    shouldEndSession?: boolean
    outputSpeech?: { type: string; ssml?: string; text?: string; [key: string]: unknown }
    card?: JsonObject
    reprompt?: JsonObject
    [key: string]: unknown
  }
  [key: string]: unknown
}

/** The incoming voice record as posted. */
export interface AlexaIncomingRecord {
  event: AlexaRequestEnvelope
  context?: JsonObject
  intent?: Intent
}

/** The outgoing voice record as posted: the intent sits inside `response`. */
export interface AlexaOutgoingRecord {
  event: AlexaRequestEnvelope
  response: AlexaResponseEnvelope & { intent?: Intent }
  service_timestamp?: number
}

// ---------------------------------------------------------------- events

/** Event types (spec: Event record). */
export type EventType = 'customEvent' | 'revenueEvent' | 'shareEvent' | 'pageLaunchEvent' | 'referralEvent'

interface EventBase {
  name: string
  userId: string
  conversationId?: string
}

export interface CustomEvent extends EventBase {
  type: 'customEvent'
  extraInfo?: JsonObject
}
export interface RevenueEvent extends EventBase {
  type: 'revenueEvent'
  /** Required, a finite number. */
  amount: number
  referenceNumber?: string
  metadata?: JsonObject
}
export interface ShareEvent extends EventBase {
  type: 'shareEvent'
  sharedMessage?: JsonObject
}
export interface PageLaunchEvent extends EventBase {
  type: 'pageLaunchEvent'
  extraInfo?: JsonObject
}
export interface ReferralEvent extends EventBase {
  type: 'referralEvent'
  ref?: string
  source?: string
  adid?: string
  /** Alias spelling seen in one listing; sent as `adid`. */
  ad_id?: string
  refereruri?: string
  /** Alias spelling seen in one listing; sent as `refereruri`. */
  referer_uri?: string
}

/** Spec: Event record, any of the five types. */
export type TrackedEvent = CustomEvent | RevenueEvent | ShareEvent | PageLaunchEvent | ReferralEvent

// ---------------------------------------------------------------- pause webhook

/** Body of the pause webhook the service POSTs to the bot (spec: Events, Pause webhook). */
export interface PauseWebhookBody {
  userId: string
  paused: boolean
}

/** Body of the operator's "send as the bot" call. */
export interface OperatorMessageBody {
  userId: string
  text: string
  messageJson?: JsonObject
}
