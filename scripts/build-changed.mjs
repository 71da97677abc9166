// The build `pnpm demo` runs first: only the packages whose build inputs changed since their last
// build here, and quietly — one line, the build's own output only when it fails.
//
// A package is up to date when the fingerprint of its build inputs (SHA-256 over src/**, its
// package.json and tsup.config.ts, the shared tsup.preset.ts, tsconfig.build.json and
// tsconfig.base.json, and pnpm-lock.yaml for the tools' versions) equals the one recorded after
// its last successful build by this script, and the files its package.json points at (main,
// module, types, exports) exist. Content, not mtimes: a checkout that
// touches files without changing them rebuilds nothing, and a build that failed half-way (tsup
// cleans dist/ first) is never recorded. Each package bundles only its own src/ (the other
// @convotrack packages stay imports), so a change in core rebuilds core, not its dependents.
// Fingerprints live in node_modules/.cache/convotrack-build/ (git-ignored; `pnpm install` keeps it).
//
//   node scripts/build-changed.mjs           build what changed (from the repository root)
//   node scripts/build-changed.mjs --dry     print what would be built, build nothing
// `pnpm build` (and so `pnpm verify`, CI) still builds everything, from clean.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(process.argv.find((a) => a.startsWith('--root='))?.slice('--root='.length) ?? '.')
const dry = process.argv.includes('--dry')
const SHARED = ['tsup.preset.ts', 'tsconfig.build.json', 'tsconfig.base.json', 'pnpm-lock.yaml']
const stamps = join(root, 'node_modules/.cache/convotrack-build')

/** Every file under dir, sorted (a stable order for the hash). */
function files(dir) {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
    .sort()
}

function fingerprint(dir) {
  const hash = createHash('sha256')
  const inputs = [
    ...files(join(dir, 'src')),
    join(dir, 'package.json'),
    join(dir, 'tsup.config.ts'),
    ...SHARED.map((f) => join(root, f)),
  ]
  for (const file of inputs) {
    if (!existsSync(file)) continue
    hash.update(`${relative(root, file)}\0`)
    hash.update(readFileSync(file))
    hash.update('\0')
  }
  return hash.digest('hex')
}

/** The built files the manifest points at (a dist/ a failed build left half-empty has holes). */
function entryFiles(dir, manifest) {
  const found = new Set()
  const walk = (v) => {
    if (typeof v === 'string') {
      if (v.includes('dist/')) found.add(v)
    } else if (v && typeof v === 'object') Object.values(v).forEach(walk)
  }
  walk([manifest.main, manifest.module, manifest.types, manifest.exports])
  return [...found].map((f) => join(dir, f))
}

const packages = readdirSync(join(root, 'packages'))
  .map((name) => ({ name, dir: join(root, 'packages', name) }))
  .filter((p) => existsSync(join(p.dir, 'package.json')))
  .map((p) => ({ ...p, manifest: JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) }))
  .filter((p) => p.manifest.scripts?.build)

const stale = []
for (const p of packages) {
  const print = fingerprint(p.dir)
  const stampFile = join(stamps, `${p.name}.sha256`)
  const recorded = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : ''
  const complete = entryFiles(p.dir, p.manifest).every((f) => existsSync(f) && statSync(f).size > 0)
  if (recorded !== print || !complete) stale.push({ ...p, print, stampFile })
}

if (stale.length === 0) {
  console.log('packages: up to date (nothing changed since their last build)')
  process.exit(0)
}
const names = stale.map((p) => p.manifest.name)
if (dry) {
  console.log(names.join('\n'))
  process.exit(0)
}

// pnpm itself: the one running this script (pnpm demo), else the pinned one through npx.
const pnpm = process.env.npm_execpath?.includes('pnpm')
  ? [process.execPath, process.env.npm_execpath]
  : ['npx', '-y', 'pnpm@10.34.9']
// --filter per package: pnpm builds them in dependency order (core before its adapters).
const args = [...pnpm.slice(1), ...names.flatMap((n) => ['--filter', n]), 'run', 'build']
const started = Date.now()
process.stdout.write(`building ${names.map((n) => n.replace('@convotrack/', '')).join(', ')} (changed)… `)
const child = spawn(pnpm[0], args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
const output = []
child.stdout.on('data', (d) => output.push(d))
child.stderr.on('data', (d) => output.push(d))
child.on('close', (code) => {
  if (code !== 0) {
    console.log('FAILED')
    process.stdout.write(Buffer.concat(output))
    console.error(`\nbuild failed (exit ${code}): fix the error above and run again`)
    process.exit(code || 1)
  }
  for (const p of stale) {
    mkdirSync(dirname(p.stampFile), { recursive: true })
    writeFileSync(p.stampFile, `${p.print}\n`)
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
})
