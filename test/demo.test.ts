/**
 * Smoke test of the README's first command: `tsx scripts/demo.ts --once` starts the collector
 * and every example bot present, runs their scripted conversations, pauses and unpauses each
 * pausable bot through the collector, and exits 0 only when all of that worked.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

it('pnpm demo --once: every example bot tracks its conversation and obeys Pause / Unpause', {
  timeout: 180_000,
}, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--once'], {
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

it('pnpm demo (live): the URLs stay on screen, each bot hears what it understands and some it does not, Ctrl-C exits 0', {
  timeout: 180_000,
}, async () => {
  // As `pnpm demo` runs it (exec node --import tsx, no shell in between), piped: a line per turn.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
    cwd: root,
    env: { ...process.env, DEMO_PORT: '0', DEMO_TICK_MS: '150', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    out += d
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const turns = () => out.split('\n').filter((l) => /^\d\d:\d\d:\d\d \[\w+\] /.test(l))
  // More than a round of every live bot's script.
  await expect.poll(() => turns().length, { timeout: 120_000, interval: 200 }).toBeGreaterThanOrEqual(60)
  // Ctrl-C in a terminal reaches the whole process group; pnpm passes it on once more.
  child.kill('SIGINT')
  child.kill('SIGINT')
  const { code, signal } = await exited
  expect({ code, signal }, out).toEqual({ code: 0, signal: null })
  expect(out).toContain('Stopping the demo…')

  const dashboard = out.match(/Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/)?.[1]
  expect(dashboard, out).toBeDefined()
  expect(out).toMatch(new RegExp(`^  universal\\s+${dashboard}#/conversations/universal/demo_universal$`, 'm'))
  expect(out).toContain('Ctrl-C stops the demo.')

  // Each bot gets mostly what it understands: a minority of its turns are "didn't get that".
  const byBot = new Map<string, { turns: number; notUnderstood: number }>()
  for (const line of turns()) {
    const bot = /\[(\w+)\]/.exec(line)?.[1] as string
    const s = byBot.get(bot) ?? { turns: 0, notUnderstood: 0 }
    s.turns++
    if (/didn't get that|no fact about|An agent will look/.test(line)) s.notUnderstood++
    byBot.set(bot, s)
  }
  expect(byBot.size).toBeGreaterThanOrEqual(2)
  for (const [bot, s] of byBot) {
    expect(s.notUnderstood, `${bot}: ${JSON.stringify(s)}`).toBeGreaterThan(0)
    expect(s.notUnderstood / s.turns, `${bot}: ${JSON.stringify(s)}`).toBeLessThanOrEqual(0.4)
  }
})
