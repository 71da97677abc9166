import type { HookedRecord } from '@convotrack/core'

/** What an event says about a record besides its platform and direction. */
export interface RecordFacts {
  intent: string | undefined
  text: string | undefined
  eventName: string | undefined
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/**
 * The intent, text and event name of a wire body, where its shape has them: the universal
 * shape (and the DM platform, which pulls `text` to the top), Messenger's Send API request and
 * webhook body, the voice assistant's response. Other shapes give only what sits at the top.
 */
export function recordFacts(record: HookedRecord): RecordFacts {
  const b = record.body as Obj
  if (record.type === 'event') return { intent: undefined, text: undefined, eventName: str(b.name) ?? str(b.type) }
  const messaging = obj(
    (Array.isArray(b.entry) ? (obj(b.entry[0])?.messaging as unknown[] | undefined) : undefined)?.[0],
  )
  const intent =
    str(obj(b.intent)?.name) ?? str(obj(messaging?.intent)?.name) ?? str(obj(obj(b.response)?.intent)?.name)
  const text =
    str(b.text) ??
    str(obj(obj(b.json)?.message)?.text) ??
    str(obj(messaging?.message)?.text) ??
    str(obj(obj(obj(b.response)?.response)?.outputSpeech)?.text)
  return { intent, text, eventName: undefined }
}
