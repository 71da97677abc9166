import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Faults of the sink process (see sink-process.mjs). */
export interface SinkFaults {
  latencyMs?: number
  bucketPerSec?: number
  random429?: number
  retryAfterSec?: number
}

export interface SinkProcess {
  url: string
  child: ChildProcess
  count(): Promise<{ count: number; limited: number }>
  reset(): Promise<void>
  stop(): Promise<void>
}

/** Starts bench/sink-process.mjs in its own process and waits for its port. */
export async function startSinkProcess(faults: SinkFaults = {}): Promise<SinkProcess> {
  const child = fork(fileURLToPath(new URL('./sink-process.mjs', import.meta.url)), [JSON.stringify(faults)], {
    stdio: 'inherit',
  })
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)))
  const ask = <T>(m: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (r: T) => resolve(r))
      child.send(m)
    })
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    count: () => ask('count'),
    reset: async () => {
      await ask('reset')
    },
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.send('stop')
      }),
  }
}

/** The benchmark's record: a typical universal message. */
export const message = (i: number) => ({
  text: `I would like to order a large pizza with extra cheese, number ${i}`,
  userId: `user-${i % 500}`,
  conversationId: `conv-${i % 500}`,
  platformUserJson: { locale: 'en_GB', plan: 'pro' },
})

export const trackPath = `/track?${new URLSearchParams({ platform: 'universal', v: '11.1.0-rest', type: 'incoming', apiKey: 'bench-key' })}`
