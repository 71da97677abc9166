/**
 * OpenTelemetry's own SDK exporting a real app's spans over OTLP/HTTP: a `NodeTracerProvider`
 * (registered globally, as an app does) with a `BatchSpanProcessor` (or a `SimpleSpanProcessor`:
 * one span per request, children first) and the real
 * `@opentelemetry/exporter-trace-otlp-proto` or `-http` (JSON) exporter, sending to `url`.
 * `captureServer()` is a plain HTTP server on 127.0.0.1 that keeps each request's raw body and
 * headers and answers 200 `{}` — for tests of the mapping without a collector.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, propagation, trace } from '@opentelemetry/api'
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

export type ExportEncoding = 'protobuf' | 'json'

/** Registers a provider exporting to `url`, runs `app`, flushes, and unregisters everything. */
export async function withOtlpExport(
  url: string,
  encoding: ExportEncoding,
  app: () => Promise<void>,
  options: { headers?: Record<string, string>; compression?: 'gzip' | 'none'; processor?: 'batch' | 'simple' } = {},
): Promise<void> {
  const exporterOptions = {
    url,
    headers: options.headers ?? {},
    compression: options.compression === 'gzip' ? ('gzip' as never) : ('none' as never),
  }
  const exporter = encoding === 'protobuf' ? new ProtoExporter(exporterOptions) : new HttpJsonExporter(exporterOptions)
  const provider = new NodeTracerProvider({
    spanProcessors: [
      options.processor === 'simple' ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter),
    ],
  })
  provider.register()
  try {
    await app()
    await provider.forceFlush()
  } finally {
    await provider.shutdown()
    trace.disable()
    context.disable()
    propagation.disable()
  }
}

export interface CapturedRequest {
  headers: http.IncomingHttpHeaders
  body: Buffer
}

export async function captureServer(): Promise<{ url: string; requests: CapturedRequest[]; close(): Promise<void> }> {
  const requests: CapturedRequest[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
