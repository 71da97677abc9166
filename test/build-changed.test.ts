/**
 * scripts/build-changed.mjs (the build `pnpm demo` runs first) on a throwaway two-package
 * workspace whose build scripts log each build: it builds what changed and nothing else, prints
 * one line, shows the build's output only when it fails, and rebuilds a package whose last build
 * failed.
 */
import { execFile } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../scripts/build-changed.mjs', import.meta.url))
let ws: string

/** A package whose build writes dist/index.js from src/ and logs its name; FAIL in src fails it. */
function addPackage(name: string): void {
  const dir = join(ws, 'packages', name)
  mkdirSync(join(dir, 'src'), { recursive: true })
  writeFileSync(join(dir, 'src/index.ts'), `export const name = '${name}'\n`)
  writeFileSync(
    join(dir, 'build.mjs'),
    `import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
rmSync('dist', { recursive: true, force: true })
appendFileSync('../../builds.log', '${name}\\n')
const src = readFileSync('src/index.ts', 'utf8')
console.log('tsup-like noise for ${name}')
if (src.includes('FAIL')) { console.error('error TS1005 in ${name}/src/index.ts'); process.exit(1) }
mkdirSync('dist')
writeFileSync('dist/index.js', src)
`,
  )
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: `@convotrack/${name}`,
      version: '0.0.0',
      main: './dist/index.js',
      scripts: { build: 'node build.mjs' },
    }),
  )
}

async function run(...args: string[]): Promise<{ code: number; out: string; built: string[] }> {
  const before = readFileSync(join(ws, 'builds.log'), 'utf8').split('\n').filter(Boolean).length
  const { code, out } = await new Promise<{ code: number; out: string }>((done) => {
    // npm_execpath cleared: the script runs the pinned pnpm through npx, as outside `pnpm demo`.
    execFile(
      process.execPath,
      [script, `--root=${ws}`, ...args],
      { cwd: ws, env: { ...process.env, npm_execpath: '' } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr }),
    )
  })
  const built = readFileSync(join(ws, 'builds.log'), 'utf8').split('\n').filter(Boolean).slice(before)
  return { code, out, built }
}

beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), 'convotrack-build-changed-'))
  writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'ws', private: true }))
  writeFileSync(join(ws, 'pnpm-workspace.yaml'), "packages:\n  - 'packages/*'\n")
  writeFileSync(join(ws, 'builds.log'), '')
  addPackage('a')
  addPackage('b')
})
afterAll(() => rmSync(ws, { recursive: true, force: true }))

describe('build-changed: only what changed, quietly', () => {
  it('a first run builds every package, in one line without the builds’ output', async () => {
    const { code, out, built } = await run()
    expect(code).toBe(0)
    expect(built.sort()).toEqual(['a', 'b'])
    expect(out).toMatch(/^building a, b \(changed\)… done in \d+\.\d s\n$/)
  })

  it('a second run builds nothing; touching a file without changing it neither', async () => {
    expect(await run()).toMatchObject({ code: 0, built: [] })
    const future = new Date(Date.now() + 60_000)
    utimesSync(join(ws, 'packages/a/src/index.ts'), future, future)
    const { code, out, built } = await run()
    expect({ code, built }).toEqual({ code: 0, built: [] })
    expect(out).toBe('packages: up to date (nothing changed since their last build)\n')
  })

  it('a changed source file rebuilds its package only', async () => {
    appendFileSync(join(ws, 'packages/b/src/index.ts'), 'export const more = 1\n')
    expect(await run('--dry')).toMatchObject({ code: 0, out: '@convotrack/b\n', built: [] })
    expect(await run()).toMatchObject({ code: 0, built: ['b'] })
    expect(readFileSync(join(ws, 'packages/b/dist/index.js'), 'utf8')).toContain('more')
  })

  it('a deleted dist/ is rebuilt', async () => {
    rmSync(join(ws, 'packages/a/dist'), { recursive: true })
    expect(await run()).toMatchObject({ code: 0, built: ['a'] })
  })

  it('a failing build prints its output and fails; it is built again next time, once fixed', async () => {
    const src = join(ws, 'packages/a/src/index.ts')
    const good = readFileSync(src, 'utf8')
    writeFileSync(src, `${good}FAIL\n`)
    const failed = await run()
    expect(failed.code).not.toBe(0)
    expect(failed.built).toEqual(['a'])
    expect(failed.out).toContain('error TS1005 in a/src/index.ts')
    expect(failed.out).toContain('build failed')
    writeFileSync(src, good) // back to the content of its last successful build: dist/ is gone, so it builds
    expect(await run()).toMatchObject({ code: 0, built: ['a'] })
    expect(await run()).toMatchObject({ code: 0, built: [] })
  })
})
