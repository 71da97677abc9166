import diagnostics from 'node:diagnostics_channel'
import { type SlackTurn, slackTurns } from './turn'

/** What undici publishes about a request (the fields read here). */
interface UndiciRequest {
  origin?: unknown
  path?: unknown
  method?: unknown
  body?: unknown
}

const watched = new WeakMap<object, { turn: SlackTurn; chunks: Uint8Array[]; settle: () => void }>()
let subscribed = false

/**
 * Observes `respond()`. Bolt 5 posts it with `fetch` to the event's `response_url`, through a
 * fetch reference taken when the App was built, so it cannot be wrapped from a middleware.
 * Node's fetch (undici) announces every request on `diagnostics_channel`, in the async context
 * of the caller: a request to the current turn's response_url is a `respond()` of that turn.
 * Its JSON body is read by passing the body stream through unchanged, and recorded once the
 * response status is 2xx. Until its answer is in, the request is work the tracker waits for
 * (`flush()` sees the record coming).
 */
export function captureRespond(): void {
  if (subscribed) return
  subscribed = true
  diagnostics.subscribe('undici:request:create', onCreate)
  diagnostics.subscribe('undici:request:headers', onHeaders)
  diagnostics.subscribe('undici:request:error', onError)
}

function onCreate(message: unknown): void {
  try {
    const turn = slackTurns.getStore()
    if (!turn || turn.responseUrls.size === 0) return
    const request = (message as { request?: UndiciRequest }).request
    if (request?.method !== 'POST' || typeof request.origin !== 'string' || typeof request.path !== 'string') return
    if (!turn.responseUrls.has(`${request.origin}${request.path}`)) return
    const chunks: Uint8Array[] = []
    const body = request.body
    if (typeof body === 'string') chunks.push(Buffer.from(body))
    else if (body instanceof Uint8Array) chunks.push(body)
    else if (isAsyncIterable(body)) request.body = passThrough(body, chunks)
    else return
    let settle = (): void => {}
    const answered = new Promise<void>((resolve) => {
      settle = resolve
    })
    watched.set(request, { turn, chunks, settle })
    turn.expect(answered)
  } catch {
    // observing must never disturb the request
  }
}

function onHeaders(message: unknown): void {
  try {
    const { request, response } = message as { request?: object; response?: { statusCode?: number } }
    const seen = request && watched.get(request)
    if (!seen) return
    watched.delete(request)
    try {
      const status = response?.statusCode ?? 0
      if (status < 200 || status >= 300) return
      const parsed = JSON.parse(Buffer.concat(seen.chunks).toString('utf8')) as { text?: unknown }
      seen.turn.sent({ text: typeof parsed.text === 'string' ? parsed.text : undefined, channel: seen.turn.channel })
    } finally {
      seen.settle()
    }
  } catch {
    // an unreadable body is not tracked; the bot's request is untouched
  }
}

/** The request failed (network, abort): no record, and nothing to wait for any more. */
function onError(message: unknown): void {
  const request = (message as { request?: object }).request
  const seen = request && watched.get(request)
  if (!seen) return
  watched.delete(request)
  seen.settle()
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  )
}

/** Yields every chunk unchanged (errors and early returns propagate), keeping a copy. */
async function* passThrough(source: AsyncIterable<Uint8Array>, chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    yield chunk
  }
}
