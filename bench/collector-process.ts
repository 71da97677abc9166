/**
 * A collector in its own process for the benchmarks, so its CPU is measured apart from the
 * client's. `fork('collector-process.ts', { execArgv: ['--import', 'tsx'], env: { BENCH_DB, BENCH_PORT } })`;
 * it sends `{ url }` when listening and answers the messages 'cpu' (`{ cpu: µs user+system }`),
 * 'counts' (`{ counts }`), 'repackFunnels' (the store's funnel packing job, `{ repacked: ms }`), 'restart' (close + start on the same file and port, `{ url }`) and 'stop'.
 */
import { type Collector, startCollector } from '../packages/collector/src/index'

const db = process.env.BENCH_DB ?? ':memory:'
const start = (port: number) =>
  startCollector({ port, db, demoBot: false, bots: [{ name: 'bench', apiKey: 'bench-key' }] })

let collector: Collector = await start(Number(process.env.BENCH_PORT ?? 0))
process.send?.({ url: collector.url })

process.on('message', async (m: string) => {
  if (m === 'cpu') {
    const u = process.cpuUsage()
    process.send?.({ cpu: u.user + u.system })
  } else if (m === 'counts') process.send?.({ counts: await collector.store.counts() })
  else if (m === 'repackFunnels') {
    // The store's own job (SQLite: packs kept in this process; PostgreSQL: packs in the database).
    const store = collector.store as { repackFunnels?: () => Promise<void> }
    const t0 = performance.now()
    await store.repackFunnels?.()
    process.send?.({ repacked: performance.now() - t0 })
  } else if (m === 'restart') {
    const port = collector.port
    await collector.close()
    collector = await start(port)
    process.send?.({ url: collector.url })
  } else if (m === 'stop') {
    await collector.close()
    process.exit(0)
  }
})
