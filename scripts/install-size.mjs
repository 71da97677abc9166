// Install size of each package with its production dependencies (peers excluded: a bot already
// has its framework). Each package is packed as published (pnpm pack) and installed alone with
// npm in a fresh folder, together with the tarballs of the @convotrack packages it depends on
// (dependencies or peers: core is a peer of the adapters).
// Run after `pnpm build`: node scripts/install-size.mjs  (prints a Markdown table)
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = process.cwd()
const work = mkdtempSync(join(tmpdir(), 'convotrack-size-'))
const tarballs = join(work, 'tarballs')
const pnpm = process.env.npm_execpath?.includes('pnpm')
  ? [process.execPath, process.env.npm_execpath]
  : ['npx', '-y', 'pnpm@10.34.9']
const names = readdirSync('packages')
for (const p of names)
  execFileSync(pnpm[0], [...pnpm.slice(1), 'pack', '--pack-destination', tarballs], {
    cwd: join(root, 'packages', p),
    stdio: 'pipe',
  })
const tgz = Object.fromEntries(
  readdirSync(tarballs).map((f) => [
    f.replace(/^convotrack-/, '').replace(/-\d+\.\d+\.\d+\.tgz$/, ''),
    join(tarballs, f),
  ]),
)

function du(dir) {
  let bytes = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isSymbolicLink()) continue
    bytes += entry.isDirectory() ? du(path) : statSync(path).size
  }
  return bytes
}

/** Folders with a package.json under node_modules (scoped and nested included). */
function countPackages(dir) {
  let n = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue
    const path = join(dir, entry.name)
    if (entry.name.startsWith('@')) n += countPackages(path)
    else {
      n++
      try {
        n += countPackages(join(path, 'node_modules'))
      } catch {}
    }
  }
  return n
}

const rows = []
for (const p of names) {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', p, 'package.json'), 'utf8'))
  // Adapters take core as a peer: installed alongside, as a bot installs it.
  const internal = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
    .filter((d) => d.startsWith('@convotrack/'))
    .map((d) => d.slice(12))
  const dir = mkdtempSync(join(work, `${p}-`))
  const deps = Object.fromEntries([p, ...internal].map((n) => [`@convotrack/${n}`, `file:${tgz[n]}`]))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'size', private: true, dependencies: deps }))
  execFileSync(
    'npm',
    ['install', '--omit=dev', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: dir, stdio: 'pipe' },
  )
  const modules = join(dir, 'node_modules')
  const count = countPackages(modules)
  rows.push({
    package: manifest.name,
    packed_kb: +(statSync(tgz[p]).size / 1024).toFixed(1),
    install_mb: +(du(modules) / 2 ** 20).toFixed(2),
    packages: count,
  })
}
rmSync(work, { recursive: true, force: true })
console.log('| package | tarball | installed with production deps (no peers) | packages installed |')
console.log('|---|---|---|---|')
for (const r of rows) console.log(`| \`${r.package}\` | ${r.packed_kb} KB | ${r.install_mb} MB | ${r.packages} |`)
