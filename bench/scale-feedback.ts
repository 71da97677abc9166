/**
 * The scale bench's ratings (bench/collector-scale.ts): users rate the bot's answers, so the
 * overview's feedback (count, average, average per rated intent) is timed over a store that has
 * them. The record mix of scale-records.ts has none and a store loaded with it (every store before
 * this file) keeps its records: the ratings are added to it, once, after the load.
 *
 * In three pairs of 100 (universal ones: the pair's user), a minute after the bot's answer, the
 * bot asks "Did that answer your question?" — an outgoing message with one of 30 answer intents —
 * and the user rates it 30 s later with core's `feedbackEvent` (alternately thumbs and stars,
 * one in five with a comment). 150 000 ratings at 10 M records (300 000 records), 15 000 at 1 M.
 * Stored through the collector's own ingest (`prepare` + the store's `addMany`, the batch route's
 * path without HTTP), each received at its own time (as the bulk seed stores them), so every
 * summary — feedback by hour, by day and intent, sessions, users per hour — is kept by the code a
 * live collector runs. Idempotency keys `f.<k>`: a load stopped half way resumes.
 */

import { type RecordStore, validateRecord } from '../packages/collector/src/index'
import { type AcceptedRecord, prepare } from '../packages/collector/src/ingest/ingest'
import { feedbackEvent } from '../packages/core/src/index'
import { type ScaleShape, scaleRecord } from './scale-records'

/** The rated pairs of every 100: universal ones (`scaleRecord`'s slots 0 … 54), so the user is the body's `userId`. */
const RATED_SLOTS = [3, 23, 43]
/** Distinct intents of the answers rated. */
const ANSWER_INTENTS = 30
const COMMENTS = ['that helped, thanks', 'wrong answer', 'too slow', 'perfect']

/** Ratings in a load of `shape`. */
export function ratingsOf(shape: ScaleShape): number {
  const pairs = Math.ceil(shape.records / 2)
  const whole = Math.floor(pairs / 100)
  return whole * RATED_SLOTS.length + RATED_SLOTS.filter((s) => s < pairs % 100).length
}

function accepted(platform: 'universal', type: 'outgoing' | 'event', body: Record<string, unknown>, key: string) {
  validateRecord(platform, type, body, '11.1.0-rest')
  return {
    bot: 'bench',
    platform,
    type,
    v: '11.1.0-rest',
    raw: JSON.stringify(body),
    body,
    idempotencyKey: key,
  } satisfies AcceptedRecord
}

/** Rating `k` of a load of `shape`: the bot's question and the user's answer, with their times. */
export function ratingRecords(k: number, shape: ScaleShape): Array<{ record: AcceptedRecord; ts: number }> {
  const pair = Math.floor(k / RATED_SLOTS.length) * 100 + (RATED_SLOTS[k % RATED_SLOTS.length] as number)
  const { userId } = JSON.parse(scaleRecord(2 * pair, shape).body) as { userId: string }
  const asked = scaleRecord(2 * pair + 1, shape).ts + 60_000
  const rated = asked + 30_000
  const stars = k % 2 === 1
  // Mostly content: thumbs up two times in three, stars 5, 4, 5, 3, 1 in turn (averages 1/3 and 0.3).
  const turn = Math.floor(k / 2)
  const score = stars ? ([5, 4, 5, 3, 1][turn % 5] as number) : turn % 3 === 2 ? -1 : 1
  const question = {
    text: 'Did that answer your question?',
    userId,
    intent: { name: `answer.${k % ANSWER_INTENTS}` },
    platformJson: { timestamp: asked },
  }
  const rating = {
    ...feedbackEvent({
      userId,
      score,
      ...(stars ? { scale: 'stars' as const } : {}),
      ...(k % 5 === 0 ? { comment: COMMENTS[k % COMMENTS.length] as string } : {}),
    }),
    platformJson: { timestamp: rated },
  }
  return [
    { record: accepted('universal', 'outgoing', question, `f.q.${k.toString(36)}`), ts: asked },
    { record: accepted('universal', 'event', rating, `f.r.${k.toString(36)}`), ts: rated },
  ]
}

/** Ratings per batch (two records each): the bot's question is in the batch of its rating. */
const BATCH = 250

/**
 * Gives the store its ratings: the ones not stored yet (by the count of ratings its feedback
 * summary holds; `stored`), `parallel` batches in flight. Returns the seconds it took (0: it had them).
 */
export async function ensureFeedback(
  store: RecordStore,
  shape: ScaleShape,
  stored: number,
  parallel: number,
  log: (line: string) => void,
): Promise<number> {
  const total = ratingsOf(shape)
  if (stored >= total) return 0
  const t0 = performance.now()
  // Batches in flight may have landed out of order: from a little before the count (their keys repeat).
  let next = Math.max(0, stored - parallel * BATCH)
  let shown = next
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < total) {
        const start = next
        next = Math.min(total, next + BATCH)
        const items = []
        for (let k = start; k < next; k++)
          for (const { record, ts } of ratingRecords(k, shape)) items.push(prepare(record, ts))
        await store.addMany(items)
        if (next - shown >= 20_000 || next === total) {
          shown = next
          log(`ratings: ${next.toLocaleString('en')} / ${total.toLocaleString('en')}`)
        }
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  log(`ratings added (${total.toLocaleString('en')}, with the bot's questions) in ${seconds.toFixed(1)} s`)
  return seconds
}
