/**
 * A search history for paging tests: live traffic over 30 days (stored in time order, pairs at
 * the same instant), then an import of older history stored last (its ids above every live
 * message's). "order" is in a third of the live messages and half the old ones, "rare" in a few.
 */
import type { RecordStore } from '@convotrack/collector'
import { item } from '../store-contract'

const MIN = 60_000
const DAY = 24 * 60 * MIN

export interface SentText {
  text: string
  ts: number
  /** Order of storing (the ids' order). */
  n: number
}

export async function storeSearchHistory(store: RecordStore, now: number): Promise<SentText[]> {
  const sent: SentText[] = []
  const add = (text: string, ts: number) => {
    sent.push({ text, ts, n: sent.length })
    return item('shop', 'universal', 'incoming', { userId: `u${sent.length % 40}`, text }, { at: ts })
  }
  const batch = []
  for (let i = 0; i < 2600; i++) {
    const text = `${i % 3 === 0 ? 'order' : 'hello'} ${i % 500 === 7 ? 'rare' : 'live'} ${i}`
    batch.push(add(text, now - 30 * DAY + Math.floor(i / 2) * 2 * MIN))
  }
  for (let i = 0; i < 300; i++) {
    const text = `old ${i % 2 === 0 ? 'order' : 'hello'} ${i % 100 === 3 ? 'rare' : 'past'} ${i}`
    batch.push(add(text, now - 400 * DAY + i * 17 * MIN))
  }
  for (let i = 0; i < batch.length; i += 500) await store.addMany(batch.slice(i, i + 500))
  return sent
}

/** The texts holding the word `q`, newest first (event time, then the later stored). */
export const newestFirst = (sent: readonly SentText[], q: string): string[] =>
  sent
    .filter((s) => s.text.split(' ').includes(q))
    .sort((a, b) => b.ts - a.ts || b.n - a.n)
    .map((s) => s.text)
