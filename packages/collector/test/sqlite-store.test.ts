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

describe('SqliteRecordStore.notHandled', () => {
  const add = (
    store: SqliteRecordStore,
    type: 'incoming' | 'outgoing',
    text: string,
    user: string,
    intent?: string,
  ) => {
    const body = { text, userId: user, ...(intent ? { intent: { name: intent } } : {}) }
    return store.add(
      { bot: 'b', platform: 'universal', type, v: '12.1.0-npm', raw: JSON.stringify(body), receivedAt: Date.now() },
      normalizeRecord('universal', type, body),
    )
  }

  it('an outgoing NotHandled reply counts the incoming message it answered (the latest before it, same thread), once', async () => {
    const store = new SqliteRecordStore()
    await add(store, 'incoming', 'hello', 'u1')
    await add(store, 'outgoing', 'hi!', 'u1')
    await add(store, 'incoming', 'Flibber', 'u1')
    await add(store, 'incoming', 'hello', 'u2') // another thread in between
    await add(store, 'outgoing', 'Sorry?', 'u1', 'NotHandled')
    await add(store, 'outgoing', 'Could you rephrase?', 'u1', 'NotHandled') // same input: counted once
    await add(store, 'incoming', 'flibber ', 'u2', 'NotHandled') // marked on the input itself
    await add(store, 'outgoing', 'Sorry?', 'u2', 'NotHandled') // answers the same input: still once
    await add(store, 'outgoing', 'Nobody asked', 'u3', 'NotHandled') // no input before it: nothing
    expect(await store.notHandled({})).toEqual([
      { text: 'Flibber', count: 2, users: 2, lastTs: expect.any(Number), bots: ['b'] },
    ])
    expect(await store.notHandled({ bot: 'other' })).toEqual([])
    await store.close()
  })
})
