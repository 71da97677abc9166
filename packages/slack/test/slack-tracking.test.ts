import { createTracker, type Tracker } from '@convotrack/core'
import { flushSlackTracking, type SlackTrackingOptions, slackTracking } from '@convotrack/slack'
import type { App } from '@slack/bolt'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import {
  BOT_USER_ID,
  type FakeSlackApi,
  fakeSlackApi,
  messageEvent,
  type RunningApp,
  startApp,
  startResponseUrlServer,
} from './slack-harness'

const TEAM = { id: 'T1', name: 'Acme Corp' }
const BOT = { id: BOT_USER_ID }

let sink: Sink
let tracker: Tracker
let api: FakeSlackApi
let running: RunningApp | undefined
let reported: Error[]

beforeAll(async () => {
  nock.disableNetConnect()
  nock.enableNetConnect('127.0.0.1')
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
  nock.enableNetConnect()
})
beforeEach(() => {
  sink.clear()
  sink.faults = {}
  reported = []
  tracker = createTracker({
    apiKey: 'test-key',
    baseUrl: sink.url,
    retry: { maxAttempts: 2, minDelayMs: 10, maxDelayMs: 20 },
    onError: (e) => reported.push(e),
  })
  api = fakeSlackApi({ teamNames: { T1: 'Acme Corp' } })
})
afterEach(async () => {
  await running?.close()
  running = undefined
  await tracker.close(1000)
  nock.cleanAll()
})

async function start(
  setup: (app: App) => void,
  options: SlackTrackingOptions = {},
  appOptions: { processBeforeResponse?: boolean } = {},
) {
  running = await startApp((app) => {
    app.use(slackTracking(tracker, options))
    setup(app)
  }, appOptions)
  return running
}

/** What the sink received, as the spec's parts: query values and the parsed body. */
async function delivered() {
  const result = await flushSlackTracking(tracker, 5000)
  expect(result.pending).toBe(0)
  return sink.records.map((r) => ({ platform: r.platform, type: r.type, v: r.v, apiKey: r.apiKey, body: r.body }))
}

const wire = (type: 'incoming' | 'outgoing', body: unknown) => ({
  platform: 'slack',
  type,
  v: '11.1.0-rest',
  apiKey: 'test-key',
  body,
})

describe('incoming messages and say()', () => {
  it('tracks the user message and the say() reply with the exact team chat shapes', async () => {
    const app = await start((a) => {
      a.message('hello', async ({ say }) => {
        await say('Hi there!')
      })
    })
    expect((await app.sendEvent(messageEvent('C1', 'hello bot'))).status).toBe(200)

    expect(await delivered()).toEqual([
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: { type: 'message', channel: 'C1', user: 'U1', text: 'hello bot', ts: '1700000000.000100', team: 'T1' },
      }),
      wire('outgoing', { team: TEAM, bot: BOT, message: { type: 'message', text: 'Hi there!', channel: 'C1' } }),
    ])
    expect(api.posted).toEqual([expect.objectContaining({ channel: 'C1', text: 'Hi there!' })])
    expect(app.errors).toEqual([])
  })

  it('keeps Slack’s token only with sendPlatformCredentials', async () => {
    await tracker.close()
    tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, sendPlatformCredentials: true })
    const app = await start(() => {})
    await app.sendEvent(messageEvent('C1', 'anyone?'))
    const [incoming] = await delivered()
    expect(incoming?.body.token).toBe('verification-token')
  })

  it('leaves the token out by default', async () => {
    const app = await start(() => {})
    await app.sendEvent(messageEvent('C1', 'anyone?'))
    const [incoming] = await delivered()
    expect(incoming?.body).not.toHaveProperty('token')
    expect(sink.records[0]?.raw).not.toContain('verification-token')
  })

  it('tracks DMs, thread replies and mentions; one record when a mention also arrives as a message', async () => {
    const app = await start((a) => {
      a.event('app_mention', async ({ say }) => {
        await say('You rang?')
      })
    })
    await app.sendEvent(messageEvent('D1', 'psst', { channel_type: 'im', ts: '1700000001.000001' }))
    await app.sendEvent(messageEvent('C1', 'in thread', { ts: '1700000002.000002', thread_ts: '1700000000.000100' }))
    const mention = {
      type: 'app_mention',
      channel: 'C1',
      user: 'U1',
      text: `<@${BOT_USER_ID}> help`,
      ts: '1700000003.000003',
      team: 'T1',
    }
    await app.sendEvent(mention)
    await app.sendEvent({ ...mention, type: 'message', channel_type: 'channel' })

    expect((await delivered()).map((r) => [r.type, r.body.message])).toEqual([
      ['incoming', { type: 'message', channel: 'D1', user: 'U1', text: 'psst', ts: '1700000001.000001', team: 'T1' }],
      [
        'incoming',
        { type: 'message', channel: 'C1', user: 'U1', text: 'in thread', ts: '1700000002.000002', team: 'T1' },
      ],
      [
        'incoming',
        {
          type: 'app_mention',
          channel: 'C1',
          user: 'U1',
          text: `<@${BOT_USER_ID}> help`,
          ts: '1700000003.000003',
          team: 'T1',
        },
      ],
      ['outgoing', { type: 'message', text: 'You rang?', channel: 'C1' }],
    ])
  })
})

describe('outgoing', () => {
  it('tracks client.chat.postMessage with the intent set in the listener, and NotHandled on the incoming', async () => {
    const app = await start((a) => {
      a.message(/order/, async ({ client, message }) => {
        tracker.setOutgoingIntent({
          name: 'order.confirm',
          inputs: [{ name: 'item', value: 'pizza' }],
          confidence: 0.9,
        })
        await client.chat.postMessage({
          channel: 'C2',
          text: 'Order for pizza placed',
          thread_ts: (message as { ts: string }).ts,
        })
      })
      a.message(/gibberish/, async ({ say }) => {
        tracker.setNotHandled()
        await say('Sorry, I did not get that')
      })
    })
    await app.sendEvent(messageEvent('C1', 'order pizza'))
    await app.sendEvent(messageEvent('C3', 'gibberish', { ts: '1700000009.000009' }))

    expect(await delivered()).toEqual([
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: {
          type: 'message',
          channel: 'C1',
          user: 'U1',
          text: 'order pizza',
          ts: '1700000000.000100',
          team: 'T1',
        },
      }),
      wire('outgoing', {
        team: TEAM,
        bot: BOT,
        message: { type: 'message', text: 'Order for pizza placed', channel: 'C2' },
        intent: { name: 'order.confirm', inputs: [{ name: 'item', value: 'pizza' }], confidence: 0.9 },
      }),
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: { type: 'message', channel: 'C3', user: 'U1', text: 'gibberish', ts: '1700000009.000009', team: 'T1' },
        intent: { name: 'NotHandled' },
      }),
      wire('outgoing', {
        team: TEAM,
        bot: BOT,
        message: { type: 'message', text: 'Sorry, I did not get that', channel: 'C3' },
      }),
    ])
  })

  it('does not track messages the app sends outside any event', async () => {
    const app = await start(() => {})
    await app.app.client.chat.postMessage({ channel: 'C1', text: 'cron job says hi' })
    await app.sendEvent(messageEvent('C1', 'hello'))
    expect((await delivered()).map((r) => r.type)).toEqual(['incoming'])
    expect(api.posted).toHaveLength(1)
  })

  it('tracks a message sent after the listener returned (a timer it started) as it happens', async () => {
    let sentLater!: Promise<unknown>
    const app = await start((a) => {
      a.message('later', async ({ say }) => {
        tracker.setOutgoingIntent({ name: 'reminder' })
        sentLater = new Promise((resolve) => setTimeout(() => resolve(say('Reminder!')), 30))
      })
    })
    await app.sendEvent(messageEvent('C1', 'later'))
    await sentLater
    expect((await delivered()).map((r) => [r.type, r.body.message.text, r.body.intent])).toEqual([
      ['incoming', 'later', undefined],
      ['outgoing', 'Reminder!', { name: 'reminder' }],
    ])
  })
})

describe('block_actions (button click) and respond()', () => {
  it('tracks the click as an incoming record carrying the action, and respond() as outgoing', async () => {
    const responseUrl = await startResponseUrlServer()
    try {
      const app = await start((a) => {
        a.action('approve', async ({ ack, respond }) => {
          await ack()
          tracker.setOutgoingIntent({ name: 'approval.done' })
          await respond({ text: 'Approved ✅', replace_original: true })
        })
      })
      const action = {
        type: 'button',
        action_id: 'approve',
        block_id: 'b1',
        text: { type: 'plain_text', text: 'Approve', emoji: true },
        value: 'req-42',
        action_ts: '1700000050.123456',
      }
      const res = await app.sendInteraction({
        type: 'block_actions',
        token: 'verification-token',
        team: { id: 'T1', domain: 'acme' },
        user: { id: 'U1', username: 'ann', name: 'ann', team_id: 'T1' },
        api_app_id: 'A1',
        container: { type: 'message', message_ts: '1700000040.000001', channel_id: 'C1', is_ephemeral: false },
        trigger_id: '123.456.abc',
        channel: { id: 'C1', name: 'general' },
        message: { type: 'message', text: 'Approve request 42?', ts: '1700000040.000001' },
        response_url: responseUrl.url,
        actions: [action],
      })
      expect(res.status).toBe(200)
      expect(responseUrl.bodies).toEqual([{ text: 'Approved ✅', replace_original: true }])
      expect(await delivered()).toEqual([
        wire('incoming', {
          team: TEAM,
          bot: BOT,
          message: {
            type: 'block_actions',
            channel: 'C1',
            user: 'U1',
            text: 'Approve',
            ts: '1700000050.123456',
            team: 'T1',
            actions: [action],
          },
        }),
        wire('outgoing', {
          team: TEAM,
          bot: BOT,
          message: { type: 'message', text: 'Approved ✅', channel: 'C1' },
          intent: { name: 'approval.done' },
        }),
      ])
      expect(app.errors).toEqual([])
    } finally {
      await responseUrl.close()
    }
  })
})

describe('slash commands', () => {
  it('are not incoming messages, but what the app sends for them (respond, say) is tracked in their channel', async () => {
    const responseUrl = await startResponseUrlServer()
    try {
      const app = await start((a) => {
        a.command('/weather', async ({ ack, respond, say, command }) => {
          await ack()
          await respond(`Sunny in ${command.text}`)
          await say('Anyone else want a forecast?')
        })
      })
      const res = await app.sendCommand({
        token: 'verification-token',
        team_id: 'T1',
        team_domain: 'acme',
        channel_id: 'C5',
        channel_name: 'random',
        user_id: 'U1',
        user_name: 'ann',
        command: '/weather',
        text: 'Paris',
        api_app_id: 'A1',
        response_url: responseUrl.url,
        trigger_id: '1.2.3',
      })
      expect(res.status).toBe(200)
      expect(await delivered()).toEqual([
        wire('outgoing', { team: TEAM, bot: BOT, message: { type: 'message', text: 'Sunny in Paris', channel: 'C5' } }),
        wire('outgoing', {
          team: TEAM,
          bot: BOT,
          message: { type: 'message', text: 'Anyone else want a forecast?', channel: 'C5' },
        }),
      ])
    } finally {
      await responseUrl.close()
    }
  })
})

describe('ignored subtypes', () => {
  const others = [
    messageEvent('C1', 'beep', { subtype: 'bot_message', bot_id: 'BOTHER', user: undefined, username: 'other-bot' }),
    {
      type: 'message',
      subtype: 'message_changed',
      channel: 'C1',
      hidden: true,
      ts: '1700000010.000001',
      message: { type: 'message', user: 'U1', text: 'edited', ts: '1700000000.000100' },
    },
    {
      type: 'message',
      subtype: 'message_deleted',
      channel: 'C1',
      hidden: true,
      ts: '1700000011.000001',
      deleted_ts: '1700000000.000100',
    },
    messageEvent('C1', '<@U1> has joined the channel', { subtype: 'channel_join', ts: '1700000012.000001' }),
  ]

  it('does not log bot messages, edits, deletions or joins as user messages; listeners still get them', async () => {
    const seen: string[] = []
    const app = await start((a) => {
      a.event('message', async ({ event }) => {
        seen.push((event as { subtype?: string }).subtype ?? 'none')
      })
    })
    for (const event of others) await app.sendEvent(event)
    await app.sendEvent(messageEvent('C1', 'a real one', { ts: '1700000013.000001' }))
    expect(seen).toEqual(['bot_message', 'message_changed', 'message_deleted', 'channel_join', 'none'])
    expect((await delivered()).map((r) => r.body.message.text)).toEqual(['a real one'])
  })

  it('is configurable with trackMessage', async () => {
    const app = await start(() => {}, { trackMessage: (e) => e.subtype === 'bot_message' })
    for (const event of others) await app.sendEvent(event)
    expect(await delivered()).toEqual([
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: { type: 'message', channel: 'C1', text: 'beep', ts: '1700000000.000100', team: 'T1' },
      }),
    ])
  })
})

describe('pause (key: the channel id)', () => {
  it('tracks the message but runs no listener while paused; answers again after unpause', async () => {
    let runs = 0
    const app = await start((a) => {
      a.message(async ({ say }) => {
        runs++
        await say('bot here')
      })
    })
    await tracker.pauses.setPaused('C1', true)
    await tracker.pauses.setPaused('U1', true) // a user id is not the Slack pause key
    await app.sendEvent(messageEvent('C1', 'is a human there?', { ts: '1700000020.000001' }))
    expect(runs).toBe(0)
    expect(api.posted).toEqual([])

    await tracker.pauses.setPaused('C1', false)
    await app.sendEvent(messageEvent('C1', 'bot again?', { ts: '1700000021.000001' }))
    expect(runs).toBe(1)

    expect(await delivered()).toEqual([
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: {
          type: 'message',
          channel: 'C1',
          user: 'U1',
          text: 'is a human there?',
          ts: '1700000020.000001',
          team: 'T1',
        },
      }),
      wire('incoming', {
        team: TEAM,
        bot: BOT,
        message: {
          type: 'message',
          channel: 'C1',
          user: 'U1',
          text: 'bot again?',
          ts: '1700000021.000001',
          team: 'T1',
        },
      }),
      wire('outgoing', { team: TEAM, bot: BOT, message: { type: 'message', text: 'bot here', channel: 'C1' } }),
    ])
  })

  it('acks a paused button click itself so Slack shows no error, and runs no listener', async () => {
    let runs = 0
    const app = await start((a) => {
      a.action('approve', async ({ ack }) => {
        runs++
        await ack()
      })
    })
    await tracker.pauses.setPaused('C1', true)
    const res = await app.sendInteraction({
      type: 'block_actions',
      team: { id: 'T1' },
      user: { id: 'U1', team_id: 'T1' },
      channel: { id: 'C1' },
      actions: [
        {
          type: 'button',
          action_id: 'approve',
          value: 'x',
          text: { type: 'plain_text', text: 'Go' },
          action_ts: '1700000060.000001',
        },
      ],
    })
    expect(res.status).toBe(200)
    expect(runs).toBe(0)
    expect((await delivered()).map((r) => [r.type, r.body.message.text])).toEqual([['incoming', 'Go']])
  })
})

describe('concurrency', () => {
  it('200 concurrent events from different channels keep their own intents and replies', async () => {
    const n = 200
    const app = await start(
      (a) => {
        a.message(async ({ message, say }) => {
          const m = message as { channel: string; text: string }
          const i = Number(m.text.split(' ')[1])
          await new Promise((r) => setTimeout(r, (i * 7) % 23)) // interleave the turns
          tracker.setOutgoingIntent({ name: `intent-${i}` })
          if (i % 2 === 0) tracker.setNotHandled()
          await new Promise((r) => setTimeout(r, (i * 13) % 17))
          await say(`reply ${i}`)
        })
      },
      {},
      { processBeforeResponse: false },
    )
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        app.sendEvent(messageEvent(`C${i}`, `msg ${i}`, { ts: `1700000000.${String(i).padStart(6, '0')}` })),
      ),
    )
    expect(results.every((r) => r.status === 200)).toBe(true)
    await sink.waitFor(2 * n)
    const records = await delivered()
    expect(records).toHaveLength(2 * n)
    for (let i = 0; i < n; i++) {
      const incoming = records.filter((r) => r.type === 'incoming' && r.body.message.channel === `C${i}`)
      const outgoing = records.filter((r) => r.type === 'outgoing' && r.body.message.channel === `C${i}`)
      expect(incoming.map((r) => r.body)).toEqual([
        {
          team: TEAM,
          bot: BOT,
          message: {
            type: 'message',
            channel: `C${i}`,
            user: 'U1',
            text: `msg ${i}`,
            ts: `1700000000.${String(i).padStart(6, '0')}`,
            team: 'T1',
          },
          ...(i % 2 === 0 ? { intent: { name: 'NotHandled' } } : {}),
        },
      ])
      expect(outgoing.map((r) => r.body)).toEqual([
        {
          team: TEAM,
          bot: BOT,
          message: { type: 'message', text: `reply ${i}`, channel: `C${i}` },
          intent: { name: `intent-${i}` },
        },
      ])
    }
    expect(api.posted).toHaveLength(n)
    expect(api.teamInfoCalls).toEqual(['T1']) // one lookup for the team, however many events
    expect(app.errors).toEqual([])
  })
})

describe('concurrency of respond()', () => {
  it('50 concurrent button clicks: each respond() is credited to its own click', async () => {
    const responseUrl = await startResponseUrlServer()
    try {
      const app = await start(
        (a) => {
          a.action('pick', async ({ ack, respond, body }) => {
            await ack()
            const channel = (body as { channel: { id: string } }).channel.id
            await new Promise((r) => setTimeout(r, Number(channel.slice(1)) % 11))
            tracker.setOutgoingIntent({ name: `picked-${channel}` })
            await respond(`you picked in ${channel}`)
          })
        },
        {},
        { processBeforeResponse: false },
      )
      const n = 50
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          app.sendInteraction({
            type: 'block_actions',
            team: { id: 'T1' },
            user: { id: `U${i}`, team_id: 'T1' },
            channel: { id: `C${i}` },
            response_url: `${responseUrl.url}/${i}`,
            actions: [
              {
                type: 'button',
                action_id: 'pick',
                value: `v${i}`,
                text: { type: 'plain_text', text: `Pick ${i}` },
                action_ts: `1700000070.${i}`,
              },
            ],
          }),
        ),
      )
      await sink.waitFor(2 * n)
      const records = await delivered()
      for (let i = 0; i < n; i++) {
        const mine = records
          .filter((r) => r.body.message.channel === `C${i}`)
          .map((r) => [r.type, r.body.message.text, r.body.intent])
        expect(mine).toEqual([
          ['incoming', `Pick ${i}`, undefined],
          ['outgoing', `you picked in C${i}`, { name: `picked-C${i}` }],
        ])
      }
      expect(responseUrl.bodies).toHaveLength(n)
    } finally {
      await responseUrl.close()
    }
  })
})

describe('never hurts the bot', () => {
  it('a listener error reaches Bolt’s error handler unchanged, and the message is still tracked', async () => {
    const boom = new Error('listener exploded')
    const app = await start((a) => {
      a.message(async ({ say }) => {
        await say('about to fail')
        throw boom
      })
    })
    await app.sendEvent(messageEvent('C1', 'trigger'))
    expect(app.errors).toHaveLength(1)
    // Bolt wraps what reaches its handler in a coded error; the listener's own error is inside, untouched
    expect(app.errors[0]).toMatchObject({ code: 'slack_bolt_unknown_error', message: 'listener exploded' })
    expect((app.errors[0] as Error & { original?: unknown }).original).toBe(boom)
    expect((await delivered()).map((r) => [r.type, r.body.message.text])).toEqual([
      ['incoming', 'trigger'],
      ['outgoing', 'about to fail'],
    ])
  })

  it('a tracking service answering 500, then down, never rejects event handling', async () => {
    let runs = 0
    const app = await start((a) => {
      a.message(async ({ say }) => {
        runs++
        await say('still here')
      })
    })
    sink.faults = { status: 500 }
    await app.sendEvent(messageEvent('C1', 'one', { ts: '1700000030.000001' }))
    expect((await flushSlackTracking(tracker, 3000)).failed).toBe(2) // both records, after maxAttempts
    expect(reported.map((e) => e.name)).toEqual(['TransportError', 'TransportError'])

    sink.faults = {}
    await sink.down()
    try {
      await app.sendEvent(messageEvent('C1', 'two', { ts: '1700000031.000001' }))
      const result = await flushSlackTracking(tracker, 500)
      expect(result).toMatchObject({ delivered: false, pending: 2 }) // held while the service is unreachable
    } finally {
      await sink.up()
    }
    expect(runs).toBe(2)
    expect(api.posted.map((p) => p.text)).toEqual(['still here', 'still here'])
    expect(app.errors).toEqual([])
    // once the service is back, the held records arrive (retries may reorder them)
    expect((await delivered()).map((r) => [r.type, r.body.message.text]).sort()).toEqual([
      ['incoming', 'two'],
      ['outgoing', 'still here'],
    ])
  })

  it('a failing pause store counts as not paused; the bot answers', async () => {
    await tracker.close()
    tracker = createTracker({
      apiKey: 'test-key',
      baseUrl: sink.url,
      onError: (e) => reported.push(e),
      pauses: {
        isPaused: async () => {
          throw new Error('redis down')
        },
        setPaused: async () => {},
      },
    })
    const app = await start((a) => {
      a.message(async ({ say }) => {
        await say('answering')
      })
    })
    await app.sendEvent(messageEvent('C1', 'hello'))
    expect(api.posted.map((p) => p.text)).toEqual(['answering'])
    expect(reported.map((e) => e.message).join()).toContain('redis down')
    expect(app.errors).toEqual([])
  })

  it('records after close() are counted as dropped `closed` and reported, never thrown into Bolt', async () => {
    const app = await start((a) => {
      a.message(async ({ say }) => {
        await say('fine')
      })
    })
    await tracker.close()
    await app.sendEvent(messageEvent('C1', 'hello'))
    expect(api.posted.map((p) => p.text)).toEqual(['fine'])
    expect(app.errors).toEqual([])
    await tracker.flush(3000) // the team name lookup hands the records over
    expect(reported.filter((e) => (e as { code?: string }).code === 'dropped_closed')).toHaveLength(2) // the message and the reply
    expect(tracker.stats().droppedByReason.closed).toBe(2)
  })
})

describe('team names', () => {
  /** team.info answers only when the test says so. */
  function slowTeamInfo(): { answer(): void } {
    let answer!: () => void
    const gate = new Promise<void>((resolve) => {
      answer = resolve
    })
    nock.cleanAll()
    api = fakeSlackApi({ teamNames: { T1: 'Slow Team' }, teamInfoGate: gate })
    return { answer }
  }

  /**
   * A bot that answers "hi" with say('quick') for a team whose team.info answers when the
   * returned `answer()` is called; resolves right after the listener (and the tracking
   * middleware) returned.
   */
  async function helloFromSlowTeam(): Promise<{ answer(): void }> {
    const teamInfo = slowTeamInfo()
    let listenerDone!: () => void
    const returned = new Promise<void>((resolve) => {
      listenerDone = resolve
    })
    const app = await start((a) => {
      a.message(async ({ say }) => {
        await say('quick')
        setImmediate(listenerDone)
      })
    })
    void app.sendEvent(messageEvent('C1', 'hi'))
    await returned
    return teamInfo
  }

  it('the first event of a team waits on a slow team.info: flush() right after the listener returns includes both records', async () => {
    const teamInfo = await helloFromSlowTeam()
    expect(sink.records).toHaveLength(0) // still waiting for the team's name
    const flushed = tracker.flush(20_000)
    teamInfo.answer()
    const result = await flushed
    expect(result).toMatchObject({ delivered: true, pending: 0, held: 0, sent: 2 })
    expect(sink.records.map((r) => [r.type, r.body.team])).toEqual([
      ['incoming', { id: 'T1', name: 'Slow Team' }],
      ['outgoing', { id: 'T1', name: 'Slow Team' }],
    ])
  })

  it('the same with close(): both records are delivered before it returns', async () => {
    const teamInfo = await helloFromSlowTeam()
    const closed = tracker.close(20_000)
    teamInfo.answer()
    const result = await closed
    expect(result).toMatchObject({ delivered: true, pending: 0, held: 0, sent: 2 })
    expect(sink.records.map((r) => r.type)).toEqual(['incoming', 'outgoing'])
  })

  it('close() before a slow team.info answers: the held records are counted, not lost silently', async () => {
    const teamInfo = await helloFromSlowTeam()
    const result = await tracker.close(100)
    expect(result).toMatchObject({ delivered: false, held: 2 }) // the message and the reply, waiting for the name
    teamInfo.answer() // the lookup answers: its records arrive after close
    await tracker.flush(20_000)
    expect(tracker.stats().droppedByReason.closed).toBe(2)
    expect(sink.records).toHaveLength(0)
  })

  it('never delays the ack: team.info is asked after the listeners, and records wait for the name', async () => {
    const teamInfo = slowTeamInfo()
    const app = await start((a) => {
      a.message(async ({ say }) => {
        await say('quick')
      })
    })
    // processBeforeResponse: true — the HTTP answer waits for the whole middleware chain; team.info
    // answers only after that answer arrived (were the ack waiting on it, this would never resolve).
    const { status } = await app.sendEvent(messageEvent('C1', 'hi'))
    expect(status).toBe(200)
    expect(sink.records).toHaveLength(0)
    teamInfo.answer()
    const records = await delivered()
    expect(records.map((r) => r.body.team)).toEqual([
      { id: 'T1', name: 'Slow Team' },
      { id: 'T1', name: 'Slow Team' },
    ])
  })

  it('falls back to the team id when team.info fails (missing scope), and reports it', async () => {
    nock.cleanAll()
    api = fakeSlackApi({ teamInfoStatus: 'missing_scope' })
    const app = await start(() => {})
    await app.sendEvent(messageEvent('C1', 'hi'))
    await app.sendEvent(messageEvent('C1', 'again', { ts: '1700000040.000001' }))
    expect((await delivered()).map((r) => r.body.team)).toEqual([
      { id: 'T1', name: 'T1' },
      { id: 'T1', name: 'T1' },
    ])
    expect(api.teamInfoCalls).toEqual(['T1'])
    expect(reported.some((e) => /team\.info failed/.test(e.message))).toBe(true)
  })

  it('uses the id without asking when teamNames is false', async () => {
    const app = await start(() => {}, { teamNames: false })
    await app.sendEvent(messageEvent('C1', 'hi'))
    expect((await delivered()).map((r) => r.body.team)).toEqual([{ id: 'T1', name: 'T1' }])
    expect(api.teamInfoCalls).toEqual([])
  })
})
