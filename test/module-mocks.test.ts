/**
 * The rule that lets test files share a worker's module cache (vitest.config.ts, `isolate: false`):
 * no test file mocks a module except those listed in `mockModules` (the isolated `mocks` project)
 * and the compat projects' (isolated too). A `vi.mock` anywhere else would leak into the files the
 * same worker runs after it, and fail them only in some orders.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { mockModules } from '../vitest.config'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Folders whose projects run each file in a fresh module cache. */
const isolated = ['test/dashbot-compat/', 'test/openllmetry-compat/', 'test/consumer/']

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* testFiles(path)
    // Every TypeScript file of a test folder: the suites and the helpers they import alike.
    else if (entry.name.endsWith('.ts') && /\/test\//.test(path)) yield path
  }
}

describe('module mocks', () => {
  it('only the files in mockModules (and the isolated compat projects) call vi.mock', () => {
    const mocking: string[] = []
    for (const top of ['packages', 'examples', 'test'])
      for (const file of testFiles(join(root, top))) {
        const rel = relative(root, file)
        if (isolated.some((prefix) => rel.startsWith(prefix))) continue
        if (/\bvi\.(mock|doMock|hoisted)\(/.test(readFileSync(file, 'utf8'))) mocking.push(rel)
      }
    expect(mocking.sort()).toEqual([...mockModules].sort())
  })
})
