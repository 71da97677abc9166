import { type HookMessage, type MessengerHook, receive, send } from '@convotrack/messenger'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { waitOptions } from '../../../test/support/wait-options'
import { type Harness, harness, PAGE_ID, textItem } from './helpers'

let h: Harness
beforeEach(async () => {
  h = await harness({ concurrency: 1 })
})
afterEach(() => h.close())

/**
 * A receive/send pipeline of the `(bot, message, next)` kind (Botkit's `ware`): each hook
 * calls next() to go on; after the last one the handler runs.
 */
function pipeline(hooks: MessengerHook[], handler: (message: HookMessage) => void) {
  return (bot: unknown, message: HookMessage) => {
    let i = 0
    const next = (error?: unknown) => {
      if (error) throw error
      const hook = hooks[i++]
      if (hook) hook(bot, message, next)
      else handler(message)
    }
    next()
  }
}

/** A bot with receive hooks (an NLU step, then ours) and a send pipeline with ours. */
function botkitLike(onMessage: (message: HookMessage, reply: (m: HookMessage) => void) => void, nlu?: MessengerHook) {
  const sent: HookMessage[] = []
  const handled: HookMessage[] = []
  const bot = {}
  const reply = pipeline([send(h.tracker)], (m) => sent.push(m))
  const ingest = pipeline([...(nlu ? [nlu] : []), receive(h.tracker)], (message) => {
    handled.push(message)
    onMessage(message, (m) => reply(bot, m))
  })
  return { ingest: (m: HookMessage) => ingest(bot, m), sent, handled }
}

describe('receive / send hooks', () => {
  it('tracks the messaging item with the NLU intent, then the reply with the turn’s outgoing intent', async () => {
    const nlu: MessengerHook = (_bot, message, next) => {
      message.intent = { name: 'order_status', inputs: [{ name: 'order', value: '1234' }], confidence: 0.8 }
      next()
    }
    const bot = botkitLike((message, reply) => {
      h.tracker.setOutgoingIntent({ name: 'order_status_reply' })
      reply({ recipient: { id: (message.sender as { id: string }).id }, message: { text: 'Order 1234 ships today' } })
    }, nlu)
    const item = textItem('USER_H', 'where is order 1234?')
    bot.ingest(structuredClone(item))
    await vi.waitFor(() => expect(bot.sent).toHaveLength(1), waitOptions)
    const records = await h.records()
    expect(records.map((r) => r.body)).toEqual([
      {
        object: 'page',
        entry: [
          {
            id: PAGE_ID,
            time: item.timestamp,
            messaging: [
              {
                ...item,
                intent: { name: 'order_status', inputs: [{ name: 'order', value: '1234' }], confidence: 0.8 },
              },
            ],
          },
        ],
      },
      {
        uri: 'https://graph.facebook.com/v21.0/me/messages',
        method: 'POST',
        qs: { access_token: '' },
        json: { recipient: { id: 'USER_H' }, message: { text: 'Order 1234 ships today' } },
        responseBody: {},
        intent: { name: 'order_status_reply' },
      },
    ])
  })

  it('a Botkit-style message: the raw Messenger event is tracked, a string intent becomes {name}; Botkit replies are converted', async () => {
    const bot = botkitLike((message, reply) => {
      reply({
        channel: message.channel,
        text: 'Hi there',
        quick_replies: [{ content_type: 'text', title: 'Menu', payload: 'MENU' }],
      })
    })
    const raw = textItem('USER_K', 'hey')
    bot.ingest({
      type: 'message_received',
      user: 'USER_K',
      channel: 'USER_K',
      text: 'hey',
      ...raw,
      raw_message: raw,
      intent: 'smalltalk.greet',
    })
    await vi.waitFor(() => expect(bot.sent).toHaveLength(1), waitOptions)
    const records = await h.records()
    expect(records[0]?.body.entry[0].messaging).toEqual([{ ...raw, intent: { name: 'smalltalk.greet' } }])
    expect(records[1]?.body.json).toEqual({
      recipient: { id: 'USER_K' },
      message: { text: 'Hi there', quick_replies: [{ content_type: 'text', title: 'Menu', payload: 'MENU' }] },
    })
  })

  it('paused: the message is tracked and next() is not called; unpaused it runs', async () => {
    const bot = botkitLike((message, reply) => reply({ channel: message.channel, text: 'ok' }))
    await h.tracker.pauses.setPaused('USER_P', true)
    bot.ingest({ ...textItem('USER_P', 'hello?'), channel: 'USER_P' })
    // The hook tracks the message and decides in the same step: once the record is there, next()
    // would have run.
    await vi.waitFor(async () => expect(await h.records()).toHaveLength(1), waitOptions)
    expect(bot.handled).toEqual([])
    await h.tracker.pauses.setPaused('USER_P', false)
    bot.ingest({ ...textItem('USER_P', 'again', 1_700_000_009_000), channel: 'USER_P' })
    await vi.waitFor(() => expect(bot.sent).toHaveLength(1), waitOptions)
    expect(bot.handled).toHaveLength(1)
    expect((await h.records()).map((r) => r.type)).toEqual(['incoming', 'incoming', 'outgoing'])
  })

  it('sender actions are not tracked; a message the hooks cannot read is reported and the pipeline goes on', async () => {
    const bot = botkitLike((_message, reply) => {
      reply({ recipient: { id: 'USER_X' }, sender_action: 'typing_on' })
      reply({ text: 'no recipient at all' })
    })
    bot.ingest({ text: 'not a Messenger event' })
    await vi.waitFor(() => expect(bot.sent).toHaveLength(2), waitOptions)
    expect(bot.handled).toHaveLength(1)
    expect(bot.sent).toHaveLength(2)
    expect(h.errors.map((e) => e.code)).toEqual(['invalid_record', 'invalid_record'])
    expect(h.errors[0]?.message).toMatch(/sender/)
    expect(h.errors[1]?.message).toMatch(/json\.recipient/)
    expect(await h.records()).toEqual([])
  })
})
