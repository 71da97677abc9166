/**
 * Ingest's look-backs (an outgoing NotHandled reply's input, a feedback event's rated answer: the
 * thread's latest message of a direction stored before it) answered from the batch itself when
 * the message they look for is in it — on SQLite, where that answer is exact: one writer, and a
 * batch's messages get consecutive ids in its transaction (a rebuild's keyset page is a run of
 * ids too), so every message stored between two of the batch's is the batch's. The SQLite file
 * keeps no arrival-order index per thread for the look-backs that reach before the batch (step
 * 11): they take the thread's rows from its event-time index. On PostgreSQL other collectors'
 * messages commit with ids in between: the database answers, from its index.
 */
import type { Dialect } from './dialect'
import type { RollupMessage } from './rollup-delta'

/**
 * The latest message of `m`'s thread in `direction` with a smaller id, from `batch`; `undefined`
 * when the database must answer (not in the batch, or not SQLite).
 */
export function latestInBatch(
  d: Dialect,
  batch: readonly RollupMessage[],
  m: RollupMessage,
  direction: string,
): RollupMessage | undefined {
  if (d.name !== 'sqlite') return undefined
  let best: RollupMessage | undefined
  for (const o of batch)
    if (
      o.id < m.id &&
      (best === undefined || o.id > best.id) &&
      o.direction === direction &&
      o.thread === m.thread &&
      o.bot === m.bot
    )
      best = o
  return best
}
