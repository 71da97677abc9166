/** Characters of record text a batch works through before it lets other requests run. */
const TURN_CHARS = 256 * 1024

/**
 * A pacer for long synchronous work over many records (a 4 MiB batch): `await pace(n)` after
 * each piece of `n` characters; once a quarter megabyte has gone by it waits for the next turn
 * of the event loop, so `/healthz` and other requests are answered in between.
 *
 * @example const pace = pacer(); for (const r of records) { work(r); await pace(r.raw.length) }
 */
export function pacer(turnChars: number = TURN_CHARS): (chars: number) => Promise<void> {
  let used = 0
  return async (chars) => {
    used += chars
    if (used < turnChars) return
    used = 0
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}
