/**
 * Starts a real, throwaway `redis-server` on a free 127.0.0.1 port (no persistence) and stops it
 * by pid. Fails loudly when redis-server is not installed: these tests need the real thing
 * (CI installs Debian's redis-server).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import net from 'node:net'
import { freeStablePort } from '../../../test/support/stable-port'

export interface RedisServer {
  port: number
  url: string
  /** pid of the running server (changes after `start()`). */
  readonly pid: number
  /** Stops the server (SIGTERM, then SIGKILL after 3 s) and waits for it to exit. */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

const MISSING =
  'redis-server is not on PATH. These tests run against a real Redis: install it (Debian: `apt-get install -y redis-server`) and run again.'

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let data = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(500, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (d) => {
      data += d.toString()
      if (data.includes('\r\n')) done(data.startsWith('+PONG'))
    })
  })
}

export async function startRedisServer(): Promise<RedisServer> {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) throw new Error(MISSING)
  // Outside the ephemeral range: nothing else is given the port while the server is stopped.
  const port = await freeStablePort()
  let child: ChildProcess | undefined

  const start = async () => {
    const proc = spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    child = proc
    let stderr = ''
    proc.stderr?.on('data', (d) => {
      stderr += d
    })
    const deadline = Date.now() + 60_000 // a hang detector: a loaded machine starts it slowly
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited (${proc.exitCode}) on port ${port}: ${stderr}`)
      if (await ping(port)) return
      await new Promise((r) => setTimeout(r, 25))
    }
    proc.kill('SIGKILL')
    throw new Error(`redis-server did not answer PING on port ${port} within 60 s: ${stderr}`)
  }

  const stop = async () => {
    const proc = child
    child = undefined
    if (!proc || proc.exitCode !== null || proc.pid === undefined) return
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
    process.kill(proc.pid, 'SIGTERM')
    const timer = setTimeout(
      () => proc.pid !== undefined && proc.exitCode === null && process.kill(proc.pid, 'SIGKILL'),
      3000,
    )
    await exited
    clearTimeout(timer)
  }

  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid ?? -1
    },
    stop,
    start,
  }
}
