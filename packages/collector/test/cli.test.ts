import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseCommandLine } from '@convotrack/collector'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'convotrack-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('parseCommandLine', () => {
  it('reads flags, the config file and env: secrets', () => {
    const config = join(dir, 'bots.json')
    writeFileSync(
      config,
      JSON.stringify({
        bots: [
          {
            name: 'shop',
            apiKey: 'env:SHOP_KEY',
            pauseWebhookUrl: 'http://127.0.0.1:3000/pause',
            webhookSecret: 'env:SHOP_SECRET',
          },
        ],
        messengerPages: [{ pageId: '1', appSecret: 'env:FB_SECRET', verifyToken: 'tok' }],
      }),
    )
    const env = { SHOP_KEY: 'k1', SHOP_SECRET: 'whsec_abc', FB_SECRET: 'fb' }
    const cmd = parseCommandLine(
      ['--port', '0', '--host', '127.0.0.1', '--config', config, '--bot', 'name=b2,apiKey=k2', '--no-demo-bot'],
      env,
    )
    expect(cmd).toEqual({
      help: false,
      options: {
        port: 0,
        host: '127.0.0.1',
        db: './convotrack.db',
        demoBot: false,
        bots: [
          { name: 'shop', apiKey: 'k1', pauseWebhookUrl: 'http://127.0.0.1:3000/pause', webhookSecret: 'whsec_abc' },
          { name: 'b2', apiKey: 'k2' },
        ],
        messengerPages: [{ pageId: '1', appSecret: 'fb', verifyToken: 'tok' }],
      },
    })
  })

  it('reads the OpenTelemetry options of the config file (traceUrl, llmPrices, maxOtlpBytes)', () => {
    const config = join(dir, 'otel.json')
    const otel = {
      traceUrl: 'http://localhost:16686/trace/{traceId}',
      llmPrices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } },
      maxOtlpBytes: 1_000_000,
    }
    writeFileSync(config, JSON.stringify(otel))
    const cmd = parseCommandLine(['--config', config], {})
    expect('options' in cmd && cmd.options).toMatchObject(otel)
  })

  it.each([
    [['--port', 'abc'], /--port/],
    [['--bot', 'name=x'], /apiKey/],
    [['--bot', 'nonsense'], /key=value/],
    [['--messenger-page', 'pageId=1,verifyToken=t'], /appSecret/],
    [['--bot', 'name=x,apiKey=env:MISSING'], /MISSING is not set/],
    [['--unknown'], /Unknown option/],
  ])('%j is refused', (argv, message) => {
    expect(() => parseCommandLine(argv, {})).toThrow(message)
  })

  it('--help', () => {
    expect(parseCommandLine(['-h'])).toEqual({ help: true })
  })
})

describe('the convotrack-collector bin', () => {
  it('starts, serves /track with the registered bot, and exits 0 on SIGTERM', async () => {
    // `node --import tsx`, one process, as a user's `node dist/cli.js`: the tsx bin is a parent that
    // relays a signal to its child and SIGKILLs it unless the child confirms within 30 ms — exit
    // 143 on a loaded machine (it was FLAKY once on Node 22 in CI).
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'packages/collector/src/cli.ts',
        '--port',
        '0',
        '--db',
        ':memory:',
        '--bot',
        'name=cli-bot,apiKey=cli-key',
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    child.stderr.on('data', (d) => {
      out += d
    })
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
        if (m && out.includes('  bots')) resolve(m[1]!)
      })
      child.once('exit', () => reject(new Error(`exited early:\n${out}`)))
    })
    expect(out).toContain('cli-bot')
    expect(out).not.toContain('cli-key')
    const res = await fetch(`${url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=cli-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hi', userId: 'u' }),
    })
    expect(res.status).toBe(201)
    const demo = await fetch(`${url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=demo-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hi', userId: 'u' }),
    })
    expect(demo.status).toBe(201)
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c))
      child.kill('SIGTERM')
    })
    expect(code).toBe(0)
  })

  it('a bad flag exits 2 with the usage', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/collector/src/cli.ts', '--port', 'x'], {
      cwd: root,
    })
    let err = ''
    child.stderr.on('data', (d) => {
      err += d
    })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(code).toBe(2)
    expect(err).toContain('--port must be')
    expect(err).toContain('Usage: convotrack-collector')
  })
})
