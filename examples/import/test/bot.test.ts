import { createTracker } from '@convotrack/core'
import { importRecords } from '@convotrack/import'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { startExampleBot } from '../src/bot'
import { startHelpdesk } from '../src/helpdesk'
import { HELPDESK_MAPPING, pullHelpdesk } from '../src/pull'

let sink: Sink
beforeEach(async () => {
  sink = await startSink()
})
afterEach(() => sink.close())

describe('examples/import', () => {
  it('pulls every page of the help desk and imports it as universal records with v=10.1.1-rest', async () => {
    const helpdesk = await startHelpdesk({ perPage: 2 })
    const tracker = createTracker({ apiKey: 'demo-key', baseUrl: sink.url })
    const summary = await importRecords(tracker, pullHelpdesk(helpdesk.url, helpdesk.token), { map: HELPDESK_MAPPING })
    await tracker.close()
    await helpdesk.close()
    expect(summary).toMatchObject({ records: 8, sent: 8, complete: true })
    // 3 tickets on 2 pages, and ticket 1001's 4 messages took 2 pages
    expect(helpdesk.requests.filter((p) => p.startsWith('/api/v2/tickets') && !p.includes('/messages'))).toEqual([
      '/api/v2/tickets',
      '/api/v2/tickets?page=2&per_page=2',
    ])
    expect(helpdesk.requests.filter((p) => p.startsWith('/api/v2/tickets/1001/messages'))).toHaveLength(2)
    expect(
      sink.records.every((r) => r.platform === 'universal' && r.v === '10.1.1-rest' && r.apiKey === 'demo-key'),
    ).toBe(true)
    const first = sink.records.find((r) => r.body.platformJson.message_id === 1)
    expect(first?.type).toBe('incoming')
    expect(first?.body).toEqual({
      text: 'Where is my parcel? It is late.',
      userId: 'cus_ana',
      conversationId: 'T-1001',
      platformJson: {
        message_id: 1,
        ticket: 'T-1001',
        subject: 'Late parcel',
        customer: 'cus_ana',
        direction: 'incoming',
        author: 'Ana',
        body: 'Where is my parcel? It is late.',
        created_at: '2024-05-02T09:01:30.000Z',
        timestamp: '2024-05-02T09:01:30.000Z',
      },
    })
    const answer = sink.records.find((r) => r.body.platformJson.message_id === 2)
    expect(answer?.type).toBe('outgoing')
    expect(answer?.body).toMatchObject({
      userId: 'cus_ana',
      conversationId: 'T-1001',
      text: 'Your parcel is with the courier and arrives tomorrow.',
    })
  })

  it('converse() imports the history, then each new message incrementally, exactly once', async () => {
    const bot = await startExampleBot({ trackingUrl: sink.url, apiKey: 'demo-key' })
    await bot.converse()
    await bot.close()
    const messages = sink.records.filter((r) => r.type !== 'event')
    expect(messages).toHaveLength(12) // 8 of history + 2 exchanges of 2
    const ids = messages.map((r) => r.body.platformJson.message_id as number)
    expect(new Set(ids).size).toBe(12)
    const dana = messages.filter((r) => r.body.userId === 'cus_dana').map((r) => [r.type, r.body.text])
    expect(dana).toEqual(
      expect.arrayContaining([
        ['incoming', 'Where is my order 5150? It is late.'],
        ['outgoing', 'Your parcel is with the courier and arrives tomorrow.'],
        ['incoming', 'Thanks!'],
      ]),
    )
    expect(sink.records.filter((r) => r.type === 'event').map((r) => r.body.name)).toEqual(['helpdesk_import'])
  })
})
