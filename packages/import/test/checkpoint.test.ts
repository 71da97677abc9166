import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Checkpoint } from '@convotrack/import'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { seeded } from '../../../test/support/fuzz-seed'

const dir = mkdtempSync(join(tmpdir(), 'convotrack-checkpoint-'))

describe('Checkpoint', () => {
  it('keeps acknowledged positions as merged ranges', () => {
    const cp = Checkpoint.load(join(dir, 'none.json'))
    for (const p of [1, 2, 3, 7, 5, 6, 10]) cp.add(p)
    expect(cp.done).toEqual([
      [1, 3],
      [5, 7],
      [10, 10],
    ])
    cp.add(4)
    cp.add(4)
    expect(cp.done).toEqual([
      [1, 7],
      [10, 10],
    ])
    expect(cp.size).toBe(8)
    expect([0, 1, 7, 8, 9, 10, 11].map((p) => cp.has(p))).toEqual([false, true, true, false, false, true, false])
  })

  it('agrees with a plain set for any order of additions', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 300 }), (positions) => {
        const cp = Checkpoint.load(join(dir, 'prop.json'))
        for (const p of positions) cp.add(p)
        const set = new Set(positions)
        for (let p = 0; p <= 201; p++) if (cp.has(p) !== set.has(p)) return false
        const ranges = cp.done
        return ranges.every((r, i) => i === 0 || (ranges[i - 1]?.[1] ?? 0) + 1 < r[0]) && cp.size === set.size
      }),
      seeded(),
    )
  })

  it('saves atomically and loads back; a checkpoint of another source is refused', () => {
    const path = join(dir, 'cp.json')
    const cp = Checkpoint.load(path, '/data/a.jsonl')
    cp.add(1)
    cp.add(2)
    cp.add(9)
    expect(cp.dirty).toBe(true)
    cp.save()
    expect(cp.dirty).toBe(false)
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({
      version: 1,
      source: '/data/a.jsonl',
      done: [
        [1, 2],
        [9, 9],
      ],
    })
    const again = Checkpoint.load(path, '/data/a.jsonl')
    expect(again.done).toEqual([
      [1, 2],
      [9, 9],
    ])
    expect(() => Checkpoint.load(path, '/data/b.jsonl')).toThrow(/belongs to \/data\/a.jsonl/)
  })

  it('refuses a file that is not a checkpoint instead of starting over silently', () => {
    const path = join(dir, 'garbage.json')
    writeFileSync(path, '{"hello":1}')
    expect(() => Checkpoint.load(path)).toThrow(/not readable/)
    expect(existsSync(path)).toBe(true)
  })
})
