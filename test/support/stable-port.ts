/**
 * Ports for test servers that go down and come back on the same port (`down()` / `up()`, a
 * restarted redis-server): picked outside the kernel's ephemeral range (Linux: 32768–60999), so
 * while such a server is down no other server's `listen(0)` and no client connection's local port
 * can be given its port. Under load a test in another worker once got a sink's freed port: one
 * test's records reached the other's server (a duplicate on one side, `delivered: true` on the
 * other while "down").
 */
import type { Server } from 'node:net'
import net from 'node:net'

/** The ports picked from: above the well-known ones, below the ephemeral range. */
export const STABLE_PORTS = { from: 12_000, to: 32_000 } as const

/** Listens on 127.0.0.1:`port`; rejects when it cannot (the port taken). */
export function listenOn(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (e: Error) => reject(e)
    server.once('error', failed)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', failed)
      resolve()
    })
  })
}

/** Listens on a free port of {@link STABLE_PORTS} (random start, the next when taken); resolves to it. */
export async function listenOnStablePort(server: Server): Promise<number> {
  const span = STABLE_PORTS.to - STABLE_PORTS.from
  const start = Math.floor(Math.random() * span)
  for (let i = 0; i < 500; i++) {
    const port = STABLE_PORTS.from + ((start + i) % span)
    try {
      await listenOn(server, port)
      return port
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e
    }
  }
  throw new Error(`no free port in ${STABLE_PORTS.from}–${STABLE_PORTS.to} after 500 tries`)
}

/** A port of {@link STABLE_PORTS} free now, for a process that binds it itself (redis-server). */
export async function freeStablePort(): Promise<number> {
  const probe = net.createServer()
  probe.unref()
  const port = await listenOnStablePort(probe)
  await new Promise<void>((r) => probe.close(() => r()))
  return port
}
