/**
 * When a conversation enters the handoff queue: the pure rules (keywords as whole words, intents,
 * NotHandled streaks counted over incoming messages, negative feedback), then the feedback event
 * through a real collector and a real core tracker.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Collector, loadConfigFile, startCollector } from '@convotrack/collector'
import { createTracker } from '@convotrack/core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  applySignal,
  DEFAULT_HANDOFF,
  type HandoffSignal,
  hasKeyword,
  resolveHandoff,
  validateHandoffOptions,
} from '../src/live/handoff-rules'
import type { HandoffRow } from '../src/store/handoff-records'

const key = { bot: 'shop', thread: 't1' }
const incoming = (text: string, intent: string | null = null, ts = 1): HandoffSignal => ({
  kind: 'incoming',
  userId: 'u1',
  text,
  intent,
  ts,
})
const NH = 'NotHandled'

function run(signals: HandoffSignal[], config = resolveHandoff(undefined, undefined)): HandoffRow | undefined {
  let row: HandoffRow | undefined
  for (const s of signals) row = applySignal(row, s, config, key) ?? row
  return row
}

describe('keywords', () => {
  it.each([
    ['Can I talk to a human?', true],
    ['HUMAN', true],
    ['a real   person please', true],
    ['humanitarian aid', false],
    ['superhuman', false],
    ['agents', false],
    ['talk to someone', true],
  ])('%j → %s', (text, expected) => {
    expect(hasKeyword(text, DEFAULT_HANDOFF.keywords)).toBe(expected)
  })
  it('regex characters in a keyword are literal', () => {
    expect(hasKeyword('need c++ help', ['c++'])).toBe(true)
    expect(hasKeyword('ccc help', ['c+'])).toBe(false) // `+` is not a quantifier
    expect(hasKeyword('help (now)', ['now'])).toBe(true)
    expect(hasKeyword('anything', [])).toBe(false)
  })
})

describe('entering the queue', () => {
  it('an intent of the list (any case) asks for a person', () => {
    expect(run([incoming('hmm', 'Human')])).toMatchObject({ state: 'waiting', reason: 'asked', text: 'hmm' })
    expect(run([incoming('hmm', 'order.status')])).toMatchObject({ state: 'idle' })
  })

  it('NotHandled in a row counts incoming messages only; a handled one breaks the streak', () => {
    expect(run([incoming('a', NH), incoming('b', 'greeting'), incoming('c', NH)])).toMatchObject({
      state: 'idle',
      streak: 1,
    })
    expect(
      run([incoming('a', NH), { kind: 'activity', ts: 2 }, incoming('c', NH, 3)]), // a bot reply in between (no signal) or activity
    ).toMatchObject({ state: 'waiting', reason: 'not-handled', text: 'c', since: 3 })
  })

  it('a reply marked NotHandled counts its incoming message after all', () => {
    const row = run([incoming('a', NH), incoming('b'), { kind: 'not-handled-reply', ts: 5 }])
    expect(row).toMatchObject({ state: 'waiting', reason: 'not-handled', text: 'b', since: 5 })
    // Only once per incoming message.
    expect(
      run([incoming('b'), { kind: 'not-handled-reply', ts: 5 }, { kind: 'not-handled-reply', ts: 6 }]),
    ).toMatchObject({ state: 'idle', streak: 1 })
  })

  it('notHandledStreak 0 never queues on NotHandled; a per-bot rule overrides field by field', () => {
    const config = resolveHandoff({ notHandledStreak: 0, keywords: ['help'] }, { keywords: ['operator'] })
    expect(config).toEqual({ ...DEFAULT_HANDOFF, notHandledStreak: 0, keywords: ['operator'] })
    expect(run([incoming('x', NH), incoming('y', NH), incoming('z', NH)], config)).toMatchObject({ state: 'idle' })
    expect(run([incoming('get me an operator')], config)).toMatchObject({ state: 'waiting' })
  })

  it('negative feedback queues it, with the last message as its text; a queued conversation stays as it was', () => {
    const row = run([incoming('where is it'), { kind: 'feedback', userId: 'u1', text: null, ts: 9 }])
    expect(row).toMatchObject({ state: 'waiting', reason: 'feedback', text: 'where is it', since: 9 })
    expect(run([incoming('human'), incoming('agent', null, 7)])).toMatchObject({ text: 'human', since: 1 })
  })

  it('bad options are refused, naming the field', () => {
    expect(() => validateHandoffOptions({ intents: 'human' }, 'handoff')).toThrow(/handoff\.intents must be an array/)
    expect(() => validateHandoffOptions({ autoResumeMinutes: -1 }, 'bots[0].handoff')).toThrow(
      /bots\[0\]\.handoff\.autoResumeMinutes must be a number ≥ 0/,
    )
    expect(() => validateHandoffOptions({ streak: 2 }, 'handoff')).toThrow(/handoff\.streak is not a handoff option/)
    expect(validateHandoffOptions({ autoResumeMinutes: 0.5 }, 'handoff')).toEqual({ autoResumeMinutes: 0.5 })
  })
})

describe('the feedback event through a real collector', () => {
  let collector: Collector
  beforeAll(async () => {
    collector = await startCollector({
      port: 0,
      bots: [{ name: 'shop', apiKey: 'shop-key', handoff: { keywords: [] } }],
    })
  })
  afterAll(async () => {
    await collector.close()
  })

  it('tracker.feedback() with a negative score queues the conversation (its comment as the text); a positive one does not', async () => {
    const tracker = createTracker({ apiKey: 'shop-key', baseUrl: collector.url })
    try {
      tracker.universal.logIncoming({ userId: 'pat', text: 'that was useless' }, { intent: { name: 'chitchat' } })
      tracker.feedback({ userId: 'kim', score: 1 })
      tracker.feedback({ userId: 'pat', score: -1 })
      tracker.feedback({ userId: 'lee', score: -0.5, comment: 'wrong answer twice' })
      await tracker.flush()
    } finally {
      await tracker.close()
    }
    const entries = await vi.waitFor(
      async () => {
        const body = (await (await fetch(`${collector.url}/api/handoffs?bot=shop`)).json()) as {
          handoffs: Array<Record<string, unknown>>
        }
        if (body.handoffs.length === 0) throw new Error('not queued yet')
        return body.handoffs
      },
      { timeout: 15_000, interval: 20 },
    )
    expect(entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ thread: 'pat', reason: 'feedback', text: 'that was useless', state: 'waiting' }),
      ]),
    )
    const all = await vi.waitFor(
      async () => {
        const body = (await (await fetch(`${collector.url}/api/handoffs?bot=shop`)).json()) as {
          handoffs: Array<Record<string, unknown>>
        }
        if (body.handoffs.length < 2) throw new Error('not both queued yet')
        return body.handoffs
      },
      { timeout: 15_000, interval: 20 },
    )
    expect(all.map((e) => e.thread).sort()).toEqual(['lee', 'pat'])
    expect(all.find((e) => e.thread === 'lee')).toMatchObject({ reason: 'feedback', text: 'wrong answer twice' })
  })
})

describe('the config file', () => {
  const write = (config: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-handoff-config-')), 'config.json')
    writeFileSync(file, JSON.stringify(config))
    return file
  }

  it('reads handoff (collector and per bot), alerts (env: secrets) and publicUrl', () => {
    const file = write({
      handoff: { autoResumeMinutes: 10 },
      bots: [{ name: 'shop', apiKey: 'k', handoff: { intents: ['TalkToAgentIntent'] } }],
      alerts: [{ url: 'env:SLACK_URL', events: ['handoff.waiting'], secret: 'env:ALERT_SECRET' }],
      publicUrl: 'https://convotrack.example.com',
    })
    const options = loadConfigFile(file, { SLACK_URL: 'https://hooks.example.com/x', ALERT_SECRET: 'whsec_abc' })
    expect(options.handoff).toEqual({ autoResumeMinutes: 10 })
    expect(options.bots?.[0]?.handoff).toEqual({ intents: ['TalkToAgentIntent'] })
    expect(options.alerts).toEqual([
      { url: 'https://hooks.example.com/x', events: ['handoff.waiting'], secret: 'whsec_abc' },
    ])
    expect(options.publicUrl).toBe('https://convotrack.example.com')
  })

  it('a bad value names the file and the field', () => {
    expect(() => loadConfigFile(write({ bots: [{ name: 's', apiKey: 'k', handoff: { keywords: [''] } }] }))).toThrow(
      /bots\[0\]\.handoff\.keywords must be an array of non-empty strings/,
    )
    expect(() => loadConfigFile(write({ alerts: [{ url: 'nope', events: ['handoff.waiting'] }] }))).toThrow(
      /alerts\[0\]\.url must be an http\(s\) URL/,
    )
    expect(() => loadConfigFile(write({ alerts: [{ url: 'env:MISSING', events: ['handoff.waiting'] }] }), {})).toThrow(
      /environment variable MISSING is not set/,
    )
  })
})
