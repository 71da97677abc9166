/**
 * README code compiles as written. Every ```ts block of the root README and of each package
 * README is a complete program a reader can paste: this test extracts them (convention in
 * ./snippets.ts — mark a non-runnable piece ```ts fragment) and type-checks them with the
 * TypeScript compiler, `strict`, as a consumer project would: `@convotrack/*` resolve to the
 * BUILT packages (their package.json `exports` → dist/*.d.ts), so renaming a public name breaks
 * this test, not the reader. Needs `pnpm build` first (pnpm verify does it); runs in the
 * `consumer` vitest project for that reason.
 *
 * A failure names the README file and line: `packages/slack/README.md:57:5 TS2304 Cannot find
 * name 'app'`.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runnableSnippets, type Snippet } from './snippets'

const root = fileURLToPath(new URL('../..', import.meta.url))
const packages = readdirSync(join(root, 'packages')).filter((d) =>
  existsSync(join(root, 'packages', d, 'package.json')),
)
const readmes = ['README.md', ...packages.map((p) => `packages/${p}/README.md`)].filter((f) =>
  existsSync(join(root, f)),
)

/** The packages' kik SDK typing (the SDK ships none; a TypeScript reader needs the same). */
const KIK_TYPES = join(root, 'packages/kik/test/kik-sdk.d.ts')

let project: string

/**
 * A throwaway consumer project: package.json `"type": "module"`, and a node_modules whose
 * `@convotrack/*` link to packages/* (resolved through their `exports`, i.e. dist/) and whose
 * third-party modules link to the ones the packages and examples depend on.
 */
function makeProject(): string {
  const missing = packages.filter((p) => !existsSync(join(root, 'packages', p, 'dist')))
  if (missing.length > 0) {
    throw new Error(
      `packages not built (${missing.join(', ')}): run \`pnpm build\` first — this test checks the built types`,
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-readme-'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-snippets', private: true, type: 'module' }))
  const link = (name: string, target: string) => {
    const at = join(dir, 'node_modules', name)
    if (existsSync(at) || !existsSync(target)) return
    mkdirSync(dirname(at), { recursive: true })
    symlinkSync(target, at, 'dir')
  }
  for (const p of packages) link(`@convotrack/${p}`, join(root, 'packages', p))
  const owners = [
    ...packages.map((p) => join(root, 'packages', p)),
    ...readdirSync(join(root, 'examples')).map((e) => join(root, 'examples', e)),
    root,
  ].filter((d) => existsSync(join(d, 'package.json')))
  for (const owner of owners) {
    const pkg = JSON.parse(readFileSync(join(owner, 'package.json'), 'utf8'))
    const deps = { ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies }
    for (const name of Object.keys(deps)) {
      if (!name.startsWith('@convotrack/')) link(name, join(owner, 'node_modules', name))
    }
  }
  return dir
}

interface Failure {
  where: string
  message: string
}

/** Type-checks the snippets as one program (one file each); returns the errors at README lines. */
function check(snippets: Snippet[]): Failure[] {
  const files = new Map<string, Snippet>()
  snippets.forEach((s, i) => {
    const file = join(project, `snippet-${i}.ts`)
    // `export {}` keeps a block without imports a module of its own (it adds no line above the code).
    writeFileSync(file, `${s.code}\nexport {}\n`)
    files.set(file, s)
  })
  const program = ts.createProgram([...files.keys(), KIK_TYPES], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [join(project, 'node_modules/@types')],
    esModuleInterop: true,
    skipLibCheck: true,
  })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    const snippet = d.file && files.get(d.file.fileName)
    if (!d.file || !snippet || d.start === undefined) return { where: d.file?.fileName ?? '(project)', message }
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
    return { where: `${snippet.readme}:${snippet.line + line}:${character + 1}`, message: `TS${d.code} ${message}` }
  })
}

let failures: Failure[] = []

beforeAll(() => {
  project = makeProject()
  // One program for every README's blocks (one compile, a few seconds), then one test per README.
  failures = check(readmes.flatMap((readme) => runnableSnippets(root, readme)))
})
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true })
})

describe('README TypeScript blocks compile as written (tsc --strict, built packages)', () => {
  it.each(readmes)('%s', (readme) => {
    const report = failures
      // Errors outside any README (the project set-up itself) fail every README's test.
      .filter((f) => f.where.startsWith(`${readme}:`) || !/\.md:\d+/.test(f.where))
      .map((f) => `${f.where} ${f.message}`)
      .join('\n')
    expect(report, '(a block not meant to compile as a whole file: open it with ```ts fragment)').toBe('')
  })

  it('the root README has a pasteable block per platform', () => {
    const blocks = runnableSnippets(root, 'README.md')
    for (const pkg of ['slack', 'alexa', 'messenger', 'kik', 'express']) {
      expect(
        blocks.some((b) => b.code.includes(`from '@convotrack/${pkg}'`)),
        `README.md imports @convotrack/${pkg}`,
      ).toBe(true)
    }
  })

  it('a broken snippet fails, pointing at its README line (the check is not vacuous)', () => {
    const good = runnableSnippets(root, 'README.md').find((b) => b.code.includes("from '@convotrack/slack'"))
    expect(good).toBeDefined()
    if (!good) return
    // Rename the imported public name, as a breaking rename in the package would.
    const broken = { ...good, code: good.code.replace(/\bslackTracking\b/, 'slackTrackingRenamed') }
    const failures = check([broken])
    const importLine = good.line + good.code.split('\n').findIndex((l) => l.includes('slackTracking'))
    expect(failures.map((f) => f.where)).toContain(`README.md:${importLine}:10`)
    expect(failures.map((f) => f.message).join('\n')).toMatch(/TS2724|TS2305/)
  })
})
