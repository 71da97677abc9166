import {
  type ConvotrackError,
  createTracker,
  DroppedRecordError,
  type RecordInfo,
  type Tracker,
  type TrackerOptions,
} from '@convotrack/core'
import { afterEach, describe, expect, it } from 'vitest'
import { type FakeService, startFakeService } from './support/fake-service'

// A call the full queue refuses is counted once per record it would have produced: the
// `dropped` count, `droppedByReason.queue_full`, the `dropped` events and the `onError`
// summaries all equal what the same call sends when the queue has room (measured against a
// live local service in the same test), with no serialization spent on it.

const services: FakeService[] = []
const trackers: Tracker[] = []
afterEach(async () => {
  for (const t of trackers.splice(0)) await t.close(200)
  for (const s of services.splice(0)) await s.close()
})

/** A tracker whose queue is full: its one queued record sits in flight at a host that never answers. */
async function fullTracker(options: TrackerOptions = {}) {
  const svc = await startFakeService({}, { silent: true })
  services.push(svc)
  const errors: ConvotrackError[] = []
  const tracker = createTracker({
    apiKey: 'k',
    baseUrl: svc.url,
    maxQueueBytes: 1,
    flushOnExit: false,
    onError: (e) => errors.push(e),
    ...options,
  })
  trackers.push(tracker)
  expect(tracker.universal.logIncoming({ text: 'filler', userId: 'filler' })).toBe(true)
  const events: RecordInfo[] = []
  tracker.on('dropped', (reason, record) => {
    expect(reason).toBe('queue_full')
    events.push(record)
  })
  return {
    tracker,
    events,
    /** The records the `onError` summaries stand for (after `flush()` reported the held-back ones). */
    summarized: () =>
      errors.filter((e): e is DroppedRecordError => e instanceof DroppedRecordError).reduce((n, e) => n + e.count, 0),
  }
}

/** How many records `call` sends when the queue has room, and for whom, stored by a live local service. */
async function recordsWhenRoom(call: (t: Tracker) => unknown, options: TrackerOptions = {}) {
  const svc = await startFakeService()
  services.push(svc)
  const tracker = createTracker({ apiKey: 'k', baseUrl: svc.url, flushOnExit: false, ...options })
  trackers.push(tracker)
  call(tracker)
  expect((await tracker.flush(5_000)).delivered).toBe(true)
  return { count: svc.stored.length, ignored: tracker.stats().ignored }
}

// Spec shapes (tracking-service.md: Social messenger incoming / outgoing; short-post DM platform).
const messagingItem = (sender: string, i: number) => ({
  sender: { id: sender },
  recipient: { id: 'PAGE' },
  timestamp: 1_700_000_000_000 + i,
  message: { mid: `m.${sender}.${i}`, seq: i, text: `hello ${i}` },
})
/** 3 entries × 2 messaging items, 6 senders. */
const messengerBody = {
  object: 'page',
  entry: [0, 1, 2].map((e) => ({
    id: 'PAGE',
    time: 1_700_000_000_000 + e,
    messaging: [messagingItem(`U${e}a`, e * 2), messagingItem(`U${e}b`, e * 2 + 1)],
  })),
}
const dmEvent = (sender: string, recipient: string, text: string, id: string) => ({
  type: 'message_create',
  id,
  created_timestamp: '1700000000000',
  message_create: {
    target: { recipient_id: recipient },
    sender_id: sender,
    source_app_id: '268278',
    message_data: { text },
  },
})
/** Three DMs from users and the bot's own reply, as the webhook delivers them. */
const twitterIncoming = {
  for_user_id: 'BOT',
  direct_message_events: [
    dmEvent('H1', 'BOT', 'one', '1'),
    dmEvent('BOT', 'H1', 'own reply', '2'),
    dmEvent('H2', 'BOT', 'two', '3'),
    dmEvent('H3', 'BOT', 'three', '4'),
  ],
  users: { H1: { id: 'H1' }, H2: { id: 'H2' }, H3: { id: 'H3' }, BOT: { id: 'BOT' } },
  apps: { '268278': { id: '268278', name: 'Web' } },
}
const twitterOutgoing = {
  direct_message_events: [dmEvent('BOT', 'H1', 'a', '5'), dmEvent('BOT', 'H2', 'b', '6')],
}

interface Case {
  name: string
  call: (t: Tracker) => unknown
  records: number
  users: (string | undefined)[]
  options?: TrackerOptions
}

const cases: Case[] = [
  // A webhook body is one record on the wire (the same body the platform sent), however many items it holds.
  {
    name: 'messenger incoming, 3 entries × 2 items',
    call: (t) => t.messenger.logIncoming(messengerBody),
    records: 1,
    users: ['U0a'],
  },
  {
    name: 'messenger incoming, echoes and receipts as well (messengerEvents: all)',
    call: (t) =>
      t.messenger.logIncoming({
        object: 'page',
        entry: [
          {
            id: 'PAGE',
            time: 1,
            messaging: [
              { sender: { id: 'PAGE' }, recipient: { id: 'U1' }, timestamp: 2, read: { watermark: 1 } },
              messagingItem('U1', 3),
            ],
          },
        ],
      }),
    records: 1,
    users: ['PAGE'],
    options: { messengerEvents: 'all' },
  },
  {
    name: 'twitter DM incoming, 3 user DMs and the bot’s own',
    call: (t) => t.twitter.logIncoming(twitterIncoming),
    records: 3,
    users: ['H1', 'H2', 'H3'],
  },
  {
    name: 'twitter DM outgoing, 2 events',
    call: (t) => t.twitter.logOutgoing(twitterOutgoing),
    records: 2,
    users: ['H1', 'H2'],
  },
  {
    name: 'twitter DM outgoing, the send API’s single `event`',
    call: (t) => t.twitter.logOutgoing({ event: dmEvent('BOT', 'H9', 'hi', '7') }),
    records: 1,
    users: ['H9'],
  },
  {
    name: 'twitter DM incoming, one user ignored',
    call: (t) => t.twitter.logIncoming(twitterIncoming),
    records: 2,
    users: ['H1', 'H3'],
    options: { ignoreUserIds: ['H2'] },
  },
  {
    name: 'messenger incoming, the first senders ignored',
    call: (t) => t.messenger.logIncoming(messengerBody),
    records: 1,
    users: ['U1a'],
    options: { ignoreUserIds: ['U0a', 'U0b'] },
  },
  // Single-record calls: one drop, for the user the record would name.
  { name: 'universal', call: (t) => t.universal.logIncoming({ text: 'hi', userId: 'u1' }), records: 1, users: ['u1'] },
  {
    name: 'messenger outgoing',
    call: (t) =>
      t.messenger.logOutgoing(
        {
          uri: 'https://graph.facebook.com/v21.0/me/messages',
          json: { recipient: { id: 'R1' }, message: { text: 'x' } },
        },
        { recipient_id: 'R1', message_id: 'mid.1' },
      ),
    records: 1,
    users: ['R1'],
  },
  {
    name: 'slack incoming',
    call: (t) =>
      t.slack.logIncoming({
        team: { id: 'T1' },
        bot: { id: 'B1' },
        message: { type: 'message', channel: 'C1', user: 'W1', text: 'hi' },
      }),
    records: 1,
    users: ['W1'],
  },
  {
    name: 'slack outgoing',
    call: (t) =>
      t.slack.logOutgoing({
        team: { id: 'T1' },
        bot: { id: 'B1' },
        message: { type: 'message', channel: 'C1', text: 'x' },
      }),
    records: 1,
    users: ['C1'],
  },
  {
    name: 'kik incoming',
    call: (t) => t.kik.logIncoming({ username: 'bot', message: { type: 'text', from: 'K1', body: 'hi', chatId: 'c' } }),
    records: 1,
    users: ['K1'],
  },
  {
    name: 'kik outgoing',
    call: (t) => t.kik.logOutgoing({ username: 'bot', message: { type: 'text', to: 'K2', body: 'x', chatId: 'c' } }),
    records: 1,
    users: ['K2'],
  },
  {
    name: 'alexa incoming',
    call: (t) =>
      t.alexa.logIncoming({
        version: '1.0',
        session: { new: true, sessionId: 's', user: { userId: 'amzn1.ask.account.A' } },
        request: { type: 'LaunchRequest', requestId: 'r', timestamp: '2024-01-01T00:00:00Z' },
      } as never),
    records: 1,
    users: ['amzn1.ask.account.A'],
  },
  {
    // (the fake service reads records of platform generic as universal messages: an event goes as slack here)
    name: 'event',
    call: (t) => t.logEvent({ type: 'customEvent', name: 'signup', userId: 'e1' }, { platform: 'slack' }),
    records: 1,
    users: ['e1'],
  },
]

describe('queue full: every record a call would have produced is counted', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.records} dropped, as many as it sends when the queue has room`, async () => {
      const room = await recordsWhenRoom(c.call, c.options)
      expect(room.count).toBe(c.records)
      const { tracker, events, summarized } = await fullTracker(c.options)
      expect(c.call(tracker)).toBe(false)
      const s = tracker.stats()
      expect(s.dropped).toBe(c.records)
      expect(s.droppedByReason.queue_full).toBe(c.records)
      expect(events).toEqual(
        c.users.map((userId) => ({ platform: expect.any(String), type: expect.any(String), userId })),
      )
      expect(s.ignored).toBe(room.ignored)
      const flushed = await tracker.flush(50)
      expect(flushed).toMatchObject({ delivered: false, dropped: c.records })
      expect(summarized()).toBe(c.records)
    })
  }

  it('events name the platform and type of each would-be record', async () => {
    const { tracker, events } = await fullTracker()
    tracker.twitter.logOutgoing(twitterOutgoing)
    expect(events).toEqual([
      { platform: 'twitter', type: 'outgoing', userId: 'H1' },
      { platform: 'twitter', type: 'outgoing', userId: 'H2' },
    ])
  })

  it('a call that would produce no record (only echoes and receipts) is counted as ignored, as with room', async () => {
    const onlyEchoes = {
      object: 'page',
      entry: [
        {
          id: 'PAGE',
          time: 1,
          messaging: [
            {
              sender: { id: 'PAGE' },
              recipient: { id: 'U1' },
              timestamp: 2,
              message: { is_echo: true, mid: 'm', text: 'x' },
            },
            { sender: { id: 'U1' }, recipient: { id: 'PAGE' }, delivery: { watermark: 1 } },
          ],
        },
      ],
    }
    const room = await recordsWhenRoom((t) => t.messenger.logIncoming(onlyEchoes as never))
    expect(room).toEqual({ count: 0, ignored: 1 })
    const { tracker, events } = await fullTracker()
    expect(tracker.messenger.logIncoming(onlyEchoes as never)).toBe(false)
    expect(tracker.stats()).toMatchObject({ dropped: 0, ignored: 1 })
    expect(events).toEqual([])
  })

  it('a malformed input while full counts as one record, is neither validated nor thrown', async () => {
    const { tracker, events, summarized } = await fullTracker()
    expect(tracker.twitter.logIncoming({} as never)).toBe(false)
    expect(tracker.messenger.logIncoming({ object: 'page', entry: [{ id: 'P', messaging: [42] }] } as never)).toBe(
      false,
    )
    expect(tracker.stats().droppedByReason.queue_full).toBe(2)
    expect(events.map((e) => e.userId)).toEqual([undefined, undefined])
    await tracker.flush(50)
    expect(summarized()).toBe(2)
  })

  it('while full, a multi-record call reads no message text (no serialization)', async () => {
    const { tracker } = await fullTracker()
    let reads = 0
    const payload = {
      direct_message_events: [1, 2, 3].map((i) => {
        const ev = dmEvent('BOT', `H${i}`, 'x', String(i))
        Object.defineProperty(ev.message_create.message_data, 'text', {
          enumerable: true,
          get() {
            reads++
            return 'x'
          },
        })
        return ev
      }),
    }
    tracker.twitter.logOutgoing(payload)
    expect(tracker.stats().droppedByReason.queue_full).toBe(3)
    expect(reads).toBe(0)
  })

  it('many calls: counts, events and summaries agree', async () => {
    const { tracker, events, summarized } = await fullTracker()
    for (let i = 0; i < 100; i++) {
      tracker.twitter.logIncoming(twitterIncoming) // 3 records each
      tracker.universal.logIncoming({ text: 'x', userId: `u${i}` })
    }
    expect(tracker.stats().droppedByReason.queue_full).toBe(400)
    expect(events).toHaveLength(400)
    await tracker.flush(50)
    expect(summarized()).toBe(400)
  })
})
