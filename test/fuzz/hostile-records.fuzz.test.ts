/**
 * Hostile records against a real collector (issue 26), on SQLite and on a real PostgreSQL:
 * generated records of every platform with values planted anywhere in them — nested around and
 * far past the nesting limit, thousands of keys wide, odd types (`{ toString: 1 }`, prototype
 * keys, huge and negative numbers, lone surrogates, NUL), markup-shaped strings (unclosed SSML
 * and HTML tags, Slack mrkdwn, backslash and quote runs, up to 200 kB), credential keys at every
 * depth — posted alone and inside batches. Asserted:
 * - no 5xx while the store is up: every answer is 201 or a 4xx naming the problem;
 * - the event loop is never held over 100 ms by one request (`monitorEventLoopDelay`, each gap
 *   counted only as far as the process spent CPU in it — see LoopWatch — and the least of three
 *   tries), so a machine busy with other work does not fail the suite while a record that blocks
 *   does: the quadratic SSML strip spent ~8 s on the 100 000 unclosed tags of the first case,
 *   80× the bound;
 * - every accepted record is readable through every read route (raw view, messages,
 *   transcript, export, reports);
 * - a batch's good records are all stored, whatever the others hold.
 * Seeded (`FUZZ_SEED`, test/support/fuzz-seed.ts), bounded (`FUZZ_RUNS`): well under a minute on both stores.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { type Collector, startCollector } from '@convotrack/collector'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { GOOD } from '../../packages/collector/test/fixtures'
import { type Backend, backends } from '../../packages/collector/test/support/backends'
import { LIST_ROUTES } from '../../packages/collector/test/support/read-routes'
import { seeded } from '../support/fuzz-seed'
import { mutated, RUNS } from './support'

const KEY = 'hostile-key'
/** The longest the event loop may be held by one request, in ms (issue 26). */
const MAX_BLOCK_MS = 100
const RESOLUTION_MS = 10

type Obj = Record<string, unknown>

// ------------------------------------------------------------------ hostile values

/**
 * Nesting deeper than `JSON.stringify` can write in a test worker is planted as a marker string
 * and written into the text afterwards.
 */
const DEEP = /"@@deep:(\d+):(obj|arr|cred)@@"/g
function deepText(levels: number, kind: string): string {
  if (kind === 'arr') return `${'['.repeat(levels)}1${']'.repeat(levels)}`
  const leaf = kind === 'cred' ? '{"token":"s3cr3t","apiKey":12345}' : '"leaf"'
  return `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`
}
const toText = (value: unknown): string =>
  (JSON.stringify(value) ?? 'null').replace(DEEP, (_, n: string, kind: string) => deepText(Number(n), kind))

const deepValue = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 55, max: 70 }),
      fc.integer({ min: 900, max: 1_100 }),
      fc.integer({ min: 4_000, max: 6_000 }),
    ),
    fc.constantFrom('obj', 'arr', 'cred'),
  )
  .map(([n, kind]) => `@@deep:${n}:${kind}@@`)

const wideValue = fc.oneof(
  fc
    .integer({ min: 1_000, max: 20_000 })
    .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  fc.integer({ min: 1_000, max: 50_000 }).map((n) => Array.from({ length: n }, (_, i) => (i % 2 ? { x: i } : 'y'))),
)

const oddValue = fc.constantFrom<unknown>(
  { toString: 1 },
  { valueOf: {}, toString: {} },
  ['x'],
  [],
  {},
  1e308,
  -1e308,
  -0,
  5e-324,
  1.2345678901234568e29,
  true,
  null,
  '',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '\ud800',
  '\udfff\ud800',
  'a\u0000b',
  '\u2028\u2029',
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__":{"polluted":true}}'),
)

const markup = fc
  .tuple(
    fc.constantFrom(
      '<',
      '<speak>',
      '<b>',
      '</',
      '<<>',
      '*_~`',
      '<@U1|x>',
      '&lt;',
      '\\',
      '"',
      '\\"',
      '<!--',
      '<a href="',
    ),
    fc.integer({ min: 1_000, max: 120_000 }),
  )
  .map(([unit, size]) => unit.repeat(Math.ceil(size / unit.length)))

/** A credential key `levels` deep, inside objects and arrays. */
const credential = fc
  .tuple(
    fc.integer({ min: 0, max: 80 }),
    fc.constantFrom('token', 'access_token', 'apiKey', 'secret', 'api-key', 'ACCESS_TOKEN'),
    fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant('')),
  )
  .map(([levels, key, value]) => {
    let v: unknown = { [key]: value }
    for (let i = 0; i < levels; i++) v = i % 3 === 2 ? [v] : { n: v }
    return v
  })

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: deepValue },
  { weight: 1, arbitrary: wideValue },
  { weight: 3, arbitrary: oddValue },
  { weight: 3, arbitrary: markup },
  { weight: 3, arbitrary: credential },
)

const SHAPES = GOOD.filter(([, type]) => type !== 'event').concat(
  GOOD.filter(([p, t]) => t === 'event' && p === 'generic'),
)

/** A record of any platform with one to three hostile values planted in it (or its text fields). */
/** The shapes whose text the collector cleans or copies: SSML, Slack, universal, Messenger. */
const TEXT_SHAPES = SHAPES.filter(
  ([p, t]) => (p === 'alexa' && t === 'outgoing') || p === 'slack' || p === 'universal' || p === 'facebook',
)

/** Markup planted where the text is cleaned: unclosed tags first (what made the SSML strip quadratic). */
const cleaned = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 20_000, max: 120_000 }).map((n) => `<speak>${'<'.repeat(n)}`) },
  { weight: 1, arbitrary: markup },
)

/** A record to post: its query values and body text. */
interface Rec {
  platform: string
  type: string
  v?: string
  text: string
}

/** A record of any platform with one to three hostile values planted in it, or markup in its text. */
const record: fc.Arbitrary<Rec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(...SHAPES)
      .chain(([platform, type, make]) =>
        mutated(make(), hostile).map((body) => ({ platform, type, text: toText(body) })),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...TEXT_SHAPES), cleaned).map(([[platform, type, make], text]) => ({
      platform,
      type,
      text: toText(plantText(platform, type, make(), text)),
    })),
  },
)

/** The cases issue 26 reported, run first whatever the seed. */
const shape = (platform: string, type: string) => SHAPES.find(([p, t]) => p === platform && t === type)?.[2]() ?? {}
const KNOWN: Rec[] = [
  ['alexa', 'outgoing', plantText('alexa', 'outgoing', shape('alexa', 'outgoing'), `<speak>${'<'.repeat(100_000)}`)],
  ['universal', 'incoming', { ...shape('universal', 'incoming'), platformUserJson: '@@deep:4200:obj@@' }],
  ['universal', 'incoming', { ...shape('universal', 'incoming'), token: 'x', extra: '@@deep:4200:cred@@' }],
  ['generic', 'event', { type: 'customEvent', name: 'n', userId: 'u', extraInfo: '@@deep:5000:arr@@' }],
  ['generic', 'event', { type: 'referralEvent', name: 'n', userId: 'u', ref: '@@deep:1001:obj@@' }],
  ['generic', 'event', { type: 'shareEvent', name: '\\"'.repeat(100_000), userId: 'u' }],
  ['facebook', 'event', { type: { toString: 1 }, userId: 'u' }, '12.1.0-npm'],
  ['facebook', 'event', { type: 'constructor', userId: 'u' }, '12.1.0-npm'],
].map(([platform, type, body, v]) => ({
  platform: platform as string,
  type: type as string,
  ...(v ? { v: v as string } : {}),
  text: toText(body),
}))

/** Good records of four platforms, to sit next to the known cases in a batch. */
const GOOD_EXAMPLES = SHAPES.slice(0, 4).map(([platform, type, make]) => ({
  platform,
  type,
  text: toText(make()),
  good: true,
}))

/** The text fields that get cleaned (SSML, Slack, Messenger, universal) set to `text`. */
function plantText(platform: string, type: string, base: Obj, text: string): Obj {
  const b = structuredClone(base)
  const at = (path: string[]) => {
    let o = b as Obj
    for (const k of path.slice(0, -1)) o = (o[k] ?? {}) as Obj
    o[path.at(-1) as string] = text
  }
  if (platform === 'alexa' && type === 'outgoing') at(['response', 'response', 'outputSpeech', 'ssml'])
  else if (platform === 'slack') at(['message', 'text'])
  else b.text = text
  return b
}

// ------------------------------------------------------------------ the collector and its loop

/**
 * How long the event loop is held, told apart from how long this process waited for a CPU. The
 * loop's delay (`monitorEventLoopDelay`) is wall time: on a machine running other work it grows
 * whether or not the collector did anything. So a ticker beside it notes, for every gap between
 * its turns, the CPU time the process used in that gap; a gap is a hold only as far as it was
 * spent working: min(gap, CPU used). A record that blocks shows up in both (the quadratic SSML
 * strip spent 5 s of CPU); a busy machine only in the first.
 */
class LoopWatch {
  private readonly delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  private readonly ticker: NodeJS.Timeout
  private last = performance.now()
  private lastCpu = process.cpuUsage()
  private worst = 0
  private waiting: Array<() => void> = []

  constructor() {
    this.delay.enable()
    this.ticker = setInterval(() => this.tick(), 5)
  }

  private tick(): void {
    const now = performance.now()
    const cpu = process.cpuUsage()
    const used = (cpu.user - this.lastCpu.user + cpu.system - this.lastCpu.system) / 1000
    this.worst = Math.max(this.worst, Math.min(now - this.last, used))
    this.last = now
    this.lastCpu = cpu
    for (const resolve of this.waiting.splice(0)) resolve()
  }

  reset(): void {
    this.delay.reset()
    this.worst = 0
    this.last = performance.now()
    this.lastCpu = process.cpuUsage()
  }

  /** After the next turn of the ticker (the hold that just ended is then counted): the holds since `reset`. */
  async read(): Promise<{ wallMs: number; workMs: number }> {
    await new Promise<void>((resolve) => this.waiting.push(resolve))
    // The histogram records the time between its timer's turns: its period is not a hold.
    const wallMs = this.delay.count === 0 ? 0 : Math.max(0, this.delay.max / 1e6 - RESOLUTION_MS)
    return { wallMs, workMs: Math.min(wallMs, this.worst) }
  }

  stop(): void {
    clearInterval(this.ticker)
    this.delay.disable()
  }
}

const loop = new LoopWatch()
/** The longest hold any request made (the least of its tries), reported at the end. */
let worst = { wallMs: 0, workMs: 0 }
afterAll(() => {
  loop.stop()
  console.info(
    `[hostile fuzz] longest event-loop hold by one request: ${worst.workMs.toFixed(1)} ms of work (${worst.wallMs.toFixed(1)} ms of wall time)`,
  )
})

/** How long the event loop was held while `work` ran. */
async function blockedDuring<T>(work: () => Promise<T>): Promise<{ value: T; wallMs: number; workMs: number }> {
  loop.reset()
  const value = await work()
  return { value, ...(await loop.read()) }
}

interface Answer {
  status: number
  body: Obj
}

async function send(collector: Collector, path: string, body: string): Promise<Answer> {
  const res = await fetch(`${collector.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  return { status: res.status, body: (await res.json()) as Obj }
}

/**
 * Posts and measures; a request that held the loop over the bound is posted twice more and the
 * least of the three counts (a blocking record blocks every time). Every attempt's answer is
 * returned: each stored its records.
 */
async function sendMeasured(collector: Collector, path: string, body: string): Promise<Answer[]> {
  const answers: Answer[] = []
  let least = { wallMs: Number.POSITIVE_INFINITY, workMs: Number.POSITIVE_INFINITY }
  for (let attempt = 0; attempt < 3 && least.workMs > MAX_BLOCK_MS; attempt++) {
    const { value, ...held } = await blockedDuring(() => send(collector, path, body))
    answers.push(value)
    if (held.workMs < least.workMs) least = held
  }
  if (least.workMs > worst.workMs) worst = least
  expect(
    least.workMs,
    `${path} held the event loop ${least.workMs.toFixed(0)} ms (${least.wallMs.toFixed(0)} ms wall) on each of 3 tries`,
  ).toBeLessThanOrEqual(MAX_BLOCK_MS)
  return answers
}

function expectNo5xx(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBeLessThan(500)
  if (answer.status >= 400) {
    const error = answer.body.error as { code: string; message: string; path: string }
    expect(typeof error.code).toBe('string')
    expect(error.message.length).toBeGreaterThan(5)
    expect(typeof error.path).toBe('string')
  }
}

const ADMIN = { authorization: 'Bearer tok_fuzz_admin_0123456789abcdef' }

async function read(collector: Collector, path: string): Promise<string> {
  const res = await fetch(`${collector.url}${path}`, { headers: ADMIN })
  const text = await res.text()
  expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(200)
  return text
}

/** Every read route shows what was accepted since `afterId`: raw views, transcripts, exports, reports. */
async function expectReadable(collector: Collector, recordIds: number[], afterId: number): Promise<number> {
  for (const id of recordIds) expect(JSON.parse(await read(collector, `/api/records/${id}`)).id).toBe(id)
  const fresh = JSON.parse(await read(collector, `/api/messages?limit=1000&afterId=${afterId}`)) as Array<{
    id: number
    recordId: number
    bot: string
    thread: string
    userId: string
  }>
  for (const m of fresh) expect(recordIds).toContain(m.recordId)
  const threads = new Set(fresh.map((m) => m.thread))
  for (const thread of threads) {
    const page = JSON.parse(
      await read(collector, `/api/transcript?bot=fuzz&thread=${encodeURIComponent(thread)}&limit=5000`),
    )
    const ids = new Set((page.messages as Array<{ id: number }>).map((m) => m.id))
    for (const m of fresh.filter((f) => f.thread === thread)) expect(ids.has(m.id)).toBe(true)
  }
  for (const user of new Set(fresh.map((m) => m.userId))) {
    const lines = (await read(collector, `/api/export?bot=fuzz&user=${encodeURIComponent(user)}`))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: number })
    for (const m of fresh.filter((f) => f.userId === user)) expect(lines.map((l) => l.id)).toContain(m.recordId)
  }
  for (const path of LIST_ROUTES) {
    const report = JSON.parse(await read(collector, path))
    if (path === '/api/reports/events') expect(Number.isFinite(report.revenue.total)).toBe(true)
  }
  return fresh.reduce((max, m) => Math.max(max, m.id), afterId)
}

// ------------------------------------------------------------------ the properties

/** A collector on a fresh database of `backend`, with the fuzz bot and an admin token. */
async function start(backend: Backend): Promise<Collector> {
  const db = await backend.db()
  return startCollector({
    port: 0,
    log: false,
    demoBot: false,
    ...(db ? { db } : {}),
    // The default 3 s statement budget: the largest statement of a batch of big records (the
    // messages insert) is bounded since search indexes a message's first 10 000 characters
    // (bench/hostile-batch-cost.ts; README "Statement budget").
    bots: [{ name: 'fuzz', apiKey: KEY }],
    auth: { tokens: [{ name: 'fuzz', token: ADMIN.authorization.slice(7), role: 'admin', bots: ['*'] }] },
  })
}

const stores = backends()

describe.each(stores)('hostile records on $name', (backend) => {
  // Bounded to well under a minute for both stores (PostgreSQL round trips cost more: fewer
  // runs there, the same generators and seed).
  const runs = Math.ceil(backend.name === 'SQLite' ? RUNS / 2.5 : RUNS / 5)

  it('singles: 201 or a 4xx naming the field, never a blocked loop, every accepted record readable everywhere', async () => {
    const collector = await start(backend)
    let lastMessage = 0
    const statuses = new Map<number, number>()
    try {
      await fc.assert(
        fc.asyncProperty(record, async (r) => {
          const path = `/track?platform=${r.platform}&type=${r.type}&v=${r.v ?? '11.1.0-rest'}&apiKey=${KEY}`
          const answers = await sendMeasured(collector, path, r.text)
          const ids: number[] = []
          for (const a of answers) {
            statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
            expectNo5xx(a, `${r.platform}/${r.type}`)
            if (a.status === 201) ids.push(a.body.id as number)
          }
          if (ids.length) lastMessage = await expectReadable(collector, ids, lastMessage)
        }),
        seeded({ numRuns: runs, endOnFailure: true, examples: KNOWN.map((k): [Rec] => [k]) }),
      )
    } finally {
      await collector.close()
    }
    // The generators reach both sides: stored records and refusals.
    expect(statuses.get(201)).toBeGreaterThan(0)
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true)
  })

  it('batches: 200 with a result per record, every good record stored whatever its neighbours hold', async () => {
    const collector = await start(backend)
    const good = fc
      .constantFrom(...SHAPES)
      .map(([platform, type, make]): Rec & { good: boolean } => ({ platform, type, text: toText(make()), good: true }))
    const item: fc.Arbitrary<Rec & { good: boolean }> = fc.oneof(
      good,
      record.map((r) => ({ ...r, good: false })),
    )
    let batchNo = 0
    let lastMessage = 0
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 8 }), fc.boolean(), async (items, keyed) => {
          batchNo++
          // Each record's body text goes in as written (the batch keeps a record's raw text).
          const text = `{"records":[${items
            .map(
              (it, i) =>
                `{"platform":${JSON.stringify(it.platform)},"type":${JSON.stringify(it.type)},"v":${JSON.stringify(it.v ?? '11.1.0-rest')},${
                  keyed ? `"idempotencyKey":"b${batchNo}-${i}",` : ''
                }"body":${it.text}}`,
            )
            .join(',')}]}`
          const before = (await collector.store.counts()).records
          const answers = await sendMeasured(collector, `/track/batch?apiKey=${KEY}`, text)
          const ids: number[] = []
          for (const a of answers) {
            expectNo5xx(a, 'batch')
            if (a.status === 413) continue
            expect(a.status).toBe(200)
            const results = a.body.results as Array<{ index: number; status: string; id?: number }>
            expect(results.map((x) => x.index)).toEqual(items.map((_, i) => i))
            for (const [i, it] of items.entries())
              if (it.good) expect(results[i]?.status, `${it.platform}/${it.type}`).not.toBe('refused')
            ids.push(...results.flatMap((x) => (x.status === 'accepted' ? [x.id as number] : [])))
          }
          expect((await collector.store.counts()).records - before).toBe(ids.length)
          if (ids.length) lastMessage = await expectReadable(collector, ids, lastMessage)
        }),
        seeded({
          numRuns: Math.ceil(runs / 2.5),
          endOnFailure: true,
          examples: [[[...KNOWN.map((k) => ({ ...k, good: false })), ...GOOD_EXAMPLES], true]],
        }),
      )
    } finally {
      await collector.close()
    }
  })
})
