/**
 * The CLI of a shared collector: `auth` in the config file with env: secrets, the new flags,
 * the hash-password verb and the refusal to listen on the network without sign-in.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseCommandLine } from '@convotrack/collector'
import { describe, expect, it } from 'vitest'
import { verifyPassword } from '../src/access/password'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'ct-cli-team-'))

function run(args: string[], stdin?: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/collector/src/cli.ts', ...args], { cwd: root })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    err += d
  })
  child.stdin.end(stdin ?? '')
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })))
}

describe('config file and flags', () => {
  it('reads auth with env: secrets, retention, allowed hosts and --no-auth', () => {
    const config = join(dir, 'team.json')
    writeFileSync(
      config,
      JSON.stringify({
        bots: [{ name: 'shop', apiKey: 'env:SHOP_KEY', retainDays: 7 }],
        auth: {
          users: [{ name: 'ada', passwordHash: 'env:ADA_HASH', role: 'admin', bots: ['*'] }],
          tokens: [{ name: 'grafana', token: 'env:GRAFANA_TOKEN', role: 'viewer', bots: ['shop'] }],
          metricsToken: 'env:METRICS_TOKEN',
          trustProxyHeader: 'X-Forwarded-Email',
        },
        retainDays: 90,
        allowedHosts: ['convotrack.example.com'],
      }),
    )
    const env = {
      SHOP_KEY: 'k',
      ADA_HASH: 'scrypt$1$2$3$a$b',
      GRAFANA_TOKEN: 'g'.repeat(20),
      METRICS_TOKEN: 'm'.repeat(20),
    }
    const cmd = parseCommandLine(
      ['--config', config, '--no-auth', '--allowed-host', 'ct.internal', '--retain-days', '30', '--log-level', 'warn'],
      env,
    )
    expect(cmd).toEqual({
      help: false,
      options: {
        db: './convotrack.db',
        bots: [{ name: 'shop', apiKey: 'k', retainDays: 7 }],
        auth: {
          users: [{ name: 'ada', passwordHash: 'scrypt$1$2$3$a$b', role: 'admin', bots: ['*'] }],
          tokens: [{ name: 'grafana', token: 'g'.repeat(20), role: 'viewer', bots: ['shop'] }],
          metricsToken: 'm'.repeat(20),
          trustProxyHeader: 'X-Forwarded-Email',
        },
        noAuth: true,
        retainDays: 30,
        allowedHosts: ['convotrack.example.com', 'ct.internal'],
        log: 'warn',
      },
    })
    expect(() => parseCommandLine(['--config', config], {})).toThrow(/SHOP_KEY is not set/)
    expect(() => parseCommandLine(['--retain-days', '-1'])).toThrow(/--retain-days/)
  })
})

describe('the bin', () => {
  it('hash-password reads stdin and prints a scrypt hash that verifies', async () => {
    const { code, out } = await run(['hash-password'], 'open sesame 123\n')
    expect(code).toBe(0)
    const hash = out.trim()
    expect(hash).toMatch(/^scrypt\$/)
    expect(hash).not.toContain('open sesame')
    expect(await verifyPassword('open sesame 123', hash)).toBe(true)
    expect(await verifyPassword('open sesame 124', hash)).toBe(false)
  })

  it('--host 0.0.0.0 without auth exits 1 and says how to add a user', async () => {
    const { code, err } = await run(['--host', '0.0.0.0', '--port', '0', '--db', ':memory:'])
    expect(code).toBe(1)
    expect(err).toContain('hash-password')
    expect(err).toContain('--no-auth')
  })
})
