import { AsyncLocalStorage } from 'node:async_hooks'
import type { HeldTurn } from '@convotrack/core'
import type { HandlerInputLike, VoiceTurn } from './types'

/**
 * What the adapter knows about one skill request. It lives in ask-sdk's request attributes
 * (one object per `skill.invoke`), so two requests handled at once never share it.
 */
export interface RequestState extends VoiceTurn {
  event: unknown
  /** The Lambda context (or whatever was passed to `skill.invoke` as context). */
  context: unknown
  incomingTracked: boolean
  outgoingTracked: boolean
  /** The pause handler answered: the skill said nothing, so there is no outgoing record. */
  paused: boolean
  /** `handler(fn)` runs this request: it tracks what is left and flushes once at the end. */
  wrapped: boolean
  /** The handler input that adopted a `handler(fn)` state (a second `invoke` in the same call gets its own). */
  adoptedBy: object | undefined
  /** The tracker's buffer holding the incoming record until the request is answered (or its deadline). */
  held: HeldTurn | undefined
  /** The last response the skill built through `responseBuilder.getResponse()`: the error handler's answer. */
  built: object | undefined
  /** Releases the incoming record if nothing answered in time (a throwing handler, a Lambda timing out). */
  deadline: NodeJS.Timeout | undefined
  /** The response interceptor (or the error mapper) saw the answer. */
  answered: boolean
}

export function newRequestState(event: unknown, context: unknown, wrapped = false): RequestState {
  return {
    event,
    context,
    notHandled: false,
    intent: undefined,
    userMetadata: undefined,
    incomingTracked: false,
    outgoingTracked: false,
    paused: false,
    wrapped,
    adoptedBy: undefined,
    held: undefined,
    built: undefined,
    deadline: undefined,
    answered: false,
  }
}

// A symbol key: invisible to the skill's own attribute names and to JSON.
const STATE = Symbol.for('convotrack.alexa.request')

/**
 * Per-request state stores: request attributes first; a WeakMap on the handler input in case
 * the skill replaced the attributes object (`setRequestAttributes({...})`); and the async
 * scope of `handler(fn)`, whose state an ask-sdk request adopts.
 */
export class RequestStates {
  private readonly byInput = new WeakMap<object, RequestState>()
  private readonly wrapper = new AsyncLocalStorage<RequestState>()

  /** The state of this request, created on first use. */
  of(input: HandlerInputLike): RequestState {
    const attrs = input.attributesManager.getRequestAttributes() as Record<symbol, RequestState | undefined>
    let state = attrs[STATE] ?? this.byInput.get(input)
    if (!state) {
      const outer = this.wrapper.getStore()
      if (outer && (outer.adoptedBy === undefined || outer.adoptedBy === input)) {
        outer.adoptedBy = input
        outer.event = input.requestEnvelope
        if (input.context !== undefined) outer.context = input.context
        state = outer
      } else state = newRequestState(input.requestEnvelope, input.context)
      this.byInput.set(input, state)
    }
    if (attrs[STATE] !== state) attrs[STATE] = state
    return state
  }

  /** The state of the `handler(fn)` call running now, if any. */
  current(): RequestState | undefined {
    return this.wrapper.getStore()
  }

  /** Runs `fn` (a wrapped Lambda handler) with `state` as the state its ask-sdk request adopts. */
  runWrapped<T>(state: RequestState, fn: () => T): T {
    return this.wrapper.run(state, fn)
  }
}
