import type { HandlerInputLike } from './types'

type Builder = { getResponse?: (...args: unknown[]) => object }

const watched = new WeakSet<object>()

/**
 * Watches the answers a request builds: ask-sdk skips response interceptors when a handler
 * throws, and returns the error handler's answer as it is. Each `responseBuilder.getResponse()`
 * of the request is passed to `onBuilt`; on the next turn of the event loop after a build,
 * `onSettled` runs, where the caller checks whether a response interceptor saw the answer. The
 * skill's own call and its result are untouched.
 */
export function watchBuiltResponses(
  input: HandlerInputLike,
  onBuilt: (response: object) => void,
  onSettled: () => void,
): void {
  const builder = (input as { responseBuilder?: Builder }).responseBuilder
  const original = builder?.getResponse
  if (!builder || typeof original !== 'function' || watched.has(builder)) return
  watched.add(builder)
  let scheduled = false
  builder.getResponse = function (this: unknown, ...args: unknown[]) {
    const response = original.apply(this, args)
    onBuilt(response)
    if (!scheduled) {
      scheduled = true
      setImmediate(() => {
        scheduled = false
        onSettled()
      })
    }
    return response
  }
}
