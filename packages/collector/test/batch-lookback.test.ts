// Ingest's look-backs on SQLite (a NotHandled reply's input, a feedback event's rated answer) are
// answered from the batch when what they look for is in it, and by the database otherwise (the
// file keeps no arrival-order index per thread since step 11). Both ways give the same marks:
// the same records stored in one batch and one by one leave the same `nh` and `rated_intent` on
// every message, and the reports equal a full recount.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { world } from './analytics-contract'
import { expectMatchesRecount } from './rollup-contract'
import { item } from './store-contract'
import { openKeptSqlite } from './support/kept-sqlite'

const T = Date.UTC(2026, 4, 4, 9)
const MIN = 60_000
const say = (bot: string, type: 'incoming' | 'outgoing', user: string, at: number, body: object = {}) =>
  item(bot, 'universal', type, { userId: user, text: `${type} ${user} ${at}`, ...body }, { at })
const rate = (user: string, at: number, score: number) =>
  item(
    'shop',
    'generic',
    'event',
    { type: 'customEvent', name: 'feedback', userId: user, extraInfo: { score, scale: 'thumbs' } },
    { at },
  )
const NH = { intent: { name: 'NotHandled' } }

/** Look-backs whose target is in the batch beside ones that are not, and near misses of each. */
function tricky() {
  return [
    ...world(),
    // The rated answer is the latest before the rating, not a later one, nor another thread's or bot's.
    say('shop', 'outgoing', 'fay', T, { intent: { name: 'first' } }),
    say('help', 'outgoing', 'fay', T + MIN, { intent: { name: 'other-bot' } }),
    say('shop', 'outgoing', 'gus', T + 2 * MIN, { intent: { name: 'other-thread' } }),
    rate('fay', T + 3 * MIN, 1),
    say('shop', 'outgoing', 'fay', T + 4 * MIN, { intent: { name: 'after' } }),
    // A rating with no answer before it in its thread at all.
    rate('hal', T + 5 * MIN, -1),
    // A NotHandled reply marks the thread's latest input before it (an earlier event time does not matter).
    say('shop', 'incoming', 'ivy', T + 10 * MIN, { text: 'one' }),
    say('shop', 'incoming', 'ivy', T + 6 * MIN, { text: 'two' }),
    say('shop', 'incoming', 'jo', T + 11 * MIN, { text: 'other thread' }),
    say('shop', 'outgoing', 'ivy', T + 12 * MIN, NH),
    say('shop', 'incoming', 'ivy', T + 13 * MIN, { text: 'after the reply' }),
    // A reply with no input before it, and two replies to one input (marked once).
    say('shop', 'outgoing', 'kim', T + 14 * MIN, NH),
    say('shop', 'incoming', 'lu', T + 15 * MIN, { text: 'huh' }),
    say('shop', 'outgoing', 'lu', T + 16 * MIN, NH),
    say('shop', 'outgoing', 'lu', T + 17 * MIN, NH),
  ]
}

async function stored(batches: number[]): Promise<{ marks: unknown[]; store: SqliteRecordStore }> {
  const file = join(mkdtempSync(join(tmpdir(), 'ct-lookback-')), 'store.db')
  const store = new SqliteRecordStore(file)
  const items = tricky()
  let at = 0
  for (const size of batches) {
    await store.addMany(items.slice(at, at + size))
    at += size
  }
  for (const i of items.slice(at)) await store.add(i.record, i.messages)
  const db = openKeptSqlite(file, { readonly: true })
  try {
    const marks = db.prepare('SELECT id, direction, thread, nh, rated_intent FROM messages ORDER BY id').all()
    return { marks, store }
  } finally {
    db.close()
  }
}

describe('SQLite look-backs at ingest', () => {
  it('answered from the batch equal those answered by the database, at every cut of the batches', async () => {
    const n = tricky().length
    const one = await stored([])
    await one.store.close()
    // The whole load in one batch, cuts between a target and its look-back, and batches of 3.
    for (const cuts of [[n], [20, n - 20], [23, 1, n - 24], Array.from({ length: Math.ceil(n / 3) }, () => 3)]) {
      const batched = await stored(cuts)
      try {
        expect(batched.marks, `batches ${cuts.join(', ')}`).toEqual(one.marks)
        await expectMatchesRecount(batched.store)
      } finally {
        await batched.store.close()
      }
    }
    // The cases above did happen: the rated answers and the marked inputs.
    const rated = one.marks.filter((m) => (m as { rated_intent: string | null }).rated_intent !== null)
    expect(rated.map((m) => (m as { rated_intent: string }).rated_intent)).toEqual(['greet', '', 'first', ''])
    const marked = one.marks.filter((m) => (m as { nh: number; direction: string }).nh === 1)
    expect(marked.map((m) => (m as { thread: string }).thread)).toEqual(['dee', 'ivy', 'lu'])
  })
})
