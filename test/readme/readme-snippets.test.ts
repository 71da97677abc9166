/**
 * README code compiles as written, pasted into a user's app. Every ```ts block of the root README
 * and of each package README is a complete program a reader can paste: this test extracts them
 * (convention in ./snippets.ts — mark a non-runnable piece ```ts fragment) and type-checks them
 * with the TypeScript compiler, `strict`, in a fresh app outside the workspace that has only what
 * a user installs: the packages packed as published (`pnpm pack`, so only their `files` — the
 * types in dist/, the Kik SDK's declaration — go in) and the frameworks the blocks import, at the
 * versions the workspace pins, installed by pnpm from its store (no workspace links, no test
 * typings). Renaming a public name, or a typing left out of a package, breaks this test, not the
 * reader. Needs `pnpm build` first (pnpm verify does it); runs in the `consumer` vitest project
 * for that reason.
 *
 * A failure names the README file and line: `packages/slack/README.md:57:5 TS2304 Cannot find
 * name 'app'`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { workspacePackages as packages, packWorkspace, pnpm, root } from '../support/packed'
import { runnableSnippets, type Snippet } from './snippets'

const readmes = ['README.md', ...packages.map((p) => `packages/${p}/README.md`)].filter((f) =>
  existsSync(join(root, f)),
)

let app: string

/** The package a bare import names: `@slack/bolt/dist/x` → `@slack/bolt`, `node:fs` → undefined. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/**
 * The version the workspace pins for a framework (an exact x.y.z in any workspace manifest's
 * dependencies or devDependencies): the one the packages are tested against.
 */
function pinnedVersions(): Map<string, string> {
  const manifests = [
    'package.json',
    ...packages.map((p) => `packages/${p}/package.json`),
    ...readdirSync(join(root, 'examples')).map((e) => `examples/${e}/package.json`),
  ].filter((f) => existsSync(join(root, f)))
  const pins = new Map<string, string>()
  for (const file of manifests) {
    const m = JSON.parse(readFileSync(join(root, file), 'utf8'))
    for (const [name, range] of Object.entries<string>({ ...m.dependencies, ...m.devDependencies })) {
      if (/^\d+\.\d+\.\d+$/.test(range)) pins.set(name, range)
    }
  }
  // @types/node: the one installed here (the root pins a range).
  pins.set('@types/node', JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8')).version)
  return pins
}

/** `@slack/bolt` → `@types/slack__bolt` (DefinitelyTyped's name for a package's types). */
const typesOf = (name: string) => `@types/${name.replace(/^@/, '').replace('/', '__')}`

/**
 * The user's app: package.json (`"type": "module"`) depending on the packed packages and on every
 * framework the README blocks import (with its @types package where the workspace has one), and
 * @types/node. The overrides stand in for the registry, where the packed versions of
 * @convotrack/* are not (the collector depends on core), and keep botbuilder's @azure packages at
 * the workspace's Node 20 versions (pnpm-workspace.yaml says why).
 */
function makeApp(snippets: Snippet[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'convotrack-readme-'))
  const tarballs = packWorkspace(join(dir, 'tarballs'))
  const convotrack = Object.fromEntries(Object.entries(tarballs).map(([p, tgz]) => [`@convotrack/${p}`, `file:${tgz}`]))
  const pins = pinnedVersions()
  const frameworks: Record<string, string> = { '@types/node': pins.get('@types/node') ?? '' }
  for (const s of snippets) {
    for (const [, spec] of s.code.matchAll(/\bfrom '([^']+)'|\bimport '([^']+)'/g)) {
      const name = spec && packageOf(spec)
      if (!name || name.startsWith('@convotrack/')) continue
      const version = pins.get(name)
      if (!version) throw new Error(`${s.readme}:${s.line}: imports ${name}, which no workspace package.json pins`)
      frameworks[name] = version
      const types = pins.get(typesOf(name))
      if (types) frameworks[typesOf(name)] = types
    }
  }
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'readme-app',
      private: true,
      type: 'module',
      dependencies: { ...convotrack, ...frameworks },
    }),
  )
  const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
  const azure = [...workspace.matchAll(/^ {2}('@azure\/[^']+'|'@typespec\/[^']+'): (\S+)$/gm)].map(([line]) => line)
  writeFileSync(
    join(dir, 'pnpm-workspace.yaml'),
    ['overrides:', ...azure, ...Object.entries(convotrack).map(([n, v]) => `  '${n}': ${v}`), ''].join('\n'),
  )
  // --prefer-offline: the frameworks come from pnpm's store (the workspace's install filled it);
  // --ignore-scripts: the collector's native SQLite build is not what this test is about.
  pnpm(['install', '--prefer-offline', '--ignore-scripts', '--reporter=silent'], dir)
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
    const file = join(app, `snippet-${i}.ts`)
    // `export {}` keeps a block without imports a module of its own (it adds no line above the code).
    writeFileSync(file, `${s.code}\nexport {}\n`)
    files.set(file, s)
  })
  const program = ts.createProgram([...files.keys()], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [join(app, 'node_modules/@types')],
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

let snippets: Snippet[] = []

beforeAll(() => {
  snippets = readmes.flatMap((readme) => runnableSnippets(root, readme))
  app = makeApp(snippets)
  // One program for every README's blocks (one compile, a few seconds), then one test per README.
  failures = check(snippets)
})
afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true })
})

describe('README TypeScript blocks compile as written (tsc --strict, in an app with the packed packages)', () => {
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

  it('the app has only what a user installs: the packed packages (no workspace link), no Kik typing of its own', () => {
    for (const p of packages) {
      const installed = realpathSync(join(app, 'node_modules/@convotrack', p))
      expect(installed.startsWith(realpathSync(app)), `${p} installed from its tarball: ${installed}`).toBe(true)
      expect(readFileSync(join(installed, 'package.json'), 'utf8')).not.toContain('workspace:')
    }
    const sdk = realpathSync(join(app, 'node_modules/@kikinteractive/kik'))
    expect(JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8')).types).toBeUndefined()
    expect(existsSync(join(sdk, 'index.d.ts'))).toBe(false)
    expect(existsSync(join(app, 'node_modules/@types/kikinteractive__kik'))).toBe(false)
  })

  it('the Kik SDK’s types come with @convotrack/kik: without it, importing the SDK is TS7016 under strict', () => {
    const at = { readme: 'README.md', line: 1 }
    const sdkOnly = "import Bot from '@kikinteractive/kik'\nnew Bot({ username: 'mybot', apiKey: 'k' })"
    expect(check([{ ...at, code: sdkOnly }]).map((f) => f.message)).toEqual([
      expect.stringMatching(/^TS7016 Could not find a declaration file for module '@kikinteractive\/kik'/),
    ])
    const withAdapter = `import { kikTracking } from '@convotrack/kik'\n${sdkOnly}\nconsole.log(kikTracking)`
    expect(check([{ ...at, code: withAdapter }])).toEqual([])
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
