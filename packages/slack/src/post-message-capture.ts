import { slackTurns } from './turn'

type PostMessage = (options?: Record<string, unknown>) => Promise<unknown>

/** The part of a Web API client this package touches (Bolt's `WebClient`, any version). */
export interface ChatClient {
  chat?: { postMessage?: PostMessage }
}

const wrapped = new WeakSet<object>()

/**
 * Makes `client.chat.postMessage` report each successful call to the Slack turn it was made
 * in. Bolt builds `say()` on this same pooled client's `chat.postMessage` and gives it to every
 * listener, so wrapping it once catches `say()` and direct calls alike. The turn is found
 * through AsyncLocalStorage at call time, so concurrent events sharing the client never get
 * each other's records; calls made outside any event pass straight through.
 */
export function capturePostMessage(client: ChatClient | undefined): void {
  const chat = client?.chat
  if (!chat || typeof chat.postMessage !== 'function' || wrapped.has(chat)) return
  const original = chat.postMessage
  const postMessage: PostMessage = function (this: unknown, options) {
    const turn = slackTurns.getStore()
    const result = original.call(this, options)
    if (!turn) return result
    return result.then((response) => {
      const res = (response ?? {}) as { channel?: unknown; message?: { text?: unknown } }
      const text =
        typeof options?.text === 'string'
          ? options.text
          : typeof res.message?.text === 'string'
            ? res.message.text
            : undefined
      const channel =
        typeof res.channel === 'string' && res.channel
          ? res.channel
          : typeof options?.channel === 'string'
            ? options.channel
            : undefined
      turn.sent({ text, channel })
      return response
    })
  }
  chat.postMessage = postMessage
  wrapped.add(chat)
}
