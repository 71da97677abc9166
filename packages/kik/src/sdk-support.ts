import util from 'node:util'

/**
 * Why the Kik SDK (`@kikinteractive/kik` 2.x) cannot run on this Node, or `undefined` when it
 * can. The SDK calls `util.isString`, which Node 23 removed: there `new Bot()` throws
 * `TypeError: util.isString is not a function`. `kikTracking()` throws this reason instead.
 *
 * @example
 * const reason = kikSdkUnsupportedReason(); if (reason) console.error(reason)
 */
export function kikSdkUnsupportedReason(): string | undefined {
  if (typeof (util as unknown as Record<string, unknown>).isString === 'function') return undefined
  return (
    `@convotrack/kik: the Kik SDK (@kikinteractive/kik 2.x) cannot run on Node ${process.version}: ` +
    'it calls util.isString, which Node 23 removed. Run this bot on Node 22 or 20.'
  )
}
