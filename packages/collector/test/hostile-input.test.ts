/**
 * Hostile input against a real collector, on SQLite and on a real PostgreSQL (issue 26): records
 * that stalled the event loop, overflowed the stack while being stored (503 forever), sank their
 * batch, or were stored and then broke every read; idempotency keys reused for another record
 * and retried after an erasure. Each case is refused with a 4xx naming the field, or stored and
 * readable through every read route; 5xx only when the store is down.
 */
import { type Collector, type RecordStore, SqliteRecordStore, startCollector } from '@convotrack/collector'
import { afterEach, describe, expect, it } from 'vitest'
import { BLANKED } from '../src/ingest/blank-credentials'
import { MAX_NESTING } from '../src/ingest/nesting-limit'
import { alexaOutgoing, messengerIncoming } from './fixtures'
import { backends } from './support/backends'
import { LIST_ROUTES } from './support/read-routes'
import { openStream } from './support/team'

type Obj = Record<string, unknown>

let collector: Collector | undefined
afterEach(async () => {
  await collector?.close()
  collector = undefined
})

const BACKENDS = backends()
const ADMIN = { authorization: 'Bearer tok_admin_0123456789abcdef' }
const KEY = 'shop-key'

async function start(db: string | undefined, extra: Obj = {}): Promise<Collector> {
  collector = await startCollector({
    port: 0,
    log: false,
    demoBot: false,
    ...(db ? { db } : {}),
    bots: [{ name: 'shop', apiKey: KEY }],
    auth: { tokens: [{ name: 'admin', token: ADMIN.authorization.slice(7), role: 'admin' as const, bots: ['*'] }] },
    ...extra,
  })
  return collector
}

/** `levels` objects nested in one another (the outermost counts), `leaf` inside the innermost. */
function nested(levels: number, leaf: unknown = 'leaf', key = 'a'): unknown {
  let v: unknown = leaf
  for (let i = 0; i < levels; i++) v = { [key]: v }
  return v
}

/** Deeper than `JSON.stringify` can write: a placeholder in the value, replaced in the text. */
class Deep {
  constructor(readonly levels: number) {}
  toJSON(): string {
    return `@@deep${this.levels}@@`
  }
}
const deepText = (levels: number) => `${'{"a":'.repeat(levels)}"leaf"${'}'.repeat(levels)}`
const toText = (body: unknown): string =>
  JSON.stringify(body).replace(/"@@deep(\d+)@@"/g, (_, n: string) => deepText(Number(n)))

async function track(
  url: string,
  query: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Obj }> {
  const res = await fetch(`${url}/track?${query}&apiKey=${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : toText(body),
  })
  return { status: res.status, body: (await res.json()) as Obj }
}

const UNIVERSAL_IN = 'platform=universal&type=incoming&v=11.1.0-rest'

/** A Messenger incoming body whose one messaging item carries `userJson`. */
function withUserJson(body: Obj, userJson: unknown): Obj {
  const [entry] = body.entry as Obj[]
  const [item] = (entry as Obj).messaging as Obj[]
  if (!item) throw new Error('a messenger body without a messaging item')
  item.platformUserJson = userJson
  return body
}

/** A universal incoming batch record of user `userId` saying `text`, under `key`. */
const keyed = (key: string, text: string, userId = 'u1') => ({
  platform: 'universal',
  type: 'incoming',
  v: '11.1.0-rest',
  idempotencyKey: key,
  body: { text, userId },
})

async function batch(url: string, records: unknown[]): Promise<{ status: number; body: Obj }> {
  const res = await fetch(`${url}/track/batch?apiKey=${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: toText({ records }),
  })
  return { status: res.status, body: (await res.json()) as Obj }
}

async function get(url: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${path}`, { headers: ADMIN })
  return { status: res.status, text: await res.text() }
}

/** Every read route that shows records: each must answer 200 with parseable output. */
async function readEverything(url: string, recordIds: number[], users: string[]): Promise<void> {
  const routes = [
    '/api/messages?limit=1000&all=1',
    ...LIST_ROUTES.map((r) => `${r}${r.includes('?') ? '&' : '?'}all=1`),
    '/api/audit',
    ...recordIds.map((id) => `/api/records/${id}`),
    ...users.flatMap((u) => [
      `/api/transcript?bot=shop&thread=${encodeURIComponent(u)}`,
      `/api/export?bot=shop&user=${encodeURIComponent(u)}`,
    ]),
  ]
  for (const path of routes) {
    const res = await get(url, path)
    expect(res.status, path).toBe(200)
    if (path.startsWith('/api/export')) for (const line of res.text.split('\n').filter(Boolean)) JSON.parse(line)
    else JSON.parse(res.text)
  }
}

describe.each(BACKENDS)('on $name', (backend) => {
  it('a record nested past the limit is refused 400 naming the field — in platformUserJson, in a copied Messenger field, under a credential key — and the service stays up', async () => {
    const url = (await start(await backend.db())).url
    const cases: Array<[string, unknown, string]> = [
      [UNIVERSAL_IN, { text: 'hi', userId: 'u1', platformUserJson: new Deep(4_200) }, 'platformUserJson.'],
      [
        'platform=facebook&type=incoming&v=11.1.0-rest',
        withUserJson(messengerIncoming(), new Deep(4_200)),
        'entry[0].messaging[0].platformUserJson.',
      ],
      // The credential forced a re-serialisation of the body, which overflowed the stack.
      [UNIVERSAL_IN, { text: 'hi', userId: 'u1', token: 'secret', extra: new Deep(4_200) }, 'extra.'],
      // Past SQLite's JSON depth limit (1000) but below the stack: broke `/api/reports/events`.
      [
        'platform=generic&type=event&v=11.1.0-rest',
        { type: 'referralEvent', name: 'r', userId: 'u1', source: new Deep(1_001) },
        'source.',
      ],
    ]
    for (const [query, body, path] of cases) {
      const res = await track(url, query, body)
      expect(res.status, path).toBe(400)
      const error = res.body.error as { code: string; message: string; path: string }
      expect(error.code).toBe('invalid_field')
      expect(error.path.startsWith(path), error.path).toBe(true)
      expect(error.message).toContain(`${MAX_NESTING} levels`)
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    expect((await track(url, UNIVERSAL_IN, { text: 'after', userId: 'u1' })).status).toBe(201)
  })

  it(`a record nested exactly ${MAX_NESTING} deep in extraInfo, a referral and user metadata is stored and readable through every read route, with a live stream open`, async () => {
    const url = (await start(await backend.db())).url
    const stream = await openStream(`${url}/api/stream`, ADMIN)
    try {
      // The body is level 1: MAX_NESTING - 1 more levels below it.
      const deep = (leaf: unknown) => nested(MAX_NESTING - 1, leaf)
      const records = [
        [
          'platform=generic&type=event&v=11.1.0-rest',
          { type: 'customEvent', name: 'x', userId: 'u1', extraInfo: deep(1) },
        ],
        [
          'platform=generic&type=event&v=11.1.0-rest',
          { type: 'referralEvent', name: 'r', userId: 'u1', source: 'ad', extraInfo: deep('ad') },
        ],
        [
          'platform=generic&type=event&v=11.1.0-rest',
          { type: 'pageLaunchEvent', name: 'p', userId: 'u1', extraInfo: deep('p') },
        ],
        [UNIVERSAL_IN, { text: 'hi', userId: 'u1', platformUserJson: deep(true) }],
      ] as const
      const ids: number[] = []
      for (const [query, body] of records) {
        const res = await track(url, query, body)
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        ids.push(res.body.id as number)
      }
      // One too many is refused.
      expect(
        (await track(url, UNIVERSAL_IN, { text: 'hi', userId: 'u1', platformUserJson: nested(MAX_NESTING) })).status,
      ).toBe(400)
      await readEverything(url, ids, ['u1'])
      // Waits for every event; the bound only detects a hang (expect.poll's default 1 s is a speed limit under load).
      await expect
        .poll(() => stream.events.filter((e) => e.event === 'message').length, { timeout: 60_000 })
        .toBe(records.length)
    } finally {
      stream.close()
    }
  })

  it('one record past the limit in a batch of 500 is refused in its result; the 499 others are stored in the same answer', async () => {
    const url = (await start(await backend.db())).url
    const good = (i: number) => ({
      platform: 'universal',
      type: 'incoming',
      v: '11.1.0-rest',
      idempotencyKey: `k${i}`,
      body: { text: `m${i}`, userId: `u${i % 7}` },
    })
    const records: unknown[] = Array.from({ length: 500 }, (_, i) => good(i))
    records[250] = { ...good(250), body: { text: 'deep', userId: 'u', platformUserJson: new Deep(5_000) } }
    const res = await batch(url, records)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ accepted: 499, refused: 1 })
    const results = res.body.results as Array<{ index: number; status: string; error?: { path: string } }>
    expect(results[250]).toMatchObject({ index: 250, status: 'refused', error: { code: 'invalid_field' } })
    expect(results[250]?.error?.path.startsWith('platformUserJson.')).toBe(true)
    expect(results.filter((r) => r.status === 'accepted')).toHaveLength(499)
    expect(await collector?.store.counts()).toEqual({ records: 499, messages: 499 })
  })

  it('an old-SDK event whose type is an object, or a prototype key, is answered 4xx or stored — never 500 — alone and in its batch', async () => {
    const url = (await start(await backend.db())).url
    for (const type of [{ toString: 1 }, 'constructor', '__proto__', ['x']]) {
      const body = { type, userId: 'u1' }
      const single = await track(url, 'platform=facebook&type=event&v=12.1.0-npm', body)
      expect(single.status, JSON.stringify(type)).toBeLessThan(500)
      const res = await batch(url, [
        { platform: 'facebook', type: 'event', v: '12.1.0-npm', body },
        { platform: 'universal', type: 'incoming', v: '11.1.0-rest', body: { text: 'ok', userId: 'u2' } },
      ])
      expect(res.status).toBe(200)
      expect((res.body.results as Array<{ status: string }>)[1]?.status).toBe('accepted')
    }
    await readEverything(url, [], ['u1', 'u2'])
  })

  it('an Alexa record whose SSML is a megabyte of unclosed tags is stored at once, with its text', async () => {
    const url = (await start(await backend.db(), { maxBodyBytes: 2 * 1024 * 1024 })).url
    const ssml = `<speak>hello</speak> ${'<'.repeat(1_000_000)}`
    const body = alexaOutgoing()
    ;((body.response as Obj).response as Obj).outputSpeech = { type: 'SSML', ssml }
    // A quadratic strip takes minutes here (80 000 took 5 s): the test's timeout is the proof.
    const res = await track(url, 'platform=alexa&type=outgoing&v=11.1.0-rest', body)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const messages = JSON.parse((await get(url, '/api/messages?all=1')).text) as Array<{ text: string }>
    // (Compared as a boolean: a failure message of a megabyte helps nobody.)
    expect(messages.at(-1)?.text === `hello ${'<'.repeat(1_000_000)}`).toBe(true)
  })

  it('credentials are blanked in the stored raw text without re-serialising it: numbers, escapes and key order stay as sent', async () => {
    const url = (await start(await backend.db())).url
    const raw =
      '{"userId":"u1","text":"caf\\u00e9","n":1.50,"big":1e400,"qs":{"access_token":"EAAB","keep":"x"},"token":42,"list":[{"apiKey":"k"}]}'
    const res = await track(url, UNIVERSAL_IN, raw)
    expect(res.status).toBe(201)
    const stored = await collector?.store.record(res.body.id as number)
    const b = JSON.stringify(BLANKED)
    expect(stored?.raw).toBe(
      `{"userId":"u1","text":"caf\\u00e9","n":1.50,"big":1e400,"qs":{"access_token":${b},"keep":"x"},"token":${b},"list":[{"apiKey":${b}}]}`,
    )
  })

  describe('idempotency keys', () => {
    it('the same key with another record is 409 naming the key, alone and in a batch; the same record is a repeat', async () => {
      const url = (await start(await backend.db())).url
      const first = await track(url, UNIVERSAL_IN, { text: 'one', userId: 'u1' }, { 'idempotency-key': 'k-1' })
      expect(first.status).toBe(201)
      // Whitespace and key spelling aside, the same record: a repeat.
      const again = await track(url, UNIVERSAL_IN, '{ "text": "one",  "userId": "u1" }', { 'idempotency-key': 'k-1' })
      expect(again).toEqual({ status: 201, body: { id: first.body.id, duplicate: true } })
      const other = await track(url, UNIVERSAL_IN, { text: 'two', userId: 'u1' }, { 'idempotency-key': 'k-1' })
      expect(other.status).toBe(409)
      expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused', path: 'idempotency-key' })
      expect((other.body.error as { message: string }).message).toContain('k-1')
      // Another type under the same key is another record too.
      const outgoing = await track(
        url,
        'platform=universal&type=outgoing&v=11.1.0-rest',
        { text: 'one', userId: 'u1' },
        {
          'idempotency-key': 'k-1',
        },
      )
      expect(outgoing.status).toBe(409)
      const res = await batch(url, [
        keyed('k-1', 'one'),
        keyed('k-1', 'three'),
        keyed('k-2', 'four'),
        keyed('k-2', 'five'),
      ])
      expect(res.status).toBe(200)
      const results = res.body.results as Array<Obj>
      expect(results[0]).toMatchObject({ status: 'duplicate', id: first.body.id })
      expect(results[1]).toMatchObject({
        status: 'refused',
        error: { code: 'idempotency_key_reused', path: 'idempotencyKey' },
      })
      expect(results[2]).toMatchObject({ status: 'accepted' })
      expect(results[3]).toMatchObject({ status: 'refused', error: { code: 'idempotency_key_reused' } })
      expect(res.body).toMatchObject({ accepted: 2, refused: 2 })
      expect(await collector?.store.counts()).toEqual({ records: 2, messages: 2 })
    })

    it('after an erasure the key stays taken: a late retry is a repeat and does not bring the record back', async () => {
      const url = (await start(await backend.db())).url
      const sent = await track(
        url,
        UNIVERSAL_IN,
        { text: 'my address', userId: 'ada' },
        { 'idempotency-key': 'late-1' },
      )
      expect(sent.status).toBe(201)
      const batched = await batch(url, [keyed('late-2', 'b', 'ada')])
      expect(batched.status).toBe(200)
      const erased = await fetch(`${url}/api/users/ada?bot=shop`, { method: 'DELETE', headers: ADMIN })
      expect(erased.status).toBe(200)
      expect(await collector?.store.counts()).toEqual({ records: 0, messages: 0 })
      const retry = await track(
        url,
        UNIVERSAL_IN,
        { text: 'my address', userId: 'ada' },
        { 'idempotency-key': 'late-1' },
      )
      expect(retry).toEqual({ status: 201, body: { id: sent.body.id, duplicate: true } })
      const retryBatch = await batch(url, [keyed('late-2', 'b', 'ada'), keyed('late-1', 'other', 'ada')])
      expect(retryBatch.body).toMatchObject({ accepted: 1, refused: 1 })
      expect((retryBatch.body.results as Obj[])[0]).toMatchObject({ status: 'duplicate' })
      expect((retryBatch.body.results as Obj[])[1]).toMatchObject({
        status: 'refused',
        error: { code: 'idempotency_key_reused' },
      })
      expect(await collector?.store.counts()).toEqual({ records: 0, messages: 0 })
      expect(JSON.parse((await get(url, '/api/messages?all=1')).text)).toEqual([])
    })
  })
})

describe('5xx only when the store is down', () => {
  /** A store that refuses one record for its own sake (a constraint, a value it cannot hold). */
  function refusing(inner: RecordStore, bad: string): RecordStore {
    const check = (raw: string) => {
      if (raw.includes(bad))
        throw Object.assign(new Error('CHECK constraint failed'), { code: 'SQLITE_CONSTRAINT_CHECK' })
    }
    return Object.assign(Object.create(inner) as RecordStore, {
      add: async (record: Parameters<RecordStore['add']>[0], messages: Parameters<RecordStore['add']>[1]) => {
        check(record.raw)
        return inner.add(record, messages)
      },
      addMany: async (items: Parameters<RecordStore['addMany']>[0]) => {
        for (const i of items) check(i.record.raw)
        return inner.addMany(items)
      },
    })
  }

  it('a record the store refuses is 422 alone and refused in its batch; the rest of the batch is stored, in order', async () => {
    const inner = new SqliteRecordStore(':memory:')
    const url = (await start(undefined, { store: refusing(inner, 'poison') })).url
    const single = await track(url, UNIVERSAL_IN, { text: 'poison', userId: 'u' })
    expect(single.status).toBe(422)
    expect(single.body.error).toMatchObject({ code: 'unsupported_record' })
    const records = Array.from({ length: 9 }, (_, i) => ({
      platform: 'universal',
      type: 'incoming',
      v: '11.1.0-rest',
      body: { text: i === 3 || i === 7 ? 'poison' : `m${i}`, userId: 'u' },
    }))
    const res = await batch(url, records)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ accepted: 7, refused: 2 })
    const statuses = (res.body.results as Array<{ status: string }>).map((r) => r.status)
    expect(statuses).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'refused',
      'accepted',
      'accepted',
      'accepted',
      'refused',
      'accepted',
    ])
    const texts = (await inner.recent({ limit: 100 })).map((m) => m.text)
    expect(texts).toEqual(['m0', 'm1', 'm2', 'm4', 'm5', 'm6', 'm8'])
    await inner.close()
  })
})

describe('ids every read route can address', () => {
  it('a user or conversation id over 1000 characters is refused 400 naming it; 1000 is stored and its transcript and export open', async () => {
    const url = (await start(undefined)).url
    const long = await track(url, UNIVERSAL_IN, { text: 'hi', userId: '"'.repeat(1_001) })
    expect(long.status).toBe(400)
    expect(long.body.error).toMatchObject({ code: 'invalid_field', path: 'userId' })
    const conv = await track(url, UNIVERSAL_IN, { text: 'hi', userId: 'u', conversationId: 'c'.repeat(5_000) })
    expect(conv.body.error).toMatchObject({ code: 'invalid_field', path: 'conversationId' })
    const id = 'ü"'.repeat(500)
    const ok = await track(url, UNIVERSAL_IN, { text: 'hi', userId: id })
    expect(ok.status).toBe(201)
    await readEverything(url, [ok.body.id as number], [id])
  })
})

describe.each(BACKENDS)('text the stores write natively on $name', (backend) => {
  it('quotes, backslashes, control characters, line separators and astral characters round-trip; a lone surrogate stays or reads as U+FFFD', async () => {
    const url = (await start(await backend.db())).url
    const text = `a"b\\c\\\\"d\n\te\u2028f😀g${'\\"'.repeat(1_000)}\ud800h`
    const res = await track(url, UNIVERSAL_IN, { text, userId: 'u"\\1' })
    expect(res.status).toBe(201)
    const [message] = JSON.parse((await get(url, '/api/messages')).text) as Array<{ text: string; userId: string }>
    // A lone surrogate is not UTF-8: PostgreSQL's driver writes it as one U+FFFD, better-sqlite3
    // as three (one per byte of its encoding). Everything else is as sent.
    expect([text.replace('\ud800', '\ufffd'), text.replace('\ud800', '\ufffd'.repeat(3))]).toContain(message?.text)
    expect(message?.userId).toBe('u"\\1')
    const stored = await collector?.store.record(res.body.id as number)
    expect(JSON.parse(stored?.raw ?? '')).toEqual({ text, userId: 'u"\\1' })
  })
})
