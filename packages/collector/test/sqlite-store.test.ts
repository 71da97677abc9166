import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { normalizeRecord, SqliteRecordStore } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'

const record = (text: string) => ({
  bot: 'b',
  platform: 'universal' as const,
  type: 'incoming' as const,
  v: '11.1.0-rest' as const,
  raw: JSON.stringify({ text, userId: 'u' }),
  receivedAt: Date.now(),
})
const messages = (text: string) => normalizeRecord('universal', 'incoming', { text, userId: 'u' })

describe('SqliteRecordStore', () => {
  it('concurrent adds share a commit, and one failing record does not fail the others', async () => {
    const store = new SqliteRecordStore()
    const bad = messages('bad').map((m) => ({ ...m, userId: null as unknown as string })) // violates NOT NULL
    const results = await Promise.allSettled([
      store.add(record('one'), messages('one')),
      store.add(record('bad'), bad),
      store.add(record('two'), messages('two')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((await store.recent({})).map((m) => m.text)).toEqual(['one', 'two'])
    expect(await store.counts()).toEqual({ records: 2, messages: 2 })
    await store.close()
  })

  it('keeps records in a file across reopenings, and pending adds are committed on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convotrack-store-'))
    try {
      const file = join(dir, 'r.db')
      const first = new SqliteRecordStore(file)
      const added = first.add(record('kept'), messages('kept'))
      await first.close()
      await added
      const second = new SqliteRecordStore(file)
      expect((await second.recent({})).map((m) => m.text)).toEqual(['kept'])
      expect((await second.record(1))?.raw).toBe(JSON.stringify({ text: 'kept', userId: 'u' }))
      await second.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('SqliteRecordStore transcript paging and filtered counts', () => {
  /** `n` universal messages "<prefix> 1…n" from `userId` on bot `bot`, one record each. */
  async function fill(store: SqliteRecordStore, bot: string, userId: string, n: number, prefix = 'm'): Promise<void> {
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const body = { text: `${prefix} ${i + 1}`, userId }
        return store.add(
          { bot, platform: 'universal', type: 'incoming', v: '11.1.0-rest', raw: JSON.stringify(body), receivedAt: 1 },
          normalizeRecord('universal', 'incoming', body),
        )
      }),
    )
  }

  it('pages a transcript backwards with beforeId, each page oldest first, no message twice or missed', async () => {
    const store = new SqliteRecordStore()
    await fill(store, 'b', 'ann', 25)
    await fill(store, 'b', 'bob', 5, 'other') // another thread interleaved after: never in ann's pages
    await fill(store, 'c', 'ann', 3, 'other bot') // same thread name, another bot
    const seen: string[] = []
    let beforeId: number | undefined
    const pageSizes: number[] = []
    for (let i = 0; i < 10; i++) {
      const page = await store.transcript('b', 'ann', { limit: 10, ...(beforeId !== undefined ? { beforeId } : {}) })
      if (page.length === 0) break
      pageSizes.push(page.length)
      const ids = page.map((m) => m.id)
      expect(ids).toEqual([...ids].sort((x, y) => x - y)) // arrival order within the page
      if (beforeId !== undefined) expect(Math.max(...ids)).toBeLessThan(beforeId)
      seen.unshift(...page.map((m) => m.text ?? ''))
      beforeId = page[0]?.id
    }
    expect(pageSizes).toEqual([10, 10, 5])
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `m ${i + 1}`))
    // The default is the latest 500; limit is clamped to at least one.
    expect((await store.transcript('b', 'ann')).map((m) => m.text)).toEqual(seen)
    expect((await store.transcript('b', 'ann', { limit: 0 })).map((m) => m.text)).toEqual(['m 25'])
    expect(await store.transcript('b', 'ann', { beforeId: 1 })).toEqual([])
    await store.close()
  })

  it('counts all records, or one bot’s', async () => {
    const store = new SqliteRecordStore()
    await fill(store, 'b', 'ann', 4)
    await fill(store, 'c', 'cy', 2)
    expect(await store.counts()).toEqual({ records: 6, messages: 6 })
    expect(await store.counts({})).toEqual({ records: 6, messages: 6 })
    expect(await store.counts({ bot: 'c' })).toEqual({ records: 2, messages: 2 })
    expect(await store.counts({ bot: 'nobody' })).toEqual({ records: 0, messages: 0 })
    await store.close()
  })
})
