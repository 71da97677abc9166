// Every property-based test runs on the shared seed (test/support/fuzz-seed.ts): an `fc.assert`
// without `seeded(…)` draws new inputs each run, so its failure would show once, under load, as a
// FLAKY line nobody can replay. This scans the test sources for such calls.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(path)
    else if (/\.tsx?$/.test(entry.name)) yield path
  }
}

/** The text of the call whose `(` is at `open`, up to its matching `)`. */
function callAt(text: string, open: number): string {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1)
  }
  return text.slice(open)
}

it('every fc.assert takes its parameters from seeded() (FUZZ_SEED)', () => {
  const unseeded: string[] = []
  let calls = 0
  for (const dir of ['packages', 'test', 'examples', 'bench'])
    for (const file of sources(join(ROOT, dir))) {
      const text = readFileSync(file, 'utf8')
      for (const m of text.matchAll(/\bfc\.assert\(/g)) {
        calls++
        if (!callAt(text, (m.index ?? 0) + m[0].length - 1).includes('seeded('))
          unseeded.push(`${relative(ROOT, file)}:${text.slice(0, m.index).split('\n').length}`)
      }
    }
  expect(unseeded).toEqual([])
  // The scan found the suites (a moved folder would make it pass on nothing).
  expect(calls).toBeGreaterThan(15)
})
