/**
 * better-sqlite3 12 on Node ≥ 24.19 aborts the process when V8 collects one of its statements in a
 * garbage collection V8 starts itself (test/support/kept-sqlite.ts says more): the store keeps
 * every statement it prepares, and so must its migrations and every test that opens a database.
 * A statement prepared and dropped killed four of the collector's test workers on the Node 24
 * line in one CI run (a migration's two look-ups of sqlite_master). This guard reads the sources.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

describe('better-sqlite3 objects are kept reachable', () => {
  it('every statement the collector prepares goes through keep/kept', () => {
    const loose: string[] = []
    for (const file of files(join(root, 'src'))) {
      const text = readFileSync(file, 'utf8')
      // A database's prepare (`db.prepare(`, or `db` then `.prepare(` on the next line).
      for (const m of text.matchAll(/(?:\bdb\s*|\n\s*)\.prepare\(/g)) {
        const before = text.slice(Math.max(0, m.index - 40), m.index)
        const line = text.slice(0, m.index).split('\n').length
        const comment = /^\s*\*/.test(text.slice(text.lastIndexOf('\n', m.index) + 1, m.index))
        if (!comment && !/\bkeep\(|\bkept\(/.test(before)) loose.push(`${relative(root, file)}:${line}`)
      }
      for (const m of text.matchAll(/\.pragma\(/g))
        loose.push(
          `${relative(root, file)}:${text.slice(0, m.index).split('\n').length} (pragma() prepares a statement nobody keeps)`,
        )
    }
    expect(loose).toEqual([])
  })

  it('tests open their own SQLite through openKeptSqlite (volume suites, on the system Node only, excepted)', () => {
    const direct = files(join(root, 'test'))
      .filter((f) => !f.endsWith('.volume.test.ts') && !f.endsWith('kept-sqlite.ts'))
      .filter((f) => /new Database\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f))
    expect(direct).toEqual([])
  })
})
