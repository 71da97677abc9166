/**
 * The contract every PauseStore must pass (spec: States and transitions). Run it for each store:
 * `pauseStoreContract('MemoryPauseStore', () => ({ store: new MemoryPauseStore() }))`.
 */
import type { PauseStore } from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'

export interface ContractSubject {
  store: PauseStore
  /** Lets `ms` of the store's time pass (a driven clock: the contract never sleeps). */
  advance(ms: number): Promise<void> | void
  cleanup?: () => Promise<void> | void
}

export type MakeStore = (options: { ttlMs?: number }) => Promise<ContractSubject> | ContractSubject

export function pauseStoreContract(name: string, make: MakeStore): void {
  describe(`PauseStore contract: ${name}`, () => {
    const cleanups: Array<() => Promise<void> | void> = []
    let advance: (ms: number) => Promise<void> | void = () => {}
    const open = async (options: { ttlMs?: number } = {}) => {
      const subject = await make(options)
      if (subject.cleanup) cleanups.push(subject.cleanup)
      advance = subject.advance
      return subject.store
    }
    afterEach(async () => {
      for (const c of cleanups.splice(0)) await c()
    })

    it('a key never paused is not paused', async () => {
      const store = await open()
      expect(await store.isPaused('never-seen')).toBe(false)
    })

    it('pause then unpause (the spec transitions running → paused → running)', async () => {
      const store = await open()
      await store.setPaused('u1', true)
      expect(await store.isPaused('u1')).toBe(true)
      await store.setPaused('u1', false)
      expect(await store.isPaused('u1')).toBe(false)
    })

    it('answers strict booleans', async () => {
      const store = await open()
      await store.setPaused('b', true)
      expect(await store.isPaused('b')).toStrictEqual(true)
      expect(await store.isPaused('other')).toStrictEqual(false)
    })

    it('keys are independent', async () => {
      const store = await open()
      await store.setPaused('a', true)
      expect(await store.isPaused('a')).toBe(true)
      expect(await store.isPaused('b')).toBe(false)
      expect(await store.isPaused('A')).toBe(false)
      expect(await store.isPaused('a ')).toBe(false)
    })

    it('is idempotent: pausing twice then unpausing once unpauses; unpausing an unknown key is fine', async () => {
      const store = await open()
      await store.setPaused('k', true)
      await store.setPaused('k', true)
      await store.setPaused('k', false)
      expect(await store.isPaused('k')).toBe(false)
      await store.setPaused('never', false)
      expect(await store.isPaused('never')).toBe(false)
    })

    it('takes any string key: separators, wildcards, unicode, long ids', async () => {
      const store = await open()
      const keys = ['C0123:thread', 'a*b?[c]', 'ünï cødé 🤖', 'x'.repeat(2000), '{slot}key', 'with\nnewline', '-']
      for (const k of keys) await store.setPaused(k, true)
      for (const k of keys) expect(await store.isPaused(k)).toBe(true)
      expect(await store.isPaused('a')).toBe(false)
      expect(await store.isPaused('C0123')).toBe(false)
      for (const k of keys) await store.setPaused(k, false)
      for (const k of keys) expect(await store.isPaused(k)).toBe(false)
    })

    it('many concurrent changes on different keys all land', async () => {
      const store = await open()
      const keys = Array.from({ length: 200 }, (_, i) => `user-${i}`)
      await Promise.all(keys.map((k, i) => store.setPaused(k, i % 2 === 0)))
      const states = await Promise.all(keys.map((k) => store.isPaused(k)))
      expect(states).toEqual(keys.map((_, i) => i % 2 === 0))
    })

    it('the last of sequential changes wins', async () => {
      const store = await open()
      for (let i = 0; i < 20; i++) await store.setPaused('flip', i % 2 === 0)
      expect(await store.isPaused('flip')).toBe(false) // i = 19 unpaused
    })

    it('with ttlMs a pause ends by itself; re-pausing starts a new period', async () => {
      const store = await open({ ttlMs: 60_000 })
      await store.setPaused('t', true)
      expect(await store.isPaused('t')).toBe(true)
      await advance(40_000)
      await store.setPaused('t', true) // refresh
      await advance(40_000)
      expect(await store.isPaused('t')).toBe(true) // 80 s after the first pause, 40 s after the refresh
      await advance(30_000)
      expect(await store.isPaused('t')).toBe(false)
    })

    it('without ttlMs a pause lasts', async () => {
      const store = await open()
      await store.setPaused('forever', true)
      await advance(24 * 3_600_000)
      expect(await store.isPaused('forever')).toBe(true)
    })
  })
}
