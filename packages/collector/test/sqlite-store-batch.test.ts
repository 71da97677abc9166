import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { normalizeRecord, SqliteRecordStore } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { batchBodySpans } from '../src/http/batch-body-spans'
import { openKeptSqlite } from './support/kept-sqlite'

const record = (text: string, idempotencyKey?: string, bot = 'b') => ({
  bot,
  platform: 'universal' as const,
  type: 'incoming' as const,
  v: '11.1.0-rest' as const,
  raw: JSON.stringify({ text, userId: 'u' }),
  receivedAt: Date.now(),
  idempotencyKey,
})
const messages = (text: string) => normalizeRecord('universal', 'incoming', { text, userId: 'u' })
const item = (text: string, key?: string, bot?: string) => ({
  record: record(text, key, bot),
  messages: messages(text),
})

describe('SqliteRecordStore.addMany and idempotency keys', () => {
  it('stores a batch in order with its messages; repeats of a (bot, key) are duplicates with the stored id', async () => {
    const store = new SqliteRecordStore()
    const first = await store.addMany([item('a', 'k.0'), item('b'), item('c', 'k.1'), item('a again', 'k.0')])
    expect(first.map((r) => [r.duplicate, r.messages.map((m) => m.text)])).toEqual([
      [false, ['a']],
      [false, ['b']],
      [false, ['c']],
      [true, []],
    ])
    expect(first[3]!.id).toBe(first[0]!.id)
    const retry = await store.addMany([item('a', 'k.0'), item('c', 'k.1'), item('a', 'k.0', 'other-bot')])
    expect(retry.map((r) => [r.id, r.duplicate])).toEqual([
      [first[0]!.id, true],
      [first[2]!.id, true],
      [expect.any(Number), false],
    ])
    const single = await store.add(record('c', 'k.1'), messages('c'))
    expect(single).toEqual({ id: first[2]!.id, duplicate: true, messages: [] })
    expect((await store.recent({})).map((m) => `${m.bot}:${m.text}`)).toEqual(['b:a', 'b:b', 'b:c', 'other-bot:a'])
    expect(await store.counts()).toEqual({ records: 4, messages: 4 })
    await store.close()
  })

  it('one failing record rolls the whole batch back (one transaction)', async () => {
    const store = new SqliteRecordStore()
    const bad = { record: record('bad'), messages: messages('bad').map((m) => ({ ...m, userId: null as never })) }
    await expect(store.addMany([item('one', 'x.1'), bad])).rejects.toThrow()
    expect(await store.counts()).toEqual({ records: 0, messages: 0 })
    // The key was not taken by the rolled-back record.
    expect((await store.addMany([item('one', 'x.1')]))[0]!.duplicate).toBe(false)
    await store.close()
  })

  it('keeps arrival order with single adds still waiting for their group commit', async () => {
    const store = new SqliteRecordStore()
    const pending = store.add(record('single'), messages('single'))
    await store.addMany([item('batched')])
    await pending
    expect((await store.recent({})).map((m) => m.text)).toEqual(['single', 'batched'])
    await store.close()
  })

  it('adds the idempotency column and index to a database file made before them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convotrack-migrate-'))
    try {
      const file = join(dir, 'old.db')
      const old = openKeptSqlite(file)
      old.exec(`CREATE TABLE records (id INTEGER PRIMARY KEY, bot TEXT NOT NULL, platform TEXT NOT NULL, type TEXT NOT NULL,
        v TEXT NOT NULL, received_at INTEGER NOT NULL, raw TEXT NOT NULL);
        INSERT INTO records (bot, platform, type, v, received_at, raw) VALUES ('b', 'universal', 'incoming', '11.1.0-rest', 1, '{}');`)
      old.close()
      const store = new SqliteRecordStore(file)
      const [r] = await store.addMany([item('new', 'm.1')])
      expect(r).toMatchObject({ id: 2, duplicate: false })
      expect((await store.addMany([item('new', 'm.1')]))[0]).toMatchObject({ id: 2, duplicate: true })
      await store.close()
      const reopened = new SqliteRecordStore(file)
      expect((await reopened.add(record('new', 'm.1'), messages('new'))).duplicate).toBe(true)
      expect(await reopened.counts()).toEqual({ records: 2, messages: 1 })
      await reopened.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('batchBodySpans', () => {
  const bodies = (text: string) => batchBodySpans(text)?.map((s) => (s ? text.slice(s[0], s[1]) : s))

  it('finds each record body exactly as written', () => {
    expect(bodies('{"records":[{"body":{"a":1}},{"v":"x","body":[1,{"b":"}"}]}]}')).toEqual([
      '{"a":1}',
      '[1,{"b":"}"}]',
    ])
    expect(
      bodies(' { "x" : {"records":1} , "records" : [ { "body" : "s\\"}" } , 7 , {"no":1} , {"body":-1.5e3} ] } '),
    ).toEqual(['"s\\"}"', undefined, undefined, '-1.5e3'])
  })

  it('takes the last of repeated keys, like JSON.parse, and decodes escaped keys', () => {
    expect(bodies('{"records":[{"body":1,"body":{"c":"\\\\"}}],"\\u0072ecords":[{"body":true}]}')).toEqual(['true'])
    expect(bodies('{"records":[{"body":1,"b\\u006fdy":{"c":"\\\\"}}]}')).toEqual(['{"c":"\\\\"}'])
  })

  it('gives undefined when records is not an array', () => {
    expect(batchBodySpans('{"records":{}}')).toBeUndefined()
    expect(batchBodySpans('[]')).toBeUndefined()
    expect(bodies('{"records":[]}')).toEqual([])
  })
})
