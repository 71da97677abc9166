/**
 * `POST /v1/traces` next to `POST /track/batch`: the same conversations, as OTLP spans (one
 * GenAI `chat` span per turn = 2 records, protobuf as the OpenTelemetry exporter encodes it)
 * and as tracked records, into a collector in its own process on a SQLite file.
 *
 *   npx tsx bench/collector-otlp.ts            # 10 000 turns = 20 000 records
 *   BENCH_TURNS=20000 npx tsx bench/collector-otlp.ts
 *
 * Each side: 2 keep-alive connections; OTLP 250 spans per request (500 records), batches of
 * 500 records. Reported: records/s, and the collector's CPU per record (measured in its process).
 * The bar: OTLP ingest per record close to /track/batch's. Quote ratios: the machine is shared.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { Pool } from 'undici'
import { startCollectorProcess } from './collector-batch'

const TURNS = Number(process.env.BENCH_TURNS ?? 10_000)
const SPANS_PER_REQUEST = 250

function turn(i: number) {
  const conv = `conv-${i % 500}`
  const question = `where is my order number ${i}?`
  const answer = `Order ${i} ships tomorrow. Anything else?`
  return { conv, user: `user-${i % 500}`, question, answer }
}

/** The turns as OTLP protobuf requests, made by the OpenTelemetry SDK and its own serializer. */
function otlpRequests(): Uint8Array[] {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const tracer = provider.getTracer('bench-llm')
  for (let i = 0; i < TURNS; i++) {
    const t = turn(i)
    tracer
      .startSpan('chat gpt-4o-mini', {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.conversation.id': t.conv,
          'user.id': t.user,
          'gen_ai.input.messages': JSON.stringify([
            { role: 'system', parts: [{ type: 'text', content: 'You are the shop assistant.' }] },
            { role: 'user', parts: [{ type: 'text', content: t.question }] },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'text', content: t.answer }], finish_reason: 'stop' },
          ]),
          'gen_ai.usage.input_tokens': 40 + (i % 20),
          'gen_ai.usage.output_tokens': 12,
        },
      })
      .end()
  }
  const spans = exporter.getFinishedSpans()
  const out: Uint8Array[] = []
  for (let i = 0; i < spans.length; i += SPANS_PER_REQUEST)
    out.push(ProtobufTraceSerializer.serializeRequest(spans.slice(i, i + SPANS_PER_REQUEST)) as Uint8Array)
  return out
}

/** The same turns as /track/batch bodies of 500 records. */
function batchRequests(): string[] {
  const records: string[] = []
  for (let i = 0; i < TURNS; i++) {
    const t = turn(i)
    const common = { userId: t.user, conversationId: t.conv }
    records.push(
      `{"platform":"universal","type":"incoming","v":"11.1.0-rest","idempotencyKey":"i.${i}","body":${JSON.stringify({ text: t.question, ...common })}}`,
      `{"platform":"universal","type":"outgoing","v":"11.1.0-rest","idempotencyKey":"o.${i}","body":${JSON.stringify({ text: t.answer, ...common, platformJson: { model: 'gpt-4o-mini', usage: { inputTokens: 40, outputTokens: 12 } } })}}`,
    )
  }
  const out: string[] = []
  for (let i = 0; i < records.length; i += 500) out.push(`{"records":[${records.slice(i, i + 500).join(',')}]}`)
  return out
}

async function run(mode: 'otlp' | 'batch', dir: string) {
  const collector = await startCollectorProcess(join(dir, `${mode}.db`))
  const pool = new Pool(collector.url, { connections: 2, pipelining: 1, keepAliveTimeout: 60_000 })
  const bodies = mode === 'otlp' ? otlpRequests() : batchRequests()
  const send = async (body: Uint8Array | string) => {
    const res =
      mode === 'otlp'
        ? await pool.request({
            method: 'POST',
            path: '/v1/traces',
            headers: { 'content-type': 'application/x-protobuf', authorization: 'Bearer bench-key' },
            body,
          })
        : await pool.request({
            method: 'POST',
            path: '/track/batch?apiKey=bench-key',
            headers: { 'content-type': 'application/json' },
            body,
          })
    await res.body.dump()
    if (res.statusCode !== 200) throw new Error(`${mode}: HTTP ${res.statusCode}`)
  }
  const cpu0 = await collector.cpu()
  const t0 = performance.now()
  let next = 0
  await Promise.all(
    [0, 1].map(async () => {
      while (next < bodies.length) await send(bodies[next++] as Uint8Array | string)
    }),
  )
  const ms = performance.now() - t0
  const cpu = (await collector.cpu()) - cpu0
  const { records } = await collector.counts()
  await pool.close()
  await collector.stop()
  const n = TURNS * 2
  return {
    mode,
    records,
    recordsPerSecond: Math.round((n / ms) * 1000),
    collectorCpuUsPerRecord: +(cpu / n).toFixed(1),
  }
}

const dir = mkdtempSync(join(tmpdir(), 'convotrack-otlp-bench-'))
try {
  const batch = await run('batch', dir)
  const otlp = await run('otlp', dir)
  console.table([batch, otlp])
  console.log(
    `OTLP / batch: ${(otlp.recordsPerSecond / batch.recordsPerSecond).toFixed(2)}× records/s, ${(otlp.collectorCpuUsPerRecord / batch.collectorCpuUsPerRecord).toFixed(2)}× collector CPU per record`,
  )
  console.log(JSON.stringify({ turns: TURNS, batch, otlp }))
  if (batch.records !== TURNS * 2 || otlp.records !== TURNS * 2) process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
