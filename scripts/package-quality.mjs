// publint + arethetypeswrong for every published package (run after the build).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

const dirs = readdirSync('packages').map((d) => `packages/${d}`)
let failed = 0
for (const dir of dirs) {
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'))
  if (pkg.private) continue
  for (const [cmd, args] of [
    ['npx', ['publint', '--strict', '--pack', 'npm', dir]],
    ['npx', ['attw', '--pack', dir, '--format', 'table-flipped', '--profile', 'node16']],
  ]) {
    try {
      execFileSync(cmd, args, { stdio: 'pipe', encoding: 'utf8' })
      console.log(`ok   ${pkg.name}: ${args[0]}`)
    } catch (error) {
      failed++
      console.log(`FAIL ${pkg.name}: ${args[0]}\n${error.stdout ?? ''}${error.stderr ?? ''}`)
    }
  }
}
if (failed) {
  console.error(`${failed} package checks failed`)
  process.exit(1)
}
