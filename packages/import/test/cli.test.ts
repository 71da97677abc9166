/**
 * The `convotrack import` CLI as a user runs it: a child process (the real bin source, run by
 * tsx) against a real HTTP tracking endpoint, killed with SIGKILL half-way and run again.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'convotrack-cli-'))
const MAP = 'text=body,userId=author,conversationId=ticket,timestamp=created_at,direction=kind'

let sink: Sink
const children: ChildProcess[] = []

beforeAll(async () => {
  sink = await startSink()
})
afterAll(() => sink.close())
/**
 * How long a wait may take before it counts as a hang. Only a hang detector: these tests run
 * child processes that are slow on a loaded machine, and no test asserts on time.
 */
const HANG_MS = 300_000

afterEach(async () => {
  const running = children.splice(0).filter((c) => c.exitCode === null && c.signalCode === null)
  for (const c of running) c.kill('SIGKILL')
  await Promise.all(running.map((c) => new Promise((resolve) => c.once('close', resolve))))
  // What a killed child had already sent is still being read by the sink: let it land before
  // clearing, or it would show up in the next test.
  await until(() => sink.connections === 0 && sink.pending === 0, HANG_MS, 'the sink to finish with the killed child')
  sink.clear()
  for (const k of Object.keys(sink.faults)) delete (sink.faults as Record<string, unknown>)[k]
})

/**
 * An export of `lines` lines; the record on line N has id N. Every 397th line is bad, in turn:
 * not JSON, no author, an unknown direction, an unreadable timestamp.
 */
function writeExport(name: string, lines: number): { path: string; bad: number[]; good: number[] } {
  const bad: number[] = []
  const good: number[] = []
  const out: string[] = []
  for (let n = 1; n <= lines; n++) {
    const rec = {
      id: n,
      body: `message ${n}`,
      author: `cust-${n % 97}`,
      ticket: `T-${n % 31}`,
      created_at: 1_700_000_000 + n,
      kind: n % 4 === 0 ? 'outgoing' : 'incoming',
    }
    if (n % 397 === 0) {
      bad.push(n)
      const kind = (n / 397) % 4
      if (kind === 0) out.push(`{"id": ${n}, "body": "cut off`)
      else if (kind === 1) out.push(JSON.stringify({ ...rec, author: undefined }))
      else if (kind === 2) out.push(JSON.stringify({ ...rec, kind: 'agent' }))
      else out.push(JSON.stringify({ ...rec, created_at: 'last tuesday' }))
    } else {
      good.push(n)
      out.push(JSON.stringify(rec))
    }
  }
  const path = join(dir, name)
  writeFileSync(path, `${out.join('\n')}\n`)
  return { path, bad, good }
}

interface Run {
  child: ChildProcess
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>
}

function runCli(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, CONVOTRACK_API_KEY: 'cli-key', CONVOTRACK_URL: sink.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c
  })
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c
  })
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
  return { child, done }
}

async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  await vi.waitFor(
    () => {
      if (!predicate()) throw new Error(`timed out waiting for ${what}`)
    },
    { timeout: timeoutMs, interval: 5 },
  )
}
const sameIds = (a: Iterable<number>, b: Iterable<number>) => {
  const x = new Set(a)
  const y = new Set(b)
  return x.size === y.size && [...x].every((id) => y.has(id))
}

const receivedIds = () => sink.records.map((r) => r.body.platformJson.id as number)
const countsOf = (ids: number[]) => {
  const m = new Map<number, number>()
  for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1)
  return m
}
const checkpointIds = (path: string): Set<number> => {
  const { done } = JSON.parse(readFileSync(path, 'utf8')) as { done: Array<[number, number]> }
  const s = new Set<number>()
  for (const [a, b] of done) for (let n = a; n <= b; n++) s.add(n)
  return s
}

describe('convotrack import (CLI)', { timeout: HANG_MS }, () => {
  const big = writeExport('history.jsonl', 10_000)

  it('reports every bad line of a 10 000-line export by line number before sending anything (--dry-run)', async () => {
    const report = join(dir, 'report.json')
    const before = sink.requests
    const { code, stdout, stderr } = await runCli(['import', big.path, '--map', MAP, '--dry-run', '--report', report])
      .done
    expect(code).toBe(2)
    expect(big.bad).toHaveLength(25)
    expect(stderr).toContain(`25 invalid lines in ${big.path}`)
    for (const n of big.bad.slice(0, 20)) expect(stderr).toMatch(new RegExp(`^  line ${n}: `, 'm'))
    expect(stderr).toContain('… and 5 more (--report <file> lists them all)')
    expect(stderr).toContain(
      'line 397: `userId` is required and must be a non-empty string (got nothing) (read from "author")',
    )
    expect(stderr).toContain('line 794: `direction` must be "incoming" or "outgoing" (got "agent") (read from "kind")')
    expect(stderr).toContain('line 1191: `timestamp` must be an ISO 8601 date')
    // The column within the file's line, the same words on Node 20, 22, 24 and 26 (not V8's own "line 1 column …").
    expect(stderr).toContain('line 1588: is not valid JSON at column 30 (Unterminated string in JSON)')
    expect(stdout.trim()).toBe('dry run: 9975 valid, 25 invalid, nothing sent')
    const written = JSON.parse(readFileSync(report, 'utf8')) as { invalid: Array<{ position: number; field: string }> }
    expect(written.invalid.map((r) => r.position)).toEqual(big.bad)
    expect(written.invalid.map((r) => r.field).slice(0, 4)).toEqual(['userId', 'direction', 'timestamp', ''])
    expect(sink.requests - before).toBe(0)
  })

  it('killed with SIGKILL half-way while the service holds its answers, then resumed: every good record exactly once', async () => {
    const checkpoint = join(dir, 'hold.checkpoint.json')
    const first = runCli([
      'import',
      big.path,
      '--map',
      MAP,
      '--rate',
      '0',
      '--concurrency',
      '4',
      '--checkpoint',
      checkpoint,
      '--quiet',
    ])
    await until(() => sink.records.length >= 2000, HANG_MS, '2000 records at the sink')
    // The service stops storing (503 for everything, retried by the client), so no request is
    // half-done at the kill; the checkpoint must then hold exactly what the service stored.
    sink.faults.status = 503
    // Kill once the checkpoint has caught up with every answer the service gave (a write after
    // each batch of acknowledgements, renamed into place: never read half-written).
    const storedBefore = receivedIds()
    await until(
      () => existsSync(checkpoint) && sameIds(checkpointIds(checkpoint), storedBefore),
      HANG_MS,
      'the checkpoint to hold every stored record',
    )
    first.child.kill('SIGKILL')
    const killed = await first.done
    expect(killed.signal).toBe('SIGKILL')
    const stored = receivedIds()
    expect(stored.length).toBeGreaterThanOrEqual(2000)
    expect(stored.length).toBeLessThan(big.good.length)
    expect([...checkpointIds(checkpoint)].sort((a, b) => a - b)).toEqual([...stored].sort((a, b) => a - b))

    delete sink.faults.status
    const second = await runCli(['import', big.path, '--map', MAP, '--rate', '0', '--checkpoint', checkpoint]).done
    expect(second.code).toBe(2) // done; the 25 invalid lines were skipped
    expect(second.stderr).toContain(
      `9975 valid records, ${stored.length} already imported by an earlier run; ${9975 - stored.length} to send`,
    )
    expect(second.stdout).toMatch(
      new RegExp(`^sent ${9975 - stored.length}, ${stored.length} already imported, 25 invalid in `),
    )
    const counts = countsOf(receivedIds())
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(big.good)
    expect([...counts.values()].every((c) => c === 1)).toBe(true)
  })

  it('killed with SIGKILL at an arbitrary moment, requests in flight: nothing lost, and the only records sent twice are those stored but not yet checkpointed', async () => {
    const small = writeExport('small.jsonl', 1200)
    const checkpoint = join(dir, 'hard.checkpoint.json')
    sink.faults.latencyMs = 25
    const first = runCli([
      'import',
      small.path,
      '--map',
      MAP,
      '--rate',
      '0',
      '--concurrency',
      '4',
      '--checkpoint',
      checkpoint,
      '--quiet',
    ])
    await until(() => sink.records.length >= 300, HANG_MS, '300 records at the sink')
    first.child.kill('SIGKILL')
    await first.done
    // Requests the sink held are answered (and stored) though their sender is gone: wait for the
    // killed process's connections to close and every request that arrived on them to be answered.
    await until(() => sink.connections === 0 && sink.pending === 0, HANG_MS, 'the sink to answer what it held')
    const stored = new Set(receivedIds())
    const checkpointed = checkpointIds(checkpoint)
    for (const id of checkpointed) expect(stored.has(id)).toBe(true) // never checkpoints what was not stored
    const ambiguous = [...stored].filter((id) => !checkpointed.has(id))
    // in flight (≤ 4) plus acknowledged within the last checkpoint interval (50 ms at ~150 records/s)
    expect(ambiguous.length).toBeLessThanOrEqual(20)

    const second = await runCli([
      'import',
      small.path,
      '--map',
      MAP,
      '--rate',
      '0',
      '--checkpoint',
      checkpoint,
      '--quiet',
    ]).done
    expect(second.code).toBe(2)
    const counts = countsOf(receivedIds())
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(small.good)
    const twice = [...counts.entries()].filter(([, c]) => c > 1).map(([id]) => id)
    expect(twice.sort((a, b) => a - b)).toEqual(ambiguous.sort((a, b) => a - b))
    expect([...counts.values()].every((c) => c <= 2)).toBe(true)
  })

  it('SIGINT stops gracefully (in-flight records acknowledged, checkpoint saved, exit 130); the rerun completes exactly once', async () => {
    const small = writeExport('graceful.jsonl', 800)
    const checkpoint = join(dir, 'graceful.checkpoint.json')
    sink.faults.latencyMs = 10
    const first = runCli(['import', small.path, '--map', MAP, '--rate', '300', '--checkpoint', checkpoint])
    await until(() => sink.records.length >= 150, HANG_MS, '150 records at the sink')
    first.child.kill('SIGINT')
    const stopped = await first.done
    expect(stopped.code).toBe(130)
    expect(stopped.stdout).toContain('stopped (aborted); run the same command again to resume')
    expect(checkpointIds(checkpoint).size).toBe(sink.records.length)

    const second = await runCli([
      'import',
      small.path,
      '--map',
      MAP,
      '--rate',
      '0',
      '--checkpoint',
      checkpoint,
      '--quiet',
    ]).done
    expect(second.code).toBe(2)
    const counts = countsOf(receivedIds())
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(small.good)
    expect([...counts.values()].every((c) => c === 1)).toBe(true)
  })

  it('imports CSV with a column mapping, posting v=10.1.1-rest universal records with the CLI key', async () => {
    const csv = join(dir, 'tickets.csv')
    writeFileSync(
      csv,
      'msg_id,Message,Customer,Ticket,Sent At,Who\n1,Where is my parcel?,c-1,T-9,2024-03-01T10:00:00Z,incoming\n2,"It left today, tracking: 42",c-1,T-9,2024-03-01T10:05:00Z,outgoing\n',
    )
    const { code, stdout } = await runCli([
      'import',
      csv,
      '--map',
      'text=Message,userId=Customer,conversationId=Ticket,timestamp=Sent At,direction=Who',
      '--no-checkpoint',
      '--quiet',
    ]).done
    expect(code).toBe(0)
    expect(stdout).toMatch(/^sent 2 in /)
    const byType = Object.fromEntries(sink.records.map((r) => [r.type, r]))
    expect(byType.incoming).toMatchObject({ platform: 'universal', v: '10.1.1-rest', apiKey: 'cli-key' })
    expect(byType.incoming?.body).toEqual({
      text: 'Where is my parcel?',
      userId: 'c-1',
      conversationId: 'T-9',
      platformJson: {
        msg_id: '1',
        Message: 'Where is my parcel?',
        Customer: 'c-1',
        Ticket: 'T-9',
        'Sent At': '2024-03-01T10:00:00Z',
        Who: 'incoming',
        timestamp: '2024-03-01T10:00:00.000Z',
      },
    })
    expect(byType.outgoing?.body).toMatchObject({
      text: 'It left today, tracking: 42',
      userId: 'c-1',
      conversationId: 'T-9',
    })
  })

  it('numbers the rows of a CRLF CSV (a spreadsheet export) by their line in the file, after multi-line fields too', async () => {
    const csv = join(dir, 'crlf.csv')
    const rows = [
      'Message,Customer,Who',
      '"First line\r\nsecond line\r\nthird line",c-1,incoming', // lines 2–4
      'Fine,c-1,outgoing', // line 5
      '"Two\r\nlines",,incoming', // lines 6–7: no customer
      'Also fine,c-2,incoming', // line 8
      'Bad,c-2,agent', // line 9
    ]
    writeFileSync(csv, `${rows.join('\r\n')}\r\n`)
    const { code, stderr, stdout } = await runCli([
      'import',
      csv,
      '--map',
      'text=Message,userId=Customer,direction=Who',
      '--dry-run',
    ]).done
    expect(code).toBe(2)
    expect(stderr).toContain('line 6: `userId` is required')
    expect(stderr).toContain('line 9: `direction` must be "incoming" or "outgoing" (got "agent")')
    expect(stdout.trim()).toBe('dry run: 3 valid, 2 invalid, nothing sent')
  })

  it('explains usage errors (exit 64) and needs a key', async () => {
    const noKey = await runCli(['import', big.path, '--dry-run', '--map', 'txt=body']).done
    expect(noKey.code).toBe(64)
    expect(noKey.stderr).toContain('--map: unknown field "txt"')
    const missing = await runCli(['import', big.path], { CONVOTRACK_API_KEY: '' }).done
    expect(missing.code).toBe(64)
    expect(missing.stderr).toContain('a tracking key is required: pass --api-key or set CONVOTRACK_API_KEY')
    const help = await runCli(['--help']).done
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: convotrack import <file> [options]')
  })
})
