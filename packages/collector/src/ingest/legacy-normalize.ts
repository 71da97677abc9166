import type { RecordType } from '@convotrack/core'
import type { RecordPlatform } from './legacy-records'
import { arr, intentOf, message, type NormalizedMessage, obj } from './message-fields'

/**
 * Messages of the dashbot SDK's record shapes the spec does not describe: a Bot Framework
 * Activity (`microsoft`) and Google's webhook requests (`google`, api.ai v1 / Actions on
 * Google / Dialogflow). Pure; a record with nothing readable gives no message (kept raw).
 */

type Obj = Record<string, unknown>
/** A non-empty string (ids and texts of these shapes are never meaningfully empty). */
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/**
 * A Bot Framework Activity, read like `@convotrack/messenger`'s botbuilder records: a
 * `message` activity is a universal message (text, the human side's id, the conversation);
 * other activities (conversationUpdate, typing…) are kept raw, not shown as messages. The
 * intent: the SDK's root `intent` (NotHandled, setOutgoingIntent), else LUIS's top intent.
 */
export function microsoftActivity(body: Obj, direction: RecordType): NormalizedMessage[] {
  if (body.type !== 'message') return []
  const user = direction === 'incoming' ? obj(body.from) : obj(body.recipient)
  const userId = str(user?.id)
  if (!userId) return []
  const attachments = arr(body.attachments).map(obj)
  const images = attachments.flatMap((a) =>
    str(a?.contentType)?.startsWith('image/') && str(a?.contentUrl) ? [a?.contentUrl as string] : [],
  )
  return [
    message('microsoft', direction, userId, str(obj(body.conversation)?.id), {
      text: str(body.text) ?? (attachments.length ? `[${attachments.length} attachment(s)]` : null),
      ...(body.intent !== undefined ? intentOf(body.intent) : luisIntent(body.luisResults)),
      images,
      userJson: user?.name ? { name: user.name } : null,
    }),
  ]
}

function luisIntent(results: unknown): { intent: string | null; confidence: number | null } {
  const intents = obj(obj(results)?.intents)
  let best: { intent: string | null; confidence: number | null } = { intent: null, confidence: null }
  for (const [name, v] of Object.entries(intents ?? {})) {
    const score = num(obj(v)?.score) ?? 0
    if (best.confidence === null || score > best.confidence) best = { intent: name, confidence: score }
  }
  return best
}

/**
 * A `google` record (`{ dashbot_timestamp, request_body, message? }`): the user's words and
 * intent from the request, the answer's speech from `message`, in whichever version the
 * payload is — api.ai v1 (`result.resolvedQuery`, `result.metadata.intentName`), Actions on
 * Google v1/v2 (`inputs[].raw_inputs` / `rawInputs`), Dialogflow v2 (`queryResult`), the
 * `@assistant/conversation` library (`request.intent`).
 */
export function googleMessage(body: Obj, direction: RecordType): NormalizedMessage[] {
  const req = obj(body.request_body) ?? {}
  const conv = obj(req.request) // @assistant/conversation: { request, fulfillmentLib }
  const aog = obj(obj(req.originalRequest)?.data) ?? obj(obj(obj(req.originalDetectIntentRequest)?.payload)) ?? req
  const userId =
    str(obj(aog.user)?.userId) ??
    str(obj(aog.user)?.user_id) ??
    str(obj(obj(conv?.user)?.params)?.userId) ??
    str(req.sessionId) ??
    str(req.session) ??
    str(obj(conv?.session)?.id) ??
    str(obj(aog.conversation)?.conversationId) ??
    str(obj(aog.conversation)?.conversation_id)
  if (!userId) return []
  const conversationId =
    str(obj(aog.conversation)?.conversationId) ??
    str(obj(aog.conversation)?.conversation_id) ??
    str(req.sessionId) ??
    str(req.session) ??
    str(obj(conv?.session)?.id)
  const rest: Partial<NormalizedMessage> = { sessionId: str(req.sessionId) ?? str(req.session) ?? null }
  if (direction === 'incoming') {
    const result = obj(req.result)
    const query = obj(req.queryResult)
    const input = obj(arr(aog.inputs)[0])
    const raw = obj(arr(input?.rawInputs)[0]) ?? obj(arr(input?.raw_inputs)[0])
    rest.text =
      str(result?.resolvedQuery) ?? str(query?.queryText) ?? str(raw?.query) ?? str(obj(conv?.intent)?.query) ?? null
    const intent =
      str(obj(result?.metadata)?.intentName) ??
      str(obj(query?.intent)?.displayName) ??
      str(obj(conv?.intent)?.name) ??
      str(input?.intent)
    const confidence = num(result?.score) ?? num(query?.intentDetectionConfidence) ?? null
    Object.assign(rest, body.intent !== undefined ? intentOf(body.intent) : { intent: intent ?? null, confidence })
  } else {
    rest.text = speechOf(body.message)
    Object.assign(rest, intentOf(body.intent))
  }
  return [message('google', direction, userId, conversationId, rest)]
}

/** The words of an answer, in any of the webhook response versions. */
function speechOf(answer: unknown): string | null {
  const m = obj(answer) ?? {}
  const inner = obj(m.response) ?? m // @assistant/conversation: { response: { body… } }
  const bodyOf = obj(inner.body) ?? inner
  const google = obj(obj(bodyOf.payload)?.google) ?? obj(obj(bodyOf.data)?.google) ?? bodyOf
  const simple = (items: unknown) => {
    for (const item of arr(items)) {
      const s = obj(obj(item)?.simpleResponse)
      const t = str(s?.textToSpeech) ?? str(s?.displayText)
      if (t) return t
    }
    return undefined
  }
  const expected = obj(arr(bodyOf.expectedInputs)[0]) ?? obj(arr(bodyOf.expected_inputs)[0])
  const prompt = obj(expected?.inputPrompt) ?? obj(expected?.input_prompt)
  return (
    str(bodyOf.speech) ??
    str(bodyOf.displayText) ??
    str(bodyOf.fulfillmentText) ??
    simple(obj(google.richResponse)?.items) ??
    simple(obj(prompt?.richInitialPrompt)?.items) ??
    str(obj(arr(prompt?.initial_prompts)[0])?.text_to_speech) ??
    str(obj(arr(prompt?.initialPrompts)[0])?.textToSpeech) ??
    simple(obj(obj(bodyOf.finalResponse)?.richResponse)?.items) ??
    str(obj(obj(bodyOf.final_response)?.speech_response)?.text_to_speech) ??
    str(obj(obj(obj(bodyOf.prompt)?.firstSimple))?.speech) ??
    null
  )
}

/**
 * `microsoftDeprecated` (botbuilder v3 `receive` / `send` middleware): `{ is_microsoft, json }`
 * where `json` is the v3 message; its `address` names the user and the conversation in both
 * directions. Non-message events (conversationUpdate, typing) are kept raw.
 */
export function botbuilderV3Message(platform: RecordPlatform, body: Obj, direction: RecordType): NormalizedMessage[] {
  const m = obj(body.json) ?? {}
  if (m.type !== undefined && m.type !== 'message') return []
  const address = obj(m.address)
  const user = obj(address?.user) ?? obj(m.user)
  const userId = str(user?.id)
  if (!userId) return []
  return [
    message(platform, direction, userId, str(obj(address?.conversation)?.id), {
      text: str(m.text) ?? null,
      ...intentOf(body.intent),
      userJson: str(user?.name) ? { name: user?.name } : null,
    }),
  ]
}
