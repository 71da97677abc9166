/**
 * Smoke test of the README's first command: `tsx scripts/demo.ts --once` starts the collector
 * and every example bot present, runs their scripted conversations, pauses and unpauses each
 * pausable bot through the collector, and exits 0 only when all of that worked.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

it('pnpm demo --once: every example bot tracks its conversation and obeys Pause / Unpause', {
  timeout: 180_000,
}, async () => {
  const child = spawn(join(root, 'node_modules/.bin/tsx'), ['scripts/demo.ts', '--once'], {
    cwd: root,
    env: { ...process.env, DEMO_PORT: '0', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    out += d
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  expect(out, out).toContain('All scripted conversations tracked.')
  expect(code, out).toBe(0)
  expect(out).toMatch(/Dashboard: http:\/\/127\.0\.0\.1:\d+\//)
  // At least the universal example exists in this repository; every started bot stored messages.
  expect(out).toMatch(/✓ universal\s+\d+ messages stored/)
  expect(out).not.toContain('✗')
})
