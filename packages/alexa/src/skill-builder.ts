import type { RequestState } from './request-state'
import type { AlexaResponseLike, ErrorHandlerLike, ErrorMapperLike, HandlerInputLike } from './types'

/** What the error mapper needs from the tracking object. */
export interface ErrorTracking {
  stateOf(input: HandlerInputLike): RequestState | undefined
  /** Tracks the request; `response` undefined = no answer (the skill failed). Never throws. */
  track(state: RequestState, input: HandlerInputLike, response: AlexaResponseLike | undefined): void
  flush(state: RequestState | undefined): Promise<void>
}

/**
 * ask-sdk runs response interceptors only when the handler succeeds; when it throws, the
 * error handler's response is returned without them. This error mapper (installed by
 * `instrument`) wraps the skill's own: it hands back the same error handler, wrapped so its
 * answer is tracked as the outgoing record; with no error handler (the skill fails), it still
 * tracks the incoming record. The skill's errors and answers pass through unchanged.
 */
export function trackingErrorMapper(inner: ErrorMapperLike | undefined, tracking: ErrorTracking): ErrorMapperLike {
  const failed = async (input: HandlerInputLike) => {
    const state = tracking.stateOf(input)
    if (state) tracking.track(state, input, undefined)
    await tracking.flush(state)
  }
  return {
    async getErrorHandler(input, error) {
      let chosen: ErrorHandlerLike | null
      try {
        chosen = inner ? await inner.getErrorHandler(input, error) : null
      } catch (mapperError) {
        await failed(input)
        throw mapperError
      }
      if (!chosen) {
        await failed(input)
        return null
      }
      const handler = chosen
      return {
        canHandle: (i, e) => handler.canHandle(i, e),
        async handle(i, e) {
          let response: AlexaResponseLike
          try {
            response = await handler.handle(i, e)
          } catch (handlerError) {
            await failed(i)
            throw handlerError
          }
          const state = tracking.stateOf(i)
          if (state) tracking.track(state, i, response)
          await tracking.flush(state)
          return response
        },
      }
    },
  }
}
