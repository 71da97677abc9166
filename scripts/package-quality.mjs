// publint + arethetypeswrong for every published package (run after the build), four at a time.
// Every package is packed once, by one `npm pack` of them all, and both tools read that tarball
// (with `--pack` each tool packed it again: twenty npm runs were a third of this step's CPU).
// The tools run from node_modules/.bin, not through npx (which, inside a pnpm script, warns
// about every pnpm setting it finds in the environment).
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const dirs = readdirSync('packages')
  .map((d) => `./packages/${d}`)
  .filter((dir) => !JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')).private)
const out = mkdtempSync(join(tmpdir(), 'convotrack-packs-'))
let failed = 0
try {
  // `./` keeps npm from reading `packages/x` as a GitHub shorthand.
  const { stdout } = await run('npm', ['pack', ...dirs, '--pack-destination', out, '--json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  const packed = JSON.parse(stdout)
  if (packed.length !== dirs.length)
    throw new Error(`npm pack made ${packed.length} tarballs for ${dirs.length} packages`)
  const checks = []
  for (const { name, filename } of packed) {
    const tarball = join(out, filename)
    checks.push([name, 'node_modules/.bin/publint', ['run', '--strict', tarball]])
    checks.push([name, 'node_modules/.bin/attw', [tarball, '--format', 'table-flipped', '--profile', 'node16']])
  }
  let next = 0
  async function worker() {
    while (next < checks.length) {
      const [name, cmd, args] = checks[next++]
      try {
        await run(cmd, args, { encoding: 'utf8' })
        console.log(`ok   ${name}: ${basename(cmd)}`)
      } catch (error) {
        failed++
        console.log(`FAIL ${name}: ${basename(cmd)}\n${error.stdout ?? ''}${error.stderr ?? ''}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
} finally {
  rmSync(out, { recursive: true, force: true })
}
if (failed) {
  console.error(`${failed} package checks failed`)
  process.exit(1)
}
