import { type Collector, SqliteRecordStore, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  alexaIncoming,
  events,
  GOOD,
  kikIncoming,
  messengerIncoming,
  slackIncoming,
  universalIncoming,
  universalOutgoing,
} from './fixtures'

type Obj = Record<string, unknown>

let collector: Collector

beforeAll(async () => {
  collector = await startCollector({
    port: 0,
    db: ':memory:',
    maxBodyBytes: 8192,
    demoBot: false,
    bots: [
      { name: 'shop', apiKey: 'shop-key' },
      { name: 'other', apiKey: 'other-key' },
    ],
  })
})
afterAll(async () => {
  await collector.close()
})

interface Answer {
  status: number
  headers: Headers
  body: Obj
}

async function postBatch(body: string, options: { apiKey?: string; contentType?: string; url?: string } = {}) {
  const key = options.apiKey === undefined ? 'apiKey=shop-key' : options.apiKey ? `apiKey=${options.apiKey}` : ''
  const res = await fetch(`${options.url ?? collector.url}/track/batch?${key}`, {
    method: 'POST',
    headers: { 'content-type': options.contentType ?? 'application/json' },
    body,
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Obj } satisfies Answer
}

async function track(platform: string, type: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${collector.url}/track?platform=${platform}&type=${type}&v=11.1.0-rest&apiKey=shop-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Obj } satisfies Answer
}

const rec = (platform: string, type: string, body: unknown, extra: Obj = {}) => ({
  platform,
  type,
  v: '11.1.0-rest',
  ...extra,
  body,
})
const batch = (...records: unknown[]) => JSON.stringify({ records })

/** A copy of `body` with `path` set to `value` (`undefined` deletes it). */
function change(body: Obj, path: string, value: unknown): Obj {
  const copy = structuredClone(body)
  const parts = path.replace(/\[(\d+)\]/g, '.$1').split('.')
  let cur = copy as Obj
  for (const p of parts.slice(0, -1)) cur = cur[p] as Obj
  const last = parts.at(-1) as string
  if (value === undefined) delete cur[last]
  else cur[last] = value
  return copy
}

describe('POST /track/batch: per-record results', () => {
  it('stores every good record of every platform and type in one batch, each with its raw JSON', async () => {
    const records = GOOD.map(([platform, type, body]) => rec(platform, type, body()))
    const before = await collector.store.counts()
    const res = await postBatch(batch(...records))
    expect(res.status).toBe(200)
    expect(res.body.accepted).toBe(GOOD.length)
    expect(res.body.refused).toBe(0)
    const results = res.body.results as Array<{ index: number; status: string; id: number }>
    expect(results.map((r) => [r.index, r.status])).toEqual(GOOD.map((_, i) => [i, 'accepted']))
    // Ids in array order (one transaction, in order).
    for (let i = 1; i < results.length; i++) expect(results[i]!.id).toBeGreaterThan(results[i - 1]!.id)
    for (const [i, [platform, type, body]] of GOOD.entries()) {
      const stored = await collector.store.record(results[i]!.id)
      expect(stored).toMatchObject({ bot: 'shop', platform, type, v: '11.1.0-rest', raw: JSON.stringify(body()) })
    }
    expect((await collector.store.counts()).records - before.records).toBe(GOOD.length)
  })

  it('mixed good and bad: good ones stored, each bad one refused with exactly what POST /track answers', async () => {
    const bad: Array<[string, string, unknown]> = [
      ['universal', 'incoming', change(universalIncoming(), 'text', undefined)],
      ['slack', 'incoming', change(slackIncoming(), 'team.id', undefined)],
      ['facebook', 'incoming', { ...messengerIncoming(), intent: { name: 'x' } }],
      ['google', 'incoming', universalIncoming()],
      ['alexa', 'incoming', change(alexaIncoming(), 'event.request.timestamp', 'yesterday')],
      ['kik', 'incoming', change(kikIncoming(), 'message.from', 7)],
      ['universal', 'event', change(events.revenueEvent(), 'amount', 'lots')],
      ['universal', 'incoming', [1, 2]],
    ]
    const good = (i: number) =>
      rec('universal', i % 2 ? 'outgoing' : 'incoming', { text: `good ${i}`, userId: 'mixed-user' })
    const records: unknown[] = []
    for (const [i, [platform, type, body]] of bad.entries()) records.push(good(i), rec(platform, type, body))
    records.push(good(bad.length))
    const before = await collector.store.counts()
    const res = await postBatch(batch(...records))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ accepted: bad.length + 1, refused: bad.length })
    const results = res.body.results as Obj[]
    expect(results).toHaveLength(records.length)
    for (const [i, [platform, type, body]] of bad.entries()) {
      const single = await track(platform, type, JSON.stringify(body))
      expect(single.status).toBe(400)
      expect(results[2 * i + 1]).toEqual({ index: 2 * i + 1, status: 'refused', error: single.body.error })
      expect(results[2 * i]).toEqual({ index: 2 * i, status: 'accepted', id: expect.any(Number) })
    }
    expect(results.at(-1)).toMatchObject({ index: records.length - 1, status: 'accepted' })
    const after = await collector.store.counts()
    expect(after.records - before.records).toBe(bad.length + 1)
    const transcript = await collector.store.transcript('shop', 'mixed-user')
    expect(transcript.map((m) => m.text)).toEqual(Array.from({ length: bad.length + 1 }, (_, i) => `good ${i}`))
  })

  it('record-level envelope faults are refused per record, naming the field', async () => {
    const res = await postBatch(
      batch(
        'not a record',
        rec('nope', 'incoming', universalIncoming()),
        { type: 'incoming', v: '11.1.0-rest', body: universalIncoming() },
        rec('universal', 'incoming', universalIncoming(), { v: '9.9' }),
        rec('universal', 'incoming', universalIncoming(), { idempotencyKey: 'spaces are not allowed' }),
        rec('universal', 'incoming', universalIncoming(), { idempotencyKey: 'x'.repeat(129) }),
        rec('universal', 'incoming', undefined),
        rec('universal', 'incoming', { text: 'x'.repeat(9000), userId: 'u' }),
        rec('universal', 'incoming', universalIncoming()),
      ),
    )
    expect(res.status).toBe(200)
    const errors = (res.body.results as Array<{ status: string; error?: { code: string; path: string } }>).map((r) =>
      r.error ? [r.error.code, r.error.path] : r.status,
    )
    expect(errors).toEqual([
      ['invalid_field', ''],
      ['invalid_platform', 'platform'],
      ['invalid_platform', 'platform'],
      ['invalid_version', 'v'],
      ['invalid_field', 'idempotencyKey'],
      ['invalid_field', 'idempotencyKey'],
      ['missing_field', ''],
      ['payload_too_large', ''],
      'accepted',
    ])
    expect(res.body).toMatchObject({ accepted: 1, refused: 8 })
  })

  it('stores each body exactly as written inside the batch (whitespace, escapes, key order)', async () => {
    const bodies = [
      '{ "userId" : "raw-user",\n  "text" : "brace } and \\"quote\\" and \\\\" }',
      '{"text":"caf\\u00e9 {[", "userId":"raw-user", "platformJson": {"body": {"nested": [1, 2.50, true, null]}}}',
    ]
    const text = `{ "records" : [\n ${bodies
      .map(
        (b, i) =>
          `{"platform":"universal", "body" : ${b} ,"type":"incoming","v":"11.1.0-rest","idempotencyKey":"raw.${i}"}`,
      )
      .join(' ,\n ')} ] }`
    const res = await postBatch(text)
    expect(res.status).toBe(200)
    const results = res.body.results as Array<{ id: number }>
    for (const [i, body] of bodies.entries()) expect((await collector.store.record(results[i]!.id))?.raw).toBe(body)
    expect((await collector.store.transcript('shop', 'raw-user')).map((m) => m.text)).toEqual([
      'brace } and "quote" and \\',
      'café {[',
    ])
  })

  it('each record reaches the live firehose, in batch order', async () => {
    const controller = new AbortController()
    const stream = await fetch(`${collector.url}/api/stream?bot=shop`, { signal: controller.signal })
    const reader = stream.body!.getReader()
    await postBatch(
      batch(
        rec('universal', 'incoming', { text: 'live 1', userId: 'live' }),
        rec('universal', 'incoming', { userId: 'live' }),
        rec('universal', 'outgoing', { text: 'live 2', userId: 'live' }),
      ),
    )
    let text = ''
    while (!text.includes('live 2')) text += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    const frames = text
      .split('\n\n')
      .filter((f) => f.startsWith('event: message'))
      .map((f) => JSON.parse(f.split('data: ')[1]!) as Obj)
    expect(frames.map((f) => [f.text, f.direction, f.bot])).toEqual([
      ['live 1', 'incoming', 'shop'],
      ['live 2', 'outgoing', 'shop'],
    ])
  })

  it('keeps the order of a conversation across batches', async () => {
    let n = 0
    for (let b = 0; b < 5; b++) {
      const records = []
      for (let i = 0; i < 20; i++) {
        const thread = `order-${i % 3}`
        records.push(rec('universal', i % 2 ? 'outgoing' : 'incoming', { text: `${thread}#${n++}`, userId: thread }))
      }
      expect((await postBatch(batch(...records))).body.refused).toBe(0)
    }
    for (let t = 0; t < 3; t++) {
      const texts = (await collector.store.transcript('shop', `order-${t}`)).map((m) => m.text as string)
      const seq = texts.map((s) => Number(s.split('#')[1]))
      expect(seq.length).toBeGreaterThanOrEqual(30)
      expect(seq).toEqual([...seq].sort((a, b) => a - b))
    }
  })
})

describe('idempotency', () => {
  it('a retried batch is stored once: the same ids, answered duplicate', async () => {
    const text = batch(
      rec('universal', 'incoming', { text: 'retry 1', userId: 'retry' }, { idempotencyKey: 'p1.a' }),
      rec('universal', 'incoming', { userId: 'retry' }, { idempotencyKey: 'p1.b' }),
      rec('universal', 'outgoing', { text: 'retry 2', userId: 'retry' }, { idempotencyKey: 'p1.c' }),
      rec('universal', 'outgoing', { text: 'no key', userId: 'retry' }),
    )
    const first = await postBatch(text)
    const before = await collector.store.counts()
    const second = await postBatch(text)
    expect(await collector.store.counts()).toEqual({
      records: before.records + 1, // only the record without a key
      messages: before.messages + 1,
    })
    const r1 = first.body.results as Obj[]
    const r2 = second.body.results as Obj[]
    expect(r1.map((r) => r.status)).toEqual(['accepted', 'refused', 'accepted', 'accepted'])
    expect(r2).toEqual([
      { index: 0, status: 'duplicate', id: r1[0]!.id },
      r1[1],
      { index: 2, status: 'duplicate', id: r1[2]!.id },
      { index: 3, status: 'accepted', id: expect.any(Number) },
    ])
    expect(second.body).toMatchObject({ accepted: 3, refused: 1 })
    expect((await collector.store.transcript('shop', 'retry')).map((m) => m.text)).toEqual([
      'retry 1',
      'retry 2',
      'no key',
      'no key',
    ])
  })

  it('a key repeated inside one batch is stored once', async () => {
    const res = await postBatch(
      batch(
        rec('universal', 'incoming', { text: 'twice', userId: 'dup-in-batch' }, { idempotencyKey: 'p2.0' }),
        rec('universal', 'incoming', { text: 'twice', userId: 'dup-in-batch' }, { idempotencyKey: 'p2.0' }),
      ),
    )
    const results = res.body.results as Obj[]
    expect(results).toEqual([
      { index: 0, status: 'accepted', id: expect.any(Number) },
      { index: 1, status: 'duplicate', id: results[0]!.id },
    ])
    expect(await collector.store.transcript('shop', 'dup-in-batch')).toHaveLength(1)
  })

  it('Idempotency-Key on POST /track: stored once, the repeat answers 201 with the stored id', async () => {
    const body = JSON.stringify({ text: 'single', userId: 'single-key' })
    const first = await track('universal', 'incoming', body, { 'idempotency-key': 'p3.0' })
    const again = await track('universal', 'incoming', body, { 'idempotency-key': 'p3.0' })
    expect(first).toMatchObject({ status: 201, body: { id: expect.any(Number) } })
    expect(first.body).toEqual({ id: first.body.id })
    expect(again).toMatchObject({ status: 201, body: { id: first.body.id, duplicate: true } })
    // The same key in a batch of the same bot is the same record …
    const viaBatch = await postBatch(batch(rec('universal', 'incoming', JSON.parse(body), { idempotencyKey: 'p3.0' })))
    expect(viaBatch.body.results).toEqual([{ index: 0, status: 'duplicate', id: first.body.id }])
    // … but keys are per bot.
    const otherBot = await postBatch(
      batch(rec('universal', 'incoming', JSON.parse(body), { idempotencyKey: 'p3.0' })),
      {
        apiKey: 'other-key',
      },
    )
    expect(otherBot.body.results).toEqual([{ index: 0, status: 'accepted', id: expect.any(Number) }])
    expect(await collector.store.transcript('shop', 'single-key')).toHaveLength(1)
    // Without a key every post is stored.
    await track('universal', 'incoming', body)
    await track('universal', 'incoming', body)
    expect(await collector.store.transcript('shop', 'single-key')).toHaveLength(3)
  })

  it('a malformed Idempotency-Key is refused with 400 naming the header, nothing stored', async () => {
    const before = await collector.store.counts()
    const res = await track('universal', 'incoming', JSON.stringify(universalIncoming()), {
      'idempotency-key': 'a/b',
    })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      error: { code: 'invalid_field', message: expect.stringContaining('128'), path: 'idempotency-key' },
    })
    expect(await collector.store.counts()).toEqual(before)
  })
})

describe('whole-batch errors', () => {
  const one = batch(rec('universal', 'incoming', universalIncoming()))
  it.each([
    ['no apiKey', one, { apiKey: '' }, 401, 'missing_api_key', 'apiKey'],
    ['an unknown apiKey', one, { apiKey: 'nope' }, 401, 'invalid_api_key', 'apiKey'],
    ['text/plain', one, { contentType: 'text/plain' }, 415, 'unsupported_media_type', 'content-type'],
    ['broken JSON', '{"records":[', {}, 400, 'invalid_json', ''],
    ['an array body', '[]', {}, 400, 'invalid_batch', 'records'],
    ['records not an array', '{"records":{}}', {}, 400, 'invalid_batch', 'records'],
    ['no records', '{"records":[]}', {}, 400, 'invalid_batch', 'records'],
  ])('%s → %s', async (_name, body, options, status, code, path) => {
    const before = await collector.store.counts()
    const res = await postBatch(body, options)
    expect(res.status).toBe(status)
    expect(res.body).toEqual({ error: { code, message: expect.any(String), path } })
    expect(await collector.store.counts()).toEqual(before)
  })

  it('413 over max-records or max-bytes, stating both limits; nothing stored', async () => {
    const small = await startCollector({
      port: 0,
      demoBot: false,
      bots: [{ name: 'shop', apiKey: 'shop-key' }],
      maxBatchRecords: 3,
      maxBatchBytes: 2048,
    })
    try {
      const r = rec('universal', 'incoming', universalIncoming())
      const tooMany = await postBatch(batch(r, r, r, r), { url: small.url })
      expect(tooMany.status).toBe(413)
      expect(tooMany.body.error).toMatchObject({ code: 'payload_too_large', path: '' })
      const message = (tooMany.body.error as { message: string }).message
      expect(message).toContain('3 records')
      expect(message).toContain('2048 bytes')
      expect(message).toContain('4 records')
      const big = rec('universal', 'incoming', { text: 'x'.repeat(2100), userId: 'u' })
      const tooBig = await postBatch(batch(big), { url: small.url })
      expect(tooBig.status).toBe(413)
      expect((tooBig.body.error as { message: string }).message).toMatch(/3 records and 2048 bytes/)
      expect(tooBig.headers.get('convotrack-batch')).toBe('max-records=3, max-bytes=2048')
      expect(await small.store.counts()).toEqual({ records: 0, messages: 0 })
      // Exactly at the limit is fine.
      expect((await postBatch(batch(r, r, r), { url: small.url })).status).toBe(200)
    } finally {
      await small.close()
    }
  })

  it('a store that is down answers 503 with Retry-After and no advertisement; the same batch is stored once it is back', async () => {
    const store = new SqliteRecordStore(':memory:')
    const down = await startCollector({ port: 0, demoBot: false, store, bots: [{ name: 'shop', apiKey: 'shop-key' }] })
    try {
      await store.close()
      const res = await postBatch(one, { url: down.url })
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(res.headers.get('convotrack-batch')).toBeNull()
      expect(res.body).toEqual({ error: { code: 'store_unavailable', message: expect.any(String), path: '' } })
      const single = await fetch(`${down.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(universalIncoming()),
      })
      expect(single.status).toBe(503)
      expect(single.headers.get('convotrack-batch')).toBeNull()
    } finally {
      await down.close()
    }
  })

  it('rejects limits that are not positive integers', async () => {
    await expect(startCollector({ port: 0, maxBatchRecords: 0 })).rejects.toThrow(/maxBatchRecords/)
    await expect(startCollector({ port: 0, maxBatchBytes: 1.5 })).rejects.toThrow(/maxBatchBytes/)
  })
})

describe('the Convotrack-Batch advertisement', () => {
  it.each([
    ['201', 'platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key', JSON.stringify(universalOutgoing()), 201],
    ['400 query', 'platform=nope&type=incoming&v=11.1.0-rest&apiKey=shop-key', '{}', 400],
    ['400 shape', 'platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key', '{}', 400],
    ['401', 'platform=universal&type=incoming&v=11.1.0-rest&apiKey=nope', '{}', 401],
    ['413', 'platform=universal&type=incoming&v=11.1.0-rest&apiKey=shop-key', 'x'.repeat(9000), 413],
  ])('is on every /track answer (%s)', async (_name, query, body, status) => {
    const res = await fetch(`${collector.url}/track?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    expect(res.status).toBe(status)
    expect(res.headers.get('convotrack-batch')).toBe('max-records=500, max-bytes=4194304')
    await res.body?.cancel()
  })

  it('is on a 415 answer, and states configured limits', async () => {
    const custom = await startCollector({ port: 0, maxBatchRecords: 50, maxBatchBytes: 65536 })
    try {
      const res = await fetch(`${custom.url}/track?platform=universal&type=incoming&v=11.1.0-rest&apiKey=demo-key`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{}',
      })
      expect(res.status).toBe(415)
      expect(res.headers.get('convotrack-batch')).toBe('max-records=50, max-bytes=65536')
      await res.body?.cancel()
    } finally {
      await custom.close()
    }
  })
})
