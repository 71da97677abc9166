/**
 * The handoff desk's part of the store contract (`HandoffStore`), the same tests on SQLite and on
 * a real PostgreSQL: locked read-modify-write, queue order and filters, auto-resume taking each
 * idle conversation once, notes, erasure.
 */
import type { RecordStore } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { freshRow } from '../src/live/handoff-rules'
import type { HandoffRow } from '../src/store/handoff-records'
import { addAt, backends } from './support/backends'

const waiting = (row: HandoffRow, since: number, text: string): HandoffRow => ({
  ...row,
  state: 'waiting',
  reason: 'asked',
  since,
  text,
})

for (const backend of backends()) {
  describe(`HandoffStore (${backend.name})`, () => {
    const open: RecordStore[] = []
    const store = async () => {
      const s = await backend.store()
      open.push(s)
      return s
    }
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close()
    })

    it('updateHandoff: concurrent changes of one conversation each see the one before (no lost update)', async () => {
      const s = await store()
      await Promise.all(
        Array.from({ length: 20 }, () =>
          s.updateHandoff('shop', 't1', (row) => {
            const base = row ?? freshRow('shop', 't1', 'u1', 1)
            return { ...base, streak: base.streak + 1 }
          }),
        ),
      )
      const { before, after } = await s.updateHandoff('shop', 't1', () => undefined)
      expect(before?.streak).toBe(20)
      expect(after).toEqual(before)
    })

    it('updateHandoffs: one batch applies its changes in order; overlapping batches in opposite orders all land', async () => {
      const s = await store()
      const bump = (thread: string) => ({
        bot: 'shop',
        thread,
        change: (row: HandoffRow | undefined) => {
          const base = row ?? freshRow('shop', thread, thread, 1)
          return { ...base, streak: base.streak + 1 }
        },
      })
      const results = await s.updateHandoffs([
        bump('a'),
        bump('b'),
        bump('a'),
        { ...bump('c'), change: () => undefined },
      ])
      expect(results.map((r) => [r.before?.streak, r.after?.streak])).toEqual([
        [undefined, 1],
        [undefined, 1],
        [1, 2],
        [undefined, undefined],
      ])
      const threads = Array.from({ length: 30 }, (_, i) => `t${i}`)
      await Promise.all(
        Array.from({ length: 6 }, (_, i) => s.updateHandoffs((i % 2 ? [...threads].reverse() : threads).map(bump))),
      )
      const after = await s.updateHandoffs(threads.map((thread) => ({ bot: 'shop', thread, change: () => undefined })))
      expect(after.map((r) => r.before?.streak)).toEqual(threads.map(() => 6))
      expect(await s.updateHandoffs([])).toEqual([])
    })

    it('handoffs: waiting oldest first, then assigned; filters by state, bot scope, thread, assignee', async () => {
      const s = await store()
      await s.updateHandoff('shop', 'late', () => waiting(freshRow('shop', 'late', 'u-late', 1), 300, 'b'))
      await s.updateHandoff('shop', 'early', () => waiting(freshRow('shop', 'early', 'u-early', 1), 100, 'a'))
      await s.updateHandoff('shop', 'mine', () => ({
        ...waiting(freshRow('shop', 'mine', 'u-mine', 1), 50, 'c'),
        state: 'assigned',
        assignee: 'ann',
      }))
      await s.updateHandoff('other', 'x', () => waiting(freshRow('other', 'x', 'u-x', 1), 10, 'd'))
      await s.updateHandoff('shop', 'idle', () => freshRow('shop', 'idle', 'u-idle', 1))
      await s.setPaused('shop', 'mine', true)
      const all = await s.handoffs({ bot: 'shop' })
      expect(all.map((e) => [e.thread, e.state])).toEqual([
        ['early', 'waiting'],
        ['late', 'waiting'],
        ['mine', 'assigned'],
      ])
      expect(all[0]).toEqual({
        bot: 'shop',
        thread: 'early',
        userId: 'u-early',
        state: 'waiting',
        reason: 'asked',
        since: 100,
        text: 'a',
        assignee: null,
        paused: false,
      })
      expect(all[2]?.paused).toBe(true)
      expect((await s.handoffs({ state: 'waiting' })).map((e) => e.thread)).toEqual(['x', 'early', 'late'])
      expect((await s.handoffs({ state: 'assigned', assignee: 'ann' })).map((e) => e.thread)).toEqual(['mine'])
      expect((await s.handoffs({ bots: ['other'] })).map((e) => e.thread)).toEqual(['x'])
      expect(await s.handoffs({ bots: [] })).toEqual([])
      expect((await s.handoffs({ bot: 'shop', thread: 'late' })).map((e) => e.thread)).toEqual(['late'])
    })

    it('takeIdlePaused: only paused conversations idle since before the cutoff, each taken once', async () => {
      const s = await store()
      await s.setPaused('shop', 'quiet', true)
      await s.setPaused('shop', 'busy', true)
      await s.setPaused('shop', 'unpaused', false)
      const paused = Date.now()
      await s.updateHandoff('shop', 'quiet', () => ({
        ...waiting(freshRow('shop', 'quiet', 'u-quiet', paused), paused, 'q'),
        state: 'assigned',
        assignee: 'ann',
      }))
      await s.updateHandoff('shop', 'busy', () => freshRow('shop', 'busy', 'u-busy', paused + 60_000))
      const cutoff = paused + 30_000
      const [first, second] = await Promise.all([
        s.takeIdlePaused({ bot: 'shop', idleBefore: cutoff, now: cutoff, limit: 10 }),
        s.takeIdlePaused({ bot: 'shop', idleBefore: cutoff, now: cutoff, limit: 10 }),
      ])
      expect([...(first ?? []), ...(second ?? [])]).toEqual([
        { bot: 'shop', thread: 'quiet', userId: 'u-quiet', assignee: 'ann' },
      ])
      expect(await s.paused('shop', 'quiet')).toBe(false)
      expect(await s.paused('shop', 'busy')).toBe(true)
      expect(await s.handoffs({ bot: 'shop' })).toEqual([])
      expect(await s.takeIdlePaused({ bot: 'shop', idleBefore: cutoff, now: cutoff, limit: 10 })).toEqual([])
    })

    it('notes: by conversation and by user, oldest first; erasure removes them and the queue entry', async () => {
      const s = await store()
      await addAt(s, 'shop', 'ada', 'hi', 1)
      await s.updateHandoff('shop', 'ada', () => waiting(freshRow('shop', 'ada', 'ada', 1), 1, 'hi'))
      const n1 = await s.addNote({ bot: 'shop', thread: 'ada', userId: 'ada', author: 'ann', text: 'first', ts: 5 })
      await s.addNote({ bot: 'shop', thread: 'ada', userId: 'ada', author: 'ben', text: 'second', ts: 6 })
      await s.addNote({ bot: 'shop', thread: 'bo', userId: 'bo', author: 'ann', text: 'other', ts: 7 })
      expect(n1).toEqual({
        id: expect.any(Number),
        bot: 'shop',
        thread: 'ada',
        userId: 'ada',
        author: 'ann',
        text: 'first',
        ts: 5,
      })
      expect((await s.notes('shop', 'ada')).map((n) => n.text)).toEqual(['first', 'second'])
      expect((await s.userNotes('shop', 'ada')).map((n) => n.author)).toEqual(['ann', 'ben'])
      await s.eraseUser('shop', 'ada')
      expect(await s.notes('shop', 'ada')).toEqual([])
      expect(await s.handoffs({ bot: 'shop' })).toEqual([])
      expect((await s.notes('shop', 'bo')).map((n) => n.text)).toEqual(['other'])
    })
  })
}
