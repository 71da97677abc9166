/**
 * Shared pieces of the adapter fuzz suites: loading each framework from the package that
 * declares it, a process watchdog (unhandled rejections, uncaught exceptions), a per-input
 * deadline, and the random inputs every suite draws from.
 */
import http from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { ConvotrackError } from '@convotrack/core'
import fc from 'fast-check'

/** The monorepo root, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * `require` as seen from `packages/<name>`: frameworks are that package's (dev) dependencies
 * and do not resolve from test/.
 *
 * @example const { App } = requireFrom('slack')('@slack/bolt')
 */
export function requireFrom(pkg: string): NodeJS.Require {
  return createRequire(`${ROOT}packages/${pkg}/package.json`)
}

/** Runs per property; the whole fuzz suite stays under a minute. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 150)

/** Everything the process reported that nobody handled. */
export interface Watchdog {
  readonly problems: Array<{ kind: 'unhandledRejection' | 'uncaughtException'; error: unknown }>
  /** Throws (failing the test) when anything was reported since the last call. */
  check(): void
  stop(): void
}

/** Listens for unhandled rejections and uncaught exceptions for the duration of a suite. */
export function watchProcess(): Watchdog {
  const problems: Watchdog['problems'] = []
  const onRejection = (error: unknown) => problems.push({ kind: 'unhandledRejection', error })
  const onException = (error: unknown) => problems.push({ kind: 'uncaughtException', error })
  process.on('unhandledRejection', onRejection)
  process.on('uncaughtException', onException)
  return {
    problems,
    check() {
      if (problems.length === 0) return
      const list = problems.splice(0).map((p) => `${p.kind}: ${(p.error as Error)?.stack ?? String(p.error)}`)
      throw new Error(`the process reported ${list.length} unhandled problem(s):\n${list.join('\n')}`)
    },
    stop() {
      process.off('unhandledRejection', onRejection)
      process.off('uncaughtException', onException)
    },
  }
}

/**
 * The shortest wait before a call counts as hung: on a loaded 2-core machine (verify beside CPU
 * burners) a call that settles in 50 ms idle can take seconds, and slow is not hung.
 */
const HANG_FLOOR_MS = 60_000

/**
 * A budget that only a hang exhausts (`tracker.flush(HANG_MS)` before asserting nothing is
 * pending): delivering a storm's records to the local sink takes seconds on a loaded machine.
 */
export const HANG_MS = HANG_FLOOR_MS

/** Settles like `work`, or rejects with a "hang" error after `ms` (never less than a minute). */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const limit = Math.max(ms, HANG_FLOOR_MS)
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle within ${limit} ms`)), limit)
  })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** What a promise did, comparable across a tracked and an untracked run. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: string }

export async function outcome(work: () => unknown): Promise<Outcome> {
  try {
    return { ok: true, value: await work() }
  } catch (error) {
    return { ok: false, error: `${(error as Error)?.name}: ${(error as Error)?.message}` }
  }
}

/** Checks what the adapter handed to `onError`: tracker errors with a message a person can act on. */
export function expectClearErrors(errors: unknown[]): void {
  for (const e of errors) {
    if (!(e instanceof ConvotrackError)) throw new Error(`onError got a non-ConvotrackError: ${String(e)}`)
    if (typeof e.code !== 'string' || e.code === '' || typeof e.message !== 'string' || e.message.length < 10)
      throw new Error(`onError got an unclear error: ${e.code} ${e.message}`)
  }
}

// ------------------------------------------------------------------ random inputs

/** `depth` levels of `{ nested: … }`. */
export const deep = (depth: number, leaf: unknown = 'leaf'): unknown => {
  let v: unknown = leaf
  for (let i = 0; i < depth; i++) v = { nested: v }
  return v
}

/** A huge string (up to ~200 KB). */
export const hugeString = fc
  .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 10_000, max: 200_000 }))
  .map(([s, n]) => s.repeat(Math.ceil(n / s.length)))

/** Anything JSON can carry: random values, huge strings, deep nesting, big arrays. */
export const jsonAnything: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: fc.integer({ min: 50, max: 800 }).map((d) => deep(d)) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 500, maxLength: 2_000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(null, '', 0, -1, 1e308, true, false, [], {}, '__proto__', 'constructor'),
  },
)

/** A cycle: `{ a: { back: <itself> } }`. */
export function circular(): Record<string, unknown> {
  const o: Record<string, unknown> = { a: 1 }
  o.self = { back: o }
  return o
}

/** Anything at all, for in-process entries: also cycles, BigInt, functions, symbols, class instances. */
export const anything: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: jsonAnything },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 3, withBigInt: true, withDate: true, withMap: true }) },
  { weight: 1, arbitrary: fc.constant(null).map(() => circular()) },
  { weight: 1, arbitrary: fc.bigInt().map((n) => ({ n })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      () => 0,
      Symbol('s'),
      undefined,
      Number.NaN,
      new Date(Number.NaN),
      Object.create(null),
    ),
  },
)

type Path = Array<string | number>

function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix)
  if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, Array.isArray(value) ? Number(k) : k], out)
  return out
}

function setAt(root: unknown, path: Path, op: 'set' | 'delete', value: unknown): unknown {
  if (path.length === 0) return op === 'set' ? value : undefined
  const copy = structuredClone(root) as Record<string | number, unknown>
  let node = copy
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  const last = path[path.length - 1] as string | number
  if (op === 'delete') {
    if (Array.isArray(node)) node.splice(last as number, 1)
    else delete node[last]
  } else node[last] = value
  return copy
}

/**
 * A valid input with one to three places changed: a field replaced by something random
 * (wrong type, huge, deep…), removed (truncated records), or a random extra key added.
 */
export function mutated(base: unknown, values: fc.Arbitrary<unknown> = jsonAnything): fc.Arbitrary<unknown> {
  const paths = pathsOf(base)
  const one = fc.record({
    path: fc.constantFrom(...paths),
    op: fc.constantFrom<'set' | 'delete' | 'add'>('set', 'set', 'delete', 'add'),
    key: fc.string({ maxLength: 12 }),
    value: values,
  })
  return fc.array(one, { minLength: 1, maxLength: 3 }).map((changes) => {
    let out: unknown = base
    for (const c of changes) {
      try {
        if (c.op === 'add') {
          const parent = c.path.length === 0 ? out : c.path.reduce<any>((n, k) => n?.[k], out)
          if (typeof parent === 'object' && parent !== null && !Array.isArray(parent))
            out = setAt(out, [...c.path, c.key], 'set', c.value)
        } else out = setAt(out, c.path, c.op, c.value)
      } catch {
        // a path made stale by an earlier change: skip this change
      }
    }
    return out
  })
}

/** Text that is not valid JSON: a valid body cut short, or noise. */
export function truncatedJson(base: unknown): fc.Arbitrary<string> {
  const text = JSON.stringify(base)
  return fc.oneof(
    fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((n) => text.slice(0, n)),
    fc.string({ maxLength: 200 }),
    fc.constantFrom('{', '[', '{"a":', 'null,', '\u0000', '{"__proto__":{"x":1}}'),
  )
}

// ------------------------------------------------------------------ tiny local servers

export interface LocalServer {
  url: string
  close(): Promise<void>
}

/** An HTTP server on 127.0.0.1:0 answering with `handler(path, body)`; a stand-in for a platform API. */
export async function localApi(
  handler: (req: http.IncomingMessage, body: string) => { status: number; body: string; type?: string } | 'reset',
): Promise<LocalServer> {
  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => {
      raw += c
    })
    req.on('end', () => {
      const answer = handler(req, raw)
      if (answer === 'reset') return req.socket.destroy()
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' })
      res.end(answer.body)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** A plain POST with its own socket, resolving with the status and body text. */
export function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          text += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
