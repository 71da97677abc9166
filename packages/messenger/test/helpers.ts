import type { AddressInfo } from 'node:net'
import { type ConvotrackError, createTracker, type Tracker, type TrackerOptions } from '@convotrack/core'
import type { Express } from 'express'
import { type ReceivedRecord, type Sink, startSink } from '../../../test/support/sink-server'

export const PAGE_ID = '1843456789012345'
export const GRAPH = 'https://graph.facebook.com'
export const SEND_PATH = '/v21.0/me/messages'
export const SEND_URI = `${GRAPH}${SEND_PATH}`
export const TOKEN = 'EAAGm0PX4ZCpsBAKZCZAsecretpagetoken'

/** A Messenger text message as Facebook posts it (spec: Social messenger, incoming). */
export function textItem(userId: string, text: string, timestamp = 1_700_000_000_000) {
  return {
    sender: { id: userId },
    recipient: { id: PAGE_ID },
    timestamp,
    message: { mid: `m_${userId}_${timestamp}`, seq: 12, text },
  }
}

/** A webhook body with the items in one entry. */
export function webhookBody(...messaging: unknown[]) {
  return { object: 'page', entry: [{ id: PAGE_ID, time: 1_700_000_000_500, messaging }] }
}

export interface Harness {
  sink: Sink
  tracker: Tracker
  errors: ConvotrackError[]
  /** Records delivered to the sink, after a flush. */
  records(): Promise<ReceivedRecord[]>
  close(): Promise<void>
}

export async function harness(options: TrackerOptions = {}): Promise<Harness> {
  const sink = await startSink()
  const errors: ConvotrackError[] = []
  const tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, onError: (e) => errors.push(e), ...options })
  return {
    sink,
    tracker,
    errors,
    async records() {
      const result = await tracker.flush()
      if (!result.delivered) throw new Error(`tracker did not deliver: ${JSON.stringify(result)}`)
      return sink.records
    },
    async close() {
      await tracker.close()
      await sink.close()
    },
  }
}

/** Serves an Express app on 127.0.0.1, port 0. */
export async function listen(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** POSTs JSON like Facebook does. */
export async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, text: await res.text() }
}

export const byType = (records: ReceivedRecord[], type: string) => records.filter((r) => r.type === type)

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
