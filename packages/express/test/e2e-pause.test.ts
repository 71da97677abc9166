/**
 * The whole flow (issue 7): two instances of one bot — two Express apps, each with its own
 * tracker and a universal-path bot, sharing pause state in ONE real redis-server. A signed
 * pause webhook delivered to one instance silences that user on both; forged, stale or
 * replayed deliveries change nothing; an unpause lets both answer again. Messages are tracked
 * all along (a real sink), replies only while not paused.
 */
import { createTracker, generateWebhookSecret, pauseKey, signPauseWebhook, type Tracker } from '@convotrack/core'
import { captureRawBody, pauseReceiver } from '@convotrack/express'
import { RedisPauseStore, RedisReplayGuard } from '@convotrack/redis'
import express from 'express'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Sink, startSink } from '../../../test/support/sink-server'
import { type RedisServer, startRedisServer } from '../../redis/test/redis-server'
import { type Served, send, serve } from './support'

const secret = generateWebhookSecret()
const PREFIX = 'e2e-bot:pause:'

interface Instance {
  name: string
  /** Problems reported by the store and the receiver (through their onError). */
  errors: Error[]
  url: string
  tracker: Tracker
  store: RedisPauseStore
  say(userId: string, text: string, conversationId?: string): Promise<string[]>
  close(): Promise<void>
}

/** One instance of the bot: its own tracker, Redis connection, Express app and port. */
async function startInstance(name: string, sink: Sink, redisPort: number, localCacheMs: number): Promise<Instance> {
  const errors: Error[] = []
  const onError = (e: Error) => errors.push(e)
  const redis = new Redis(redisPort, '127.0.0.1')
  redis.on('error', () => {}) // connection errors surface through the store's onError
  // Generous Redis timeouts: on a loaded machine a round trip can outlast the 500 ms default, and
  // the store would then answer "not paused" (fail open) where the test expects a pause.
  const store = new RedisPauseStore(redis, { prefix: PREFIX, localCacheMs, onError, timeoutMs: 5_000 })
  const tracker = createTracker({ apiKey: 'test-key', baseUrl: sink.url, pauses: store })
  const app = express()
  app.use(express.json({ verify: captureRawBody })) // a global parser: the receiver uses the kept bytes
  app.post(
    '/convotrack/pause',
    pauseReceiver({
      store: tracker.pauses,
      secret,
      replayGuard: new RedisReplayGuard(redis, { timeoutMs: 10_000 }),
      onError,
    }),
  )
  app.post('/chat', async (req, res) => {
    const { userId, text, conversationId } = req.body as { userId: string; text: string; conversationId?: string }
    const replies = await tracker.withTurn(async () => {
      tracker.universal.logIncoming({ userId, text, conversationId })
      if (await tracker.isPaused(pauseKey({ userId, conversationId }))) return [] // a person has taken over
      const reply = `${name} heard: ${text}`
      tracker.universal.logOutgoing({ userId, text: reply, conversationId })
      return [reply]
    })
    res.json({ replies })
  })
  const served: Served = await serve(app)
  return {
    name,
    errors,
    url: served.url,
    tracker,
    store,
    async say(userId, text, conversationId) {
      const res = await send(`${served.url}/chat`, {
        body: JSON.stringify({ userId, text, conversationId }),
        headers: { 'content-type': 'application/json' },
      })
      return (res.json() as { replies: string[] }).replies
    },
    async close() {
      await served.close()
      await tracker.close()
      await store.close()
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

async function deliver(to: Instance, body: string, headers: Record<string, string>) {
  return send(`${to.url}/convotrack/pause`, { body, headers })
}
/**
 * Polls until `fn` holds; returns how long it took (the cross-instance propagation, printed, not
 * asserted: a loaded machine only makes it slower). Gives up after a long, speed-independent while.
 */
async function eventually(fn: () => Promise<boolean>): Promise<number> {
  const start = performance.now()
  await vi.waitFor(
    async () => {
      if (!(await fn())) throw new Error('not true yet')
    },
    { timeout: 60_000, interval: 1 },
  )
  return performance.now() - start
}

let redisServer: RedisServer
let sink: Sink
let a: Instance
let b: Instance

beforeAll(async () => {
  redisServer = await startRedisServer()
  sink = await startSink()
  // with a local cache (invalidated by pub/sub) far longer than any wait: only pub/sub can update it
  a = await startInstance('A', sink, redisServer.port, 3_600_000)
  b = await startInstance('B', sink, redisServer.port, 0) // one PTTL per message
  // let A's invalidation subscriber come up
  await eventually(async () => (a.store as unknown as { subscribed: boolean }).subscribed)
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await sink?.close()
  await redisServer?.stop()
})

describe('pause across two instances sharing one Redis', () => {
  it('signed pause to one instance → neither answers that user; forged/stale/replayed change nothing; unpause → both answer', async () => {
    // Both answer, and A has cached "not paused" for u1.
    expect(await a.say('u1', 'hello')).toEqual(['A heard: hello'])
    expect(await b.say('u1', 'hello')).toEqual(['B heard: hello'])

    // The operator pauses u1: the service calls ONE instance (B).
    const pauseBody = JSON.stringify({ userId: 'u1', paused: true })
    const pauseHeaders = {
      'content-type': 'application/json',
      ...signPauseWebhook({ secret, body: pauseBody, id: 'msg_pause_1' }),
    }
    const paused = await deliver(b, pauseBody, pauseHeaders)
    expect(paused.status).toBe(200)
    expect(paused.text).toBe('OK')

    expect(await b.say('u1', 'anyone there?')).toEqual([])
    const propagation = await eventually(async () => (await a.say('u1', 'hello?')).length === 0)
    console.log(`[e2e] pause reached instance A's cache ${propagation.toFixed(1)} ms after B acknowledged the webhook`)
    expect(await a.say('u1', 'still there?')).toEqual([])
    // Others are not affected.
    expect(await a.say('u2', 'hi')).toEqual(['A heard: hi'])
    expect(await b.say('u2', 'hi')).toEqual(['B heard: hi'])

    // A forged unpause (wrong secret) to A, and a stale one (6 minutes old) to B: 401, still paused.
    const unpauseBody = JSON.stringify({ userId: 'u1', paused: false })
    const forged = await deliver(a, unpauseBody, {
      'content-type': 'application/json',
      ...signPauseWebhook({ secret: generateWebhookSecret(), body: unpauseBody }),
    })
    expect(forged.status).toBe(401)
    const stale = await deliver(b, unpauseBody, {
      'content-type': 'application/json',
      ...signPauseWebhook({ secret, body: unpauseBody, timestamp: Math.floor(Date.now() / 1000) - 360 }),
    })
    expect(stale.status).toBe(401)
    // A tampered body under a valid signature of another body.
    expect((await deliver(a, unpauseBody, pauseHeaders)).status).toBe(401)
    expect(await a.say('u1', 'hello?')).toEqual([])
    expect(await b.say('u1', 'hello?')).toEqual([])

    // The operator unpauses: the service calls the OTHER instance (A) this time.
    const unpaused = await deliver(a, unpauseBody, {
      'content-type': 'application/json',
      ...signPauseWebhook({ secret, body: unpauseBody, id: 'msg_unpause_1' }),
    })
    expect(unpaused.status).toBe(200)
    expect(await a.say('u1', 'back?')).toEqual(['A heard: back?'])
    expect(await b.say('u1', 'back?')).toEqual(['B heard: back?'])

    // The captured pause replayed (within 5 minutes) to either instance: ignored by the shared replay guard.
    for (const target of [a, b]) {
      const replay = await deliver(target, pauseBody, pauseHeaders)
      expect(replay.status).toBe(200)
      expect(replay.text).toBe('OK (already processed)')
    }
    expect(await a.say('u1', 'ok')).toEqual(['A heard: ok'])
    expect(await b.say('u1', 'ok')).toEqual(['B heard: ok'])

    // Everything the user said was tracked, paused or not; replies only when the bot answered.
    await a.tracker.flush()
    await b.tracker.flush()
    const u1 = sink.records.filter((r) => r.body?.userId === 'u1')
    const incoming = u1.filter((r) => r.type === 'incoming').map((r) => r.body.text)
    const outgoing = u1.filter((r) => r.type === 'outgoing').map((r) => r.body.text)
    expect(incoming.filter((t) => t === 'anyone there?' || t === 'still there?')).toEqual([
      'anyone there?',
      'still there?',
    ])
    expect(incoming.filter((t) => t === 'hello?').length).toBeGreaterThanOrEqual(3)
    expect(outgoing.sort()).toEqual(
      ['A heard: back?', 'A heard: hello', 'A heard: ok', 'B heard: back?', 'B heard: hello', 'B heard: ok'].sort(),
    )
    for (const r of u1) {
      expect(r).toMatchObject({ platform: 'universal', v: '11.1.0-rest', apiKey: 'test-key' })
      expect(r.body).toEqual({ userId: 'u1', text: r.body.text })
    }
  })

  it('the conversation id is the pause key when one is sent', async () => {
    expect(await a.say('u7', 'hi', 'conv-7')).toEqual(['A heard: hi'])
    const body = JSON.stringify({ userId: 'conv-7', paused: true })
    expect(
      (await deliver(a, body, { 'content-type': 'application/json', ...signPauseWebhook({ secret, body }) })).status,
    ).toBe(200)
    expect(await a.say('u7', 'hi', 'conv-7')).toEqual([])
    expect(await b.say('u7', 'hi', 'conv-7')).toEqual([])
    expect(await b.say('u7', 'hi')).toEqual(['B heard: hi']) // outside that conversation
    const unpause = JSON.stringify({ userId: 'conv-7', paused: false })
    expect(
      (
        await deliver(b, unpause, {
          'content-type': 'application/json',
          ...signPauseWebhook({ secret, body: unpause }),
        })
      ).status,
    ).toBe(200)
    await eventually(async () => (await a.say('u7', 'hi', 'conv-7')).length === 1)
    expect(await b.say('u7', 'hi', 'conv-7')).toEqual(['B heard: hi'])
  })

  it('Redis down: both instances keep answering (fail open); pausing works again once Redis is back', async () => {
    await redisServer.stop()
    a.errors.length = 0
    b.errors.length = 0
    expect(await a.say('u9', 'hello')).toEqual(['A heard: hello'])
    expect(await b.say('u9', 'hello')).toEqual(['B heard: hello'])
    expect(a.errors.length).toBeGreaterThan(0) // reported, not silent
    expect(b.errors.length).toBeGreaterThan(0)
    // A pause can't be stored: 503, so the service retries.
    const body = JSON.stringify({ userId: 'u9', paused: true })
    const headers = { 'content-type': 'application/json', ...signPauseWebhook({ secret, body }) }
    expect((await deliver(a, body, headers)).status).toBe(503)

    await redisServer.start()
    // The retry of that same delivery succeeds once Redis answers again.
    await eventually(async () => (await deliver(a, body, headers)).status !== 503)
    // B's own Redis connection may still be reconnecting (503, so the service would retry); once it
    // is back, the same delivery is recognised as already applied, not applied twice.
    await eventually(async () => (await deliver(b, body, headers)).status !== 503)
    expect((await deliver(b, body, headers)).text).toBe('OK (already processed)')
    // B's pub/sub connection (cache invalidation) may reconnect a moment after its command
    // connection: B follows, like A.
    await eventually(async () => (await b.say('u9', 'hello')).length === 0)
    await eventually(async () => (await a.say('u9', 'hello')).length === 0)
  })
})
