/**
 * What happens to pending records when the process ends, tried the way a script, a cron job or a
 * CLI ends: each case runs in a child process against a real HTTP service on 127.0.0.1.
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

const core = JSON.stringify(fileURLToPath(new URL('../src/index.ts', import.meta.url)))
const root = fileURLToPath(new URL('../../..', import.meta.url))

/** A tracking service that answers 503 to the first attempt of each record, 200 to the next (`mode: 'flaky'`), or 503 always. */
let mode: 'flaky' | 'always503' = 'flaky'
const seen = new Set<string>()
const accepted: string[] = []
let service: http.Server
let serviceUrl: string
/** An address nothing listens on: the service is down. */
let downUrl: string

beforeAll(async () => {
  service = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      if (mode === 'always503' || !seen.has(body)) {
        seen.add(body)
        res.writeHead(503).end('busy')
        return
      }
      accepted.push(body)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve))
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  downUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`
  await new Promise((resolve) => closed.close(resolve))
})

afterAll(async () => {
  service.closeAllConnections()
  await new Promise((resolve) => service.close(resolve))
})

beforeEach(() => {
  mode = 'flaky'
  seen.clear()
  accepted.length = 0
})

interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
}

/** Runs `body` as an ES module with `createTracker` imported; `onReady` runs once it prints `ready`. */
function runScript(body: string, onReady?: (child: ReturnType<typeof spawn>) => void): Promise<Run> {
  const script = `import { createTracker } from ${core}\n${body}`
  const started = Date.now()
  // node itself (tsx as a loader, not as a wrapper process): signals and exit codes are the script's own.
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => {
    stdout += d
    if (onReady && stdout.includes('ready')) {
      const ready = onReady
      onReady = undefined
      ready(child)
    }
  })
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started })),
  )
}

const log20 = `for (let i = 0; i < 20; i++) t.universal.logIncoming({ text: 'message ' + i, userId: 'user' + i })`

describe('at a natural exit (the event loop empties)', () => {
  it('records that need a retry are all delivered before the process ends, and nothing is said', async () => {
    const run = await runScript(`
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)} })
      ${log20}
      console.log('logged')
    `)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('logged')
    expect(accepted).toHaveLength(20)
    expect(run.stderr).not.toContain('[convotrack]')
  })

  it('with the service down: the process ends after the bounded flush and says how many records were lost, of how many conversations, and why', async () => {
    const run = await runScript(`
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(downUrl)}, flushOnExit: 1000 })
      ${log20}
      t.universal.logOutgoing({ text: 'reply', userId: 'user0' })
    `)
    // It ends (a hung process would not end at all: the test's timeout is the bound, no wall clock).
    expect(run.code).toBe(0)
    const lines = run.stderr.split('\n').filter((l) => l.includes('undelivered'))
    expect(lines).toEqual([
      expect.stringContaining(
        'waiting up to 1000 ms for delivery (flushOnExit) with 21 records undelivered (of 20 conversations): the service is unreachable',
      ),
    ])
  })

  it('when the exit flush times out while the service keeps failing, the records still retrying are counted', async () => {
    mode = 'always503'
    const run = await runScript(`
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)}, flushOnExit: 500 })
      ${log20}
    `)
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/20 records undelivered \(of 20 conversations\): 20 still retrying/)
    expect(run.stderr.match(/undelivered/g)).toHaveLength(1) // said once
  })

  it('an idle tracker (and one with nothing left pending) installs nothing and adds no delay', async () => {
    const run = await runScript(`
      const base = { beforeExit: process.listenerCount('beforeExit'), exit: process.listenerCount('exit') }
      const idle = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)}, flushOnExit: 60000 })
      const done = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)}, flushOnExit: 60000 })
      done.universal.logIncoming({ text: 'a', userId: 'u' })
      await done.flush(5000)
      const now = { beforeExit: process.listenerCount('beforeExit'), exit: process.listenerCount('exit') }
      console.log(JSON.stringify({ base, now }))
    `)
    expect(run.code).toBe(0)
    const { base, now } = JSON.parse(run.stdout.trim())
    expect(now).toEqual(base)
    // a 60 s exit flush would show as a test timeout (30 s): the process ended
    expect(accepted).toHaveLength(1)
  })

  it('flushOnExit: false restores the old behaviour: no waiting, the records are lost (and the loss is still said)', async () => {
    mode = 'always503'
    const run = await runScript(`
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)}, flushOnExit: false })
      ${log20}
    `)
    expect(run.code).toBe(0)
    expect(accepted).toHaveLength(0)
    expect(run.stderr).toContain('(flushOnExit is off) with 20 records undelivered (of 20 conversations)')
  })
})

describe('process.exit() and signals', () => {
  it('process.exit() is not delayed by pending records, and the count is said', async () => {
    const run = await runScript(`
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)}, flushOnExit: 60000 })
      ${log20}
      process.exit(3)
    `)
    expect(run.code).toBe(3)
    // not the 60 s exit flush: that would be a test timeout (30 s)
    expect(run.stderr).toContain('process.exit() was called with 20 records undelivered (of 20 conversations)')
    expect(accepted).toHaveLength(0)
  })

  it('SIGTERM keeps Node’s default behaviour: no handler is installed, the process ends by the signal', async () => {
    mode = 'always503'
    const run = await runScript(
      `
      const t = createTracker({ apiKey: 'k', baseUrl: ${JSON.stringify(serviceUrl)} })
      ${log20}
      setInterval(() => {}, 1000) // a server would keep the process up like this
      console.log(JSON.stringify({ sigterm: process.listenerCount('SIGTERM'), sigint: process.listenerCount('SIGINT') }))
      console.log('ready')
    `,
      (child) => child.kill('SIGTERM'),
    )
    expect(run.signal).toBe('SIGTERM')
    expect(JSON.parse(run.stdout.split('\n')[0] as string)).toEqual({ sigterm: 0, sigint: 0 })
  })
})
