/**
 * `handoff.waiting` alerts: a real local receiver checks the body, the Standard Webhooks
 * signature (verified with core on the raw bytes) and the retry after a 500 under the same
 * `webhook-id`; `/metrics` counts outcomes; and a receiver that never answers does not hold
 * up ingest (every record is acknowledged while its alert is still unanswered).
 */
import type { IncomingHttpHeaders, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Collector, startCollector } from '@convotrack/collector'
import { generateWebhookSecret, verifyPauseWebhook } from '@convotrack/core'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { say } from './support/team'

const WAIT = { timeout: 15_000, interval: 20 }
const secret = generateWebhookSecret()
const seen: Array<{ path: string; headers: IncomingHttpHeaders; raw: string }> = []
let failNext = 0
const hanging: express.Response[] = []
let receiver: Server
let collector: Collector

beforeAll(async () => {
  const app = express()
  app.post('/:path', express.raw({ type: () => true }), (req, res) => {
    seen.push({ path: req.params.path as string, headers: req.headers, raw: (req.body as Buffer).toString('utf8') })
    if (req.params.path === 'hang') return void hanging.push(res)
    if (failNext > 0) {
      failNext--
      return void res.status(500).send('oops')
    }
    res.send('ok')
  })
  receiver = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  collector = await startCollector({
    port: 0,
    publicUrl: 'https://convotrack.example.com/',
    alerts: [
      { url: `${base}/signed`, events: ['handoff.waiting'], secret },
      { url: `${base}/plain`, events: ['handoff.waiting'] },
    ],
    alertRetry: { attempts: 3, baseDelayMs: 10, timeoutMs: 60_000 },
    bots: [
      { name: 'shop', apiKey: 'shop-key' },
      { name: 'slow', apiKey: 'slow-key' },
    ],
  })
})
afterAll(async () => {
  for (const res of hanging) res.destroy()
  receiver.closeAllConnections()
  await new Promise((r) => receiver.close(r))
  await collector.close()
})

describe('handoff.waiting alerts', () => {
  it('POSTs the entry, signed (Standard Webhooks), retried after a 500 with the same webhook-id', async () => {
    failNext = 1
    await say(collector.url, 'shop-key', 'ada', 'please get me a real person')
    await vi.waitFor(() => {
      expect(seen.filter((s) => s.path === 'signed')).toHaveLength(2)
      expect(seen.filter((s) => s.path === 'plain')).toHaveLength(1)
    }, WAIT)
    const signed = seen.filter((s) => s.path === 'signed')
    const body = JSON.parse(signed[1]?.raw ?? '')
    expect(body).toEqual({
      type: 'handoff.waiting',
      bot: 'shop',
      thread: 'ada',
      userId: 'ada',
      reason: 'asked',
      message: 'please get me a real person',
      text: expect.stringContaining('please get me a real person'),
      url: 'https://convotrack.example.com/#/conversations/shop/ada',
    })
    expect(body.text).toContain(body.url)
    for (const s of signed)
      expect(() => verifyPauseWebhook({ secret, headers: s.headers, rawBody: s.raw })).not.toThrow()
    expect(() =>
      verifyPauseWebhook({ secret: generateWebhookSecret(), headers: signed[1]!.headers, rawBody: signed[1]!.raw }),
    ).toThrow()
    expect(signed[0]?.headers['webhook-id']).toMatch(/^msg_/)
    expect(signed[1]?.headers['webhook-id']).toBe(signed[0]?.headers['webhook-id'])
    const plain = seen.find((s) => s.path === 'plain')
    expect(plain?.headers['webhook-signature']).toBeUndefined()
    expect(JSON.parse(plain?.raw ?? '')).toEqual(body)
    const metrics = await (await fetch(`${collector.url}/metrics`)).text()
    expect(metrics).toMatch(/convotrack_alerts_total\{event="handoff.waiting",outcome="ok"\} 2/)
    expect(metrics).toMatch(/convotrack_handoffs_queued_total\{reason="asked"\} 1/)
  })

  it('an alert is sent once per time a conversation enters the queue', async () => {
    const before = seen.length
    await say(collector.url, 'shop-key', 'ada', 'human, please!')
    await say(collector.url, 'shop-key', 'bo', 'agent')
    await vi.waitFor(() => expect(seen.slice(before).filter((s) => s.path === 'plain')).toHaveLength(1), WAIT)
    expect(JSON.parse(seen.slice(before).find((s) => s.path === 'plain')?.raw ?? '').thread).toBe('bo')
  })

  it('a receiver that never answers does not hold up ingest', async () => {
    const hung = await startCollector({
      port: 0,
      alerts: [
        { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hang`, events: ['handoff.waiting'] },
      ],
      alertRetry: { attempts: 1, timeoutMs: 60_000 },
      bots: [{ name: 'hung', apiKey: 'hung-key' }],
    })
    try {
      for (let i = 0; i < 5; i++) await say(hung.url, 'hung-key', `user-${i}`, 'talk to a human')
      // Every record was acknowledged, and every alert reached the receiver, which still holds them all.
      await vi.waitFor(() => expect(hanging).toHaveLength(5), WAIT)
      expect(hanging.every((res) => !res.writableEnded)).toBe(true)
      const queue = (await (await fetch(`${hung.url}/api/handoffs?bot=hung`)).json()) as { handoffs: unknown[] }
      expect(queue.handoffs).toHaveLength(5)
      // The receiver drops them: each failure is counted.
      for (const res of hanging.splice(0)) res.destroy()
      await vi.waitFor(
        async () =>
          expect(await (await fetch(`${hung.url}/metrics`)).text()).toMatch(
            /convotrack_alerts_total\{event="handoff.waiting",outcome="failed"\} 5/,
          ),
        WAIT,
      )
    } finally {
      for (const res of hanging.splice(0)) res.destroy()
      await hung.close()
    }
  })

  it('a bad alerts option is refused, naming the field', async () => {
    await expect(
      startCollector({ port: 0, alerts: [{ url: 'ftp://x', events: ['handoff.waiting'] }] }),
    ).rejects.toThrow(/alerts\[0\]\.url must be an http\(s\) URL/)
    await expect(
      startCollector({ port: 0, alerts: [{ url: 'http://x', events: ['nope' as 'handoff.waiting'] }] }),
    ).rejects.toThrow(/alerts\[0\]\.events/)
    await expect(startCollector({ port: 0, handoff: { notHandledStreak: -1 } })).rejects.toThrow(
      /handoff\.notHandledStreak must be a whole number ≥ 0/,
    )
  })
})
