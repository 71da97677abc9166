/**
 * `@convotrack/otel` on the tracker's hot path: µs per `tracker.universal.logIncoming` call,
 * a plain tracker vs one with `otelTracking(tracker)`, both delivering to a sink process.
 *
 *   npx tsx bench/otel-hot-path.ts
 *
 * (a) no tracer provider registered (the package's promise: the hot path unchanged), then
 * (b) with a provider (BasicTracerProvider, no export) and the call inside an active span, and
 * (c) with a provider and no active span (a short span per record).
 * The two trackers take turns, 1 000 calls each, 20 rounds; medians of the per-call times.
 * Quote the ratios: the machine is shared.
 */
import { createTracker, type Tracker } from '@convotrack/core'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { otelTracking } from '../packages/otel/src/index'
import { message, startSinkProcess } from './sink'

const ROUNDS = 20
const CALLS = 1_000
const r3 = (x: number) => +x.toFixed(3)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

async function perCall(tracker: Tracker, wrap: (fn: () => void) => void): Promise<number[]> {
  const times: number[] = []
  wrap(() => {
    for (let i = 0; i < CALLS; i++) {
      const msg = message(i)
      const t0 = process.hrtime.bigint()
      tracker.universal.logIncoming(msg)
      times.push(Number(process.hrtime.bigint() - t0) / 1000)
    }
  })
  await tracker.flush(30_000)
  return times
}

async function compare(url: string, wrap: (fn: () => void) => void) {
  const plain = createTracker({ apiKey: 'bench-key', baseUrl: url })
  const hooked = createTracker({ apiKey: 'bench-key', baseUrl: url })
  otelTracking(hooked)
  const a: number[] = []
  const b: number[] = []
  await perCall(plain, wrap) // warm-up
  await perCall(hooked, wrap)
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always meets a warmer JIT or a fresher heap.
    if (round % 2 === 0) {
      a.push(...(await perCall(plain, wrap)))
      b.push(...(await perCall(hooked, wrap)))
    } else {
      b.push(...(await perCall(hooked, wrap)))
      a.push(...(await perCall(plain, wrap)))
    }
  }
  await plain.close()
  await hooked.close()
  return { plain_p50_us: r3(median(a)), otel_p50_us: r3(median(b)), ratio_p50: r3(median(b) / median(a)) }
}

const sink = await startSinkProcess()
const direct = (fn: () => void) => fn()
const noProvider = await compare(sink.url, direct)
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const provider = new BasicTracerProvider()
trace.setGlobalTracerProvider(provider)
const app = trace.getTracer('bench')
const inSpan = await compare(sink.url, (fn) =>
  app.startActiveSpan('turn', (span) => {
    fn()
    span.end()
  }),
)
const ownSpans = await compare(sink.url, direct)
await sink.stop()
const result = { calls: ROUNDS * CALLS, noProvider, activeSpan: inSpan, ownSpanPerRecord: ownSpans }
console.table({ noProvider, activeSpan: inSpan, ownSpanPerRecord: ownSpans })
console.log(JSON.stringify(result))
