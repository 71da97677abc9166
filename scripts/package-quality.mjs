// publint + arethetypeswrong for every published package (run after the build), four at a time.
// The tools run from node_modules/.bin, not through npx (which, inside a pnpm script, warns
// about every pnpm setting it finds in the environment).
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const checks = []
for (const d of readdirSync('packages')) {
  const dir = `packages/${d}`
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'))
  if (pkg.private) continue
  checks.push([pkg.name, 'node_modules/.bin/publint', ['--strict', '--pack', 'npm', dir]])
  checks.push([pkg.name, 'node_modules/.bin/attw', ['--pack', dir, '--format', 'table-flipped', '--profile', 'node16']])
}
let failed = 0
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
if (failed) {
  console.error(`${failed} package checks failed`)
  process.exit(1)
}
