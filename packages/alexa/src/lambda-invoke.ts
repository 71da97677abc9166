import type { LambdaContextLike, LambdaFunction, WrappedLambdaContext } from './types'

/**
 * Runs a Lambda handler written in any style and settles with its answer: the promise it
 * returns, the callback, or `context.succeed` / `fail` / `done`, whichever comes first.
 * The handler gets a copy of the context whose `succeed` / `fail` / `done` report here
 * instead of to the runtime, so the wrapper (not the handler) decides when Lambda answers.
 */
export function invokeLambdaFunction<E, R>(
  fn: LambdaFunction<E, R>,
  event: E,
  context: LambdaContextLike | undefined,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    let settled = false
    const settle = (error: unknown, result: unknown) => {
      if (settled) return
      settled = true
      if (error !== undefined && error !== null) reject(error)
      else resolve(result as R)
    }
    // A descriptor copy keeps the runtime's getters/setters (callbackWaitsForEmptyEventLoop) working.
    const ctx = Object.defineProperties(
      {},
      context ? Object.getOwnPropertyDescriptors(context) : {},
    ) as WrappedLambdaContext
    Object.defineProperties(ctx, {
      succeed: { value: (result?: unknown) => settle(undefined, result), configurable: true, writable: true },
      fail: {
        value: (error?: unknown) => settle(error ?? new Error('context.fail() called'), undefined),
        configurable: true,
        writable: true,
      },
      done: { value: (error?: unknown, result?: unknown) => settle(error, result), configurable: true, writable: true },
    })
    let returned: unknown
    try {
      returned = fn(event, ctx, (error, result) => settle(error, result))
    } catch (error) {
      settle(error ?? new Error('handler threw'), undefined)
      return
    }
    if (returned !== null && typeof returned === 'object' && typeof (returned as PromiseLike<R>).then === 'function') {
      ;(returned as PromiseLike<R>).then(
        (result) => settle(undefined, result),
        (error: unknown) => settle(error ?? new Error('handler rejected'), undefined),
      )
    } else if (returned !== undefined) settle(undefined, returned)
    // else: a callback-style handler; it answers through the callback or the context.
  })
}
