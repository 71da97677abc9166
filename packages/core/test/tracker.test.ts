import {
  ConfigError,
  type ConvotrackError,
  createTracker,
  InvalidRecordError,
  MemoryPauseStore,
  pauseKey,
  type Tracker,
} from '@convotrack/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'

let sink: Sink
let tracker: Tracker
beforeEach(async () => {
  sink = await startSink()
})
afterEach(async () => {
  await tracker?.close(2_000)
  await sink.close()
})

describe('createTracker', () => {
  it('a missing key is a clear error; CONVOTRACK_API_KEY / CONVOTRACK_URL are the fallbacks', async () => {
    const saved = { key: process.env.CONVOTRACK_API_KEY, url: process.env.CONVOTRACK_URL }
    delete process.env.CONVOTRACK_API_KEY
    expect(() => createTracker({ baseUrl: sink.url })).toThrow(ConfigError)
    expect(() => createTracker({ baseUrl: sink.url })).toThrow(/CONVOTRACK_API_KEY/)
    expect(() => createTracker({ apiKey: 'k', baseUrl: 'ftp://x' })).toThrow(/baseUrl/)
    process.env.CONVOTRACK_API_KEY = 'env-key'
    process.env.CONVOTRACK_URL = sink.url
    try {
      tracker = createTracker()
      tracker.universal.logIncoming({ text: 'hi', userId: 'u' })
      await tracker.flush()
      expect(sink.records[0]?.apiKey).toBe('env-key')
    } finally {
      process.env.CONVOTRACK_API_KEY = saved.key
      process.env.CONVOTRACK_URL = saved.url
      if (saved.key === undefined) delete process.env.CONVOTRACK_API_KEY
      if (saved.url === undefined) delete process.env.CONVOTRACK_URL
    }
  })
})

describe('every platform goes to its query values', () => {
  it('platform and type per call', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    tracker.sms.logIncoming({ text: 'a', userId: '+15550001' })
    tracker.generic.logOutgoing({ text: 'b', userId: 'u' })
    tracker.logEvent({ type: 'customEvent', name: 'e', userId: 'u' }, { platform: 'google' })
    tracker.logEvent({ type: 'shareEvent', name: 's', userId: 'u' })
    tracker.slack.logIncoming({
      team: { id: 'T' },
      bot: { id: 'B' },
      message: { type: 'message', channel: 'C', user: 'U', text: 'x' },
    })
    tracker.kik.logOutgoing({ username: 'bot', message: { type: 'text', body: 'x', to: 'alice' } })
    await tracker.flush()
    expect(sink.records.map((r) => `${r.platform}/${r.type}`)).toEqual([
      'sms/incoming',
      'generic/outgoing',
      'google/event',
      'generic/event',
      'slack/incoming',
      'kik/outgoing',
    ])
  })
})

describe('bad input', () => {
  it('strict: a direct call with a bad record throws InvalidRecordError naming the field; nothing is queued', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, strict: true })
    expect(() => tracker.universal.logIncoming({ text: 'x' } as never)).toThrow(InvalidRecordError)
    expect(() => tracker.logEvent({ type: 'revenueEvent', name: 'b', userId: 'u' } as never)).toThrow(
      /`amount` is required for revenueEvent/,
    )
    expect(() => tracker.setOutgoingIntent({ name: 'x', confidence: -1 })).toThrow(/intent\.confidence/)
    const circular: Record<string, unknown> = {}
    circular.self = circular
    expect(() => tracker.universal.logIncoming({ text: 'x', userId: 'u', platformJson: circular })).toThrow(
      /`platformJson\.self` is a circular reference/,
    )
    expect(() => tracker.universal.logIncoming({ text: 'x', userId: 'u', platformJson: { n: 10n } })).toThrow(
      /`platformJson\.n` is a BigInt/,
    )
    expect(await tracker.flush()).toMatchObject({ delivered: true, sent: 0 })
    expect(tracker.stats().invalid).toBe(4)
    expect(sink.requests).toBe(0)
  })
})

describe('bad input, default (not strict): never thrown into the bot', () => {
  it('a numeric userId, a circular or BigInt platformJson, a throwing getter, a bad intent: reported, counted invalid, false returned', async () => {
    const errors: ConvotrackError[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, onError: (e) => errors.push(e) })
    const t = tracker
    const circular: Record<string, unknown> = {}
    circular.self = circular
    const getterThrows = {
      text: 'x',
      get userId(): string {
        throw new Error('platform object went away')
      },
    }
    const calls = [
      () => t.universal.logIncoming({ text: 'x', userId: 42 } as never),
      () => t.universal.logIncoming({ text: 'x', userId: 'u', platformJson: circular }),
      () => t.universal.logIncoming({ text: 'x', userId: 'u', platformJson: { n: 10n } }),
      () => t.universal.logIncoming(getterThrows),
      () => t.universal.logIncoming({ text: 'x', userId: 'u' }, { intent: { name: 'x', confidence: 2 } }),
      () => t.logEvent({ type: 'revenueEvent', name: 'b', userId: 'u' } as never),
      () => t.logEvent({ type: 'customEvent', name: 'b', userId: 'u' }, { platform: 'nope' as never }),
    ]
    for (const call of calls) expect(call()).toBe(false)
    expect(() => t.setOutgoingIntent({ name: 'x', confidence: -1 })).not.toThrow()
    expect(() => t.setUserMetadata('ada' as never)).not.toThrow()
    expect(t.universal.logIncoming({ text: 'fine', userId: 'u' })).toBe(true)
    expect(await t.flush()).toMatchObject({ sent: 1 })
    expect(t.stats().invalid).toBe(calls.length)
    expect(errors.map((e) => [e.constructor.name, e.code])).toEqual(
      Array.from({ length: calls.length + 2 }, () => ['InvalidRecordError', 'invalid_record']),
    )
    expect(errors.map((e) => (e as InvalidRecordError).path)).toEqual([
      'userId',
      'platformJson.self',
      'platformJson.n',
      '',
      'intent.confidence',
      'amount',
      'platform',
      'intent.confidence',
      'metadata',
    ])
    expect(errors[3]?.message).toMatch(/platform object went away/)
    // The turn settings that were refused left nothing behind.
    expect(sink.records.map((r) => r.body)).toEqual([{ text: 'fine', userId: 'u' }])
  })
})

/** Gives the event loop `n` turns: the turns interleave by event-loop order, not by the clock. */
async function yields(n: number): Promise<void> {
  for (let k = 0; k < n; k++) await new Promise((r) => setImmediate(r))
}

describe('per-turn scope', () => {
  it('1 000 interleaved concurrent turns never see each other’s intent or metadata', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    const turns = Array.from({ length: 1_000 }, (_, i) =>
      tracker.withTurn(async () => {
        const userId = `user-${i}`
        if (i % 3 === 0) tracker.setNotHandled()
        tracker.setUserMetadata({ n: i })
        await yields(Math.floor(Math.random() * 20))
        tracker.universal.logIncoming({ text: `in ${i}`, userId })
        await new Promise((r) => setImmediate(r))
        tracker.setOutgoingIntent({ name: `intent-${i}` })
        await yields(Math.floor(Math.random() * 20))
        tracker.universal.logOutgoing({ text: `out ${i}`, userId })
      }),
    )
    await Promise.all(turns)
    await tracker.flush(20_000)
    expect(sink.records).toHaveLength(2_000)
    for (const r of sink.records) {
      const i = Number((r.body.userId as string).slice(5))
      expect(r.body.platformUserJson).toEqual({ n: i })
      if (r.type === 'incoming') expect(r.body.intent).toEqual(i % 3 === 0 ? { name: 'NotHandled' } : undefined)
      else expect(r.body.intent).toEqual({ name: `intent-${i}` })
    }
  })

  it('outside a turn, setNotHandled applies to the same synchronous run only', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    tracker.setNotHandled()
    tracker.universal.logIncoming({ text: 'what?', userId: 'u1' })
    await Promise.resolve()
    tracker.universal.logIncoming({ text: 'next user', userId: 'u2' })
    await tracker.flush()
    expect(sink.records.map((r) => r.body.intent)).toEqual([{ name: 'NotHandled' }, undefined])
  })

  it('turnIntent: false leaves the turn’s intent off one record; currentTurn and withTurn(fn, state) re-enter a turn', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    const saved = tracker.withTurn(() => {
      tracker.setNotHandled()
      tracker.universal.logIncoming({ text: 'a', userId: 'u' }, { turnIntent: false })
      return tracker.currentTurn()
    })
    expect(saved?.notHandled).toBe(true)
    tracker.withTurn(() => tracker.universal.logIncoming({ text: 'b', userId: 'u' }), saved)
    tracker.setUserMetadata({ loose: true })
    expect(tracker.currentTurn()).toBeUndefined()
    expect(tracker.currentTurn({ includeLoose: true })?.userMetadata).toEqual({ loose: true })
    await tracker.flush()
    expect(sink.records.map((r) => r.body.intent)).toEqual([undefined, { name: 'NotHandled' }])
  })

  it('setIncomingIntent marks the turn’s incoming record; NotHandled wins over it', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    tracker.withTurn(() => {
      tracker.setIncomingIntent({ name: 'order', inputs: [{ name: 'item', value: 'pizza' }], confidence: 0.92 })
      tracker.universal.logIncoming({ text: 'a pizza', userId: 'u' })
    })
    tracker.withTurn(() => {
      tracker.setIncomingIntent({ name: 'order' })
      tracker.setNotHandled()
      tracker.universal.logIncoming({ text: '???', userId: 'u' })
    })
    await tracker.flush()
    expect(sink.records.map((r) => r.body.intent)).toEqual([
      { name: 'order', inputs: [{ name: 'item', value: 'pizza' }], confidence: 0.92 },
      { name: 'NotHandled' },
    ])
  })

  it('a per-call intent wins over the turn’s', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url })
    tracker.withTurn(() => {
      tracker.setOutgoingIntent({ name: 'turn' })
      tracker.universal.logOutgoing({ text: 'x', userId: 'u' }, { intent: { name: 'call' } })
    })
    await tracker.flush()
    expect(sink.records[0]?.body.intent).toEqual({ name: 'call' })
  })
})

describe('privacy', () => {
  it('ignoreUserIds (list or predicate) on every platform', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, ignoreUserIds: ['qa-bot'] })
    expect(tracker.universal.logIncoming({ text: 'x', userId: 'qa-bot' })).toBe(false)
    tracker.kik.logIncoming({ username: 'b', message: { type: 'text', from: 'qa-bot', body: 'x' } })
    tracker.logEvent({ type: 'customEvent', name: 'e', userId: 'qa-bot' })
    tracker.universal.logIncoming({ text: 'x', userId: 'real' })
    const byPredicate = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      ignoreUserIds: (id, info) => id.startsWith('test-') && info.platform === 'sms',
    })
    byPredicate.sms.logIncoming({ text: 'x', userId: 'test-1' })
    byPredicate.universal.logIncoming({ text: 'x', userId: 'test-1' })
    await Promise.all([tracker.flush(), byPredicate.close()])
    expect(sink.records.map((r) => `${r.platform}:${r.body.userId}`)).toEqual(['universal:real', 'universal:test-1'])
    expect(tracker.stats().ignored).toBe(3)
  })

  it('redact may rewrite a private copy or drop (counted as redacted, not an error)', async () => {
    const errors: ConvotrackError[] = []
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      onError: (e) => errors.push(e),
      redact: (body, info) => {
        if (body.text === 'drop me') return null
        body.text = String(body.text).replace(/\d{4}-\d{4}/g, '[card]')
        return { ...body, redactedFor: info.platform }
      },
    })
    const msg = { text: 'card 1234-5678', userId: 'u' }
    tracker.universal.logIncoming(msg)
    tracker.universal.logIncoming({ text: 'drop me', userId: 'u' })
    await tracker.flush()
    expect(msg.text).toBe('card 1234-5678')
    expect(sink.records.map((r) => r.body)).toEqual([{ text: 'card [card]', userId: 'u', redactedFor: 'universal' }])
    expect(tracker.stats().droppedByReason.redacted).toBe(1)
    expect(errors).toEqual([])
  })

  it('debug logs each record with the API key masked; platform secrets are blanked on the wire', async () => {
    const lines: string[] = []
    const logger = { log: (s: string) => lines.push(s), warn: (s: string) => lines.push(s) }
    tracker = createTracker({ apiKey: 'TRACKING-SECRET', baseUrl: sink.url, debug: true, logger })
    tracker.messenger.logOutgoing(
      { qs: { access_token: 'PAGE-TOKEN-SECRET' }, json: { recipient: { id: 'U' }, message: { text: 'hi' } } },
      { recipient_id: 'U', message_id: 'm' },
    )
    tracker.kik.logIncoming({ apiKey: 'KIK-SECRET', username: 'b', message: { type: 'text', from: 'a', body: 'x' } })
    tracker.slack.logIncoming({
      token: 'SLACK-SECRET',
      team: { id: 'T' },
      bot: { id: 'B' },
      message: { type: 'message', channel: 'C', text: 'x' },
    })
    await tracker.flush()
    const logged = lines.join('\n')
    expect(logged).toContain('apiKey=***')
    expect(logged).toContain('[convotrack] delivered facebook/outgoing')
    const wire = sink.records.map((r) => r.raw).join('\n')
    for (const secret of ['TRACKING-SECRET', 'PAGE-TOKEN-SECRET', 'KIK-SECRET', 'SLACK-SECRET']) {
      expect(logged).not.toContain(secret)
      expect(wire).not.toContain(secret)
    }
  })

  it('a throwing onError or event listener never reaches the caller', async () => {
    sink.faults.status = 400
    tracker = createTracker({
      apiKey: 'k',
      baseUrl: sink.url,
      onError: () => {
        throw new Error('user bug')
      },
    })
    tracker.on('error', () => {
      throw new Error('listener bug')
    })
    tracker.universal.logIncoming({ text: 'x', userId: 'u' })
    expect((await tracker.flush()).failed).toBe(1)
  })
})

describe('events', () => {
  it('emits sent, dropped, retry, drained', async () => {
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, maxQueueSize: 1, onError: () => {} })
    const seen: string[] = []
    tracker.on('sent', (r, status) => seen.push(`sent:${r.userId}:${status}`))
    tracker.on('dropped', (reason, r) => seen.push(`dropped:${reason}:${r.userId}`))
    tracker.on('drained', () => seen.push('drained'))
    tracker.universal.logIncoming({ text: 'x', userId: 'a' })
    tracker.universal.logIncoming({ text: 'x', userId: 'b' })
    await tracker.flush()
    expect(seen).toEqual(['dropped:queue_full:b', 'sent:a:200', 'drained'])
  })
})

describe('pause state', () => {
  it('pauseKey: conversation id when sent, else user id', () => {
    expect(pauseKey({ userId: 'u', conversationId: 'c' })).toBe('c')
    expect(pauseKey({ userId: 'u' })).toBe('u')
    expect(pauseKey({})).toBeUndefined()
  })

  it('MemoryPauseStore pauses, unpauses and expires with a TTL', () => {
    let now = 0
    const store = new MemoryPauseStore({ ttlMs: 1_000, now: () => now })
    store.setPaused('u', true)
    expect(store.isPaused('u')).toBe(true)
    expect(store.keys()).toEqual(['u'])
    now = 1_001
    expect(store.isPaused('u')).toBe(false)
    store.setPaused('v', true)
    store.setPaused('v', false)
    expect(store.isPaused('v')).toBe(false)
  })

  it('tracker.isPaused uses the given store and fails open when it throws', async () => {
    const errors: string[] = []
    const broken = {
      isPaused: async () => {
        throw new Error('redis down')
      },
      setPaused: async () => {},
    }
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, pauses: broken, onError: (e) => errors.push(e.code) })
    expect(tracker.pauses).toBe(broken)
    expect(await tracker.isPaused('u')).toBe(false)
    expect(errors).toEqual(['pause_store'])
    const ok = createTracker({ apiKey: 'k', baseUrl: sink.url })
    await ok.pauses.setPaused('c1', true)
    expect(await ok.isPaused('c1')).toBe(true)
    expect(await ok.isPaused(undefined)).toBe(false)
    await ok.close()
  })
})

describe('feedback with a bad score, default (not strict)', () => {
  it('is reported and counted invalid, never thrown; strict throws it', async () => {
    const errors: string[] = []
    tracker = createTracker({ apiKey: 'k', baseUrl: sink.url, onError: (e) => errors.push(e.message) })
    expect(tracker.feedback({ userId: 'u', score: 9 })).toBe(false)
    expect(tracker.stats().invalid).toBe(1)
    expect(errors).toEqual([expect.stringMatching(/`score` must be a whole 1 … 5/)])
    const strict = createTracker({ apiKey: 'k', baseUrl: sink.url, strict: true })
    expect(() => strict.feedback({ userId: 'u', score: 9 })).toThrow(InvalidRecordError)
    await strict.close()
  })
})
