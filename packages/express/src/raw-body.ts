import type { IncomingMessage, ServerResponse } from 'node:http'

/** A request as the receivers see it: Node's, plus what a body parser may have left on it. */
export type ReceiverRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; _body?: unknown }

/**
 * Keeps the raw request bytes on `req.rawBody` when a body parser runs before the receiver,
 * so the signature is checked on the bytes that were signed, never on a re-serialized body.
 *
 * @example app.use(express.json({ verify: captureRawBody }))
 */
export function captureRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer, _encoding?: string): void {
  ;(req as ReceiverRequest).rawBody = buf
}

/** Raw bytes a parser kept: `req.rawBody` (Buffer, Uint8Array or string) or a Buffer `req.body` (`express.raw()`). */
export function keptRawBody(req: ReceiverRequest): Uint8Array | string | undefined {
  const raw = req.rawBody
  if (raw instanceof Uint8Array || typeof raw === 'string') return raw
  if (Buffer.isBuffer(req.body)) return req.body
  return undefined
}

/** True when something already read the stream (a body parser without `captureRawBody`): the bytes are gone. */
export function bodyAlreadyConsumed(req: ReceiverRequest): boolean {
  return req._body === true || req.readableEnded || !req.readable
}

/** Result of {@link readRawBody}. */
export type ReadResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' }

/**
 * Reads the request stream into one Buffer, stopping as soon as it passes `limit` bytes
 * (the rest is not buffered).
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<ReadResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const finish = (result: ReadResult) => {
      if (settled) return
      settled = true
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onAborted)
      resolve(result)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        // Stop buffering. Drain a little more so the client can read our 413, then cut it off.
        let drained = size
        req.on('data', (more: Buffer) => {
          drained += more.length
          if (drained > limit * 16) req.destroy()
        })
        finish({ ok: false, reason: 'too_large' })
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish({ ok: true, body: Buffer.concat(chunks, size) })
    const onError = () => finish({ ok: false, reason: 'aborted' })
    const onAborted = () => finish({ ok: false, reason: 'aborted' })
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onAborted)
  })
}
