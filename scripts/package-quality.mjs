// publint + arethetypeswrong for every published package (run after the build).
// The tools run from node_modules/.bin, not through npx (which, inside a pnpm script, warns
// about every pnpm setting it finds in the environment).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename } from 'node:path'

const dirs = readdirSync('packages').map((d) => `packages/${d}`)
let failed = 0
for (const dir of dirs) {
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'))
  if (pkg.private) continue
  for (const [cmd, args] of [
    ['node_modules/.bin/publint', ['--strict', '--pack', 'npm', dir]],
    ['node_modules/.bin/attw', ['--pack', dir, '--format', 'table-flipped', '--profile', 'node16']],
  ]) {
    try {
      execFileSync(cmd, args, { stdio: 'pipe', encoding: 'utf8' })
      console.log(`ok   ${pkg.name}: ${basename(cmd)}`)
    } catch (error) {
      failed++
      console.log(`FAIL ${pkg.name}: ${basename(cmd)}\n${error.stdout ?? ''}${error.stderr ?? ''}`)
    }
  }
}
if (failed) {
  console.error(`${failed} package checks failed`)
  process.exit(1)
}
