/**
 * Extracts the TypeScript code blocks of the READMEs, for test/readme/readme-snippets.test.ts.
 *
 * The convention (for everyone writing a README here):
 * - A block opened with ```ts (or ```typescript) is RUNNABLE: pasted into a file of its own it
 *   compiles as written — every import included — under `tsc --strict` against the built
 *   packages. The test type-checks every such block.
 * - A block opened with ```ts fragment is a FRAGMENT (a few lines lifted out of a bot, an
 *   option's shape, a type signature): it is shown, never compiled. Use it only when a complete
 *   program would bury the point; the README around it should say where the code goes.
 * - ```sh, ```json, ```http … blocks are not TypeScript and are ignored.
 */
import { readFileSync } from 'node:fs'

export interface Snippet {
  /** README path relative to the repository root, e.g. `packages/slack/README.md`. */
  readme: string
  /** 1-based line of the README holding the block's first code line (after the ``` fence). */
  line: number
  code: string
}

const OPEN = /^```(\S*)\s*(.*)$/

/** Every runnable TypeScript block of one README (fragments and other languages left out). */
export function runnableSnippets(root: string, readme: string): Snippet[] {
  const lines = readFileSync(`${root}/${readme}`, 'utf8').split(/\r?\n/)
  const found: Snippet[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i] ?? '')
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l))
    if (end < 0) throw new Error(`${readme}:${i + 1}: code block is never closed`)
    const [, lang, info] = open
    if ((lang === 'ts' || lang === 'typescript') && !/\bfragment\b/.test(info ?? '')) {
      found.push({ readme, line: i + 2, code: lines.slice(i + 1, end).join('\n') })
    }
    i = end
  }
  return found
}
