/**
 * The packages as they would be published, for the tests that install them as a user does
 * (test/consumer, test/readme): every packages/* packed with `pnpm pack` (workspace ranges become
 * real versions; only the manifest's `files` go in). Needs the packages built (`pnpm build`).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('../..', import.meta.url))

/** The folder names under packages/ (`core`, `slack`, …), each published as `@convotrack/<name>`. */
export const workspacePackages = readdirSync(join(root, 'packages')).filter((d) =>
  existsSync(join(root, 'packages', d, 'package.json')),
)

/** pnpm: the one running this test run (pnpm verify), else the pinned one through npx. */
export function pnpm(args: string[], cwd: string): string {
  const execpath = process.env.npm_execpath
  if (execpath?.includes('pnpm')) return execFileSync(process.execPath, [execpath, ...args], { cwd, encoding: 'utf8' })
  return execFileSync('npx', ['-y', 'pnpm@10.34.9', ...args], { cwd, encoding: 'utf8' })
}

/** Packs every package into `dest`; returns each package's tarball by folder name (`core` → …tgz). */
export function packWorkspace(dest: string): Record<string, string> {
  const missing = workspacePackages.filter((p) => !existsSync(join(root, 'packages', p, 'dist')))
  if (missing.length > 0) throw new Error(`packages not built (${missing.join(', ')}): run \`pnpm build\` first`)
  // One recursive pack (one pnpm start-up, not one per package).
  pnpm(['-r', '--filter', './packages/**', 'pack', '--pack-destination', dest], root)
  const tarballs = Object.fromEntries(
    readdirSync(dest)
      .filter((f) => f.endsWith('.tgz'))
      .map((f) => [f.replace(/^convotrack-/, '').replace(/-\d+\.\d+\.\d+\.tgz$/, ''), join(dest, f)]),
  )
  const unpacked = workspacePackages.filter((p) => !tarballs[p])
  if (unpacked.length > 0) throw new Error(`pnpm pack left out ${unpacked.join(', ')}`)
  return tarballs
}
