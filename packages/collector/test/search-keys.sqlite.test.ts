/**
 * SQLite's full-text index keyed by time (migration 20): a file indexed by id before it is keyed
 * in (ts, id) order when it opens, later writes (at instants already stored too) take their place
 * after it, a changed text is found by its new words only and keeps its place, and a scope's bots
 * asked of the index never lose a hit, whatever their names. Every page is compared with the sort
 * of every match.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteRecordStore } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { SQLITE_SEARCH_DDL } from '../src/reports/search-query'
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/sqlite-migrations'
import { item } from './store-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { newestFirst, type SentText, storeSearchHistory } from './support/search-history'

const T = Date.UTC(2026, 2, 2)
const DAY = 86_400_000
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'search-keys-'))
  dirs.push(dir)
  return join(dir, 's.db')
}

/** Every page of `q` (bot `shop`, `limit` a page) from the store, in order. */
async function allPages(store: SqliteRecordStore, q: string, limit: number, extra: object = {}): Promise<string[]> {
  const got: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await store.search({ from: T - 500 * DAY, to: T + DAY, bot: 'shop', q, limit, cursor, ...extra })
    got.push(...page.map((h) => h.text))
    const last = page.at(-1)
    if (page.length < limit || !last) return got
    cursor = `${last.ts}:${last.id}`
  }
}

/** `body` on a store of `file`, closed after it. */
async function withStore(file: string, body: (store: SqliteRecordStore) => Promise<void>): Promise<void> {
  const store = new SqliteRecordStore(file)
  try {
    await body(store)
  } finally {
    await store.close()
  }
}

/** A file holding the search history of the paging tests (`storeSearchHistory`), closed. */
async function historyFile(): Promise<{ file: string; sent: SentText[] }> {
  const file = tempFile()
  const store = new SqliteRecordStore(file)
  const sent = await storeSearchHistory(store, T)
  await store.close()
  return { file, sent }
}

/** Every page of each (word, page size) equals the sort of the texts of `sent` that hold the word. */
async function expectEveryPage(
  store: SqliteRecordStore,
  sent: readonly SentText[],
  pairs: ReadonlyArray<readonly [string, number]>,
): Promise<void> {
  for (const [q, limit] of pairs) expect(await allPages(store, q, limit), `${q} ${limit}`).toEqual(newestFirst(sent, q))
}

/** Turns a file back into the search schema of version 19 (FTS5 keyed by id). */
function backTo19(file: string): void {
  const db = openKeptSqlite(file)
  try {
    db.exec(`DROP TRIGGER search_insert; DROP TRIGGER search_delete; DROP TRIGGER search_update;
      DROP TABLE search_fts; DROP TABLE search_keys;`)
    db.exec(SQLITE_SEARCH_DDL)
    db.pragma('user_version = 19')
  } finally {
    db.close()
  }
}

describe('SQLite search keyed by time', () => {
  it('an upgraded file is keyed in (ts, id) order; later writes at stored instants come after them', async () => {
    const latest = SQLITE_MIGRATIONS.at(-1)?.version
    expect(SQLITE_MIGRATIONS.find((m) => m.version === 20)?.name).toMatch(/^search: the full-text index keyed by time/)
    const { file, sent } = await historyFile()
    backTo19(file)
    await withStore(file, async (store) => {
      const db = openKeptSqlite(file, { readonly: true })
      expect(db.pragma('user_version', { simple: true })).toBe(latest)
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'messages_fts'").pluck().get()).toBe(0)
      db.close()
      // A page of one hit crosses every boundary (same-instant pairs among them) of one common word.
      await expectEveryPage(store, sent, [
        ['order', 1],
        ['order', 37],
        ['rare', 1],
        ['hello', 37],
        ['old', 1],
      ])
      // Written after the upgrade: at instants the history holds (a live pair's, an imported
      // message's) and at new ones; each comes after the stored ones of its instant.
      const instants = [sent[0], sent[1], sent.at(-1), sent[1200]].map((s) => (s as SentText).ts)
      const later = [...instants, T + 3_600_000, T + 3_600_000]
      for (const [i, at] of later.entries()) {
        const text = `order later ${i}`
        sent.push({ text, ts: at, n: sent.length })
        const x = item('shop', 'universal', 'incoming', { userId: `w${i}`, text }, { at })
        await store.add(x.record, x.messages)
      }
      await expectEveryPage(store, sent, [
        ['order', 5],
        ['order', 37],
        ['later', 1],
      ])
    })
  })

  it('a changed text is found by its new words, in its place; a text removed leaves the index', async () => {
    const { file, sent } = await historyFile()
    // Three live messages change their text (the one at sent[30] to none, then back).
    const db = openKeptSqlite(file)
    const set = db.prepare('UPDATE messages SET text = ? WHERE id = ?')
    for (const n of [10, 11, 30]) set.run(n === 30 ? null : `changed words ${n}`, n + 1)
    set.run('changed again 30', 31)
    db.close()
    const changed = sent.map((s) =>
      [10, 11].includes(s.n)
        ? { ...s, text: `changed words ${s.n}` }
        : s.n === 30
          ? { ...s, text: 'changed again 30' }
          : s,
    )
    await withStore(file, (store) =>
      expectEveryPage(store, changed, [
        ['changed', 1],
        ['order', 7],
        ['hello', 37],
        ['live', 37],
      ]),
    )
  })

  // (Ingest floors event times to whole ms: a fraction comes only from a caller of the store's API.
  // A page's cursor holds whole ms, so these are read as one page.)
  it('a time stored with a fraction of a millisecond is keyed by its whole millisecond: stored, found, in order', async () => {
    await withStore(tempFile(), async (store) => {
      const times = [T, T + 0.25, T + 0.75, T + 1, T - 1, T + 0.5]
      for (const [n, at] of times.entries()) {
        const x = item('shop', 'universal', 'incoming', { userId: `u${n}`, text: `order at ${n}` }, { at })
        await store.add(x.record, x.messages)
      }
      // Within the millisecond, in the order stored (the last, at T + 0.5, after T + 0.75).
      const order = ['order at 3', 'order at 5', 'order at 2', 'order at 1', 'order at 0', 'order at 4']
      const page = await store.search({ from: T - DAY, to: T + DAY, bot: 'shop', q: 'order', limit: 10 })
      expect(page.map((h) => h.text)).toEqual(order)
    })
  })

  it("a scope's bots asked of the index: names the tokenizer splits, merges or drops lose no hit", async () => {
    await withStore(tempFile(), async (store) => {
      // Names that read as the same words ("shop eu"), a quote, none but punctuation, a word of the query.
      const bots = ['shop-eu', 'Shop_EU', 'shop', 'eu shop', 'a"b', '---', 'order', 'Café']
      const sent: Array<SentText & { bot: string }> = []
      for (let i = 0; i < 160; i++) {
        const bot = bots[i % bots.length] as string
        const text = `${i % 2 === 0 ? 'order' : 'hello'} from ${i}`
        const at = T - (160 - Math.floor(i / 3)) * 60_000
        sent.push({ text, ts: at, n: i, bot })
        const x = item(bot, 'universal', 'incoming', { userId: `u${i % 7}`, text }, { at })
        await store.add(x.record, x.messages)
      }
      const expected = (scope: readonly string[], q: string) =>
        newestFirst(
          sent.filter((s) => scope.includes(s.bot)),
          q,
        )
      const pages = async (filter: { bot?: string; bots?: string[] }, q: string, limit: number) => {
        const got: string[] = []
        let cursor: string | undefined
        for (;;) {
          const page = await store.search({ from: T - DAY, to: T + DAY, q, limit, cursor, ...filter })
          got.push(...page.map((h) => h.text))
          const last = page.at(-1)
          if (page.length < limit || !last) return got
          cursor = `${last.ts}:${last.id}`
        }
      }
      for (const q of ['order', 'hello', 'from'])
        for (const limit of [3, 50]) {
          for (const bot of bots) expect(await pages({ bot }, q, limit), `${bot} ${q}`).toEqual(expected([bot], q))
          for (const scope of [['shop-eu', 'shop'], ['---', 'a"b'], ['order', 'Café', 'eu shop'], bots])
            expect(await pages({ bots: scope }, q, limit), `${scope.join(',')} ${q}`).toEqual(expected(scope, q))
          // A bot inside a scope it is not part of: nothing.
          expect(await pages({ bot: 'shop', bots: ['Shop_EU'] }, q, limit)).toEqual([])
          expect(await pages({ bot: 'cafe' }, q, limit)).toEqual([])
        }
    })
  })
})
