import { describe, expect, it } from 'vitest'
import {
  type AttemptOutcome,
  decideFailure,
  type EngineState,
  type FailureDecision,
  type ShipmentFacts,
  servedReopens,
} from '../src/failure-policy'
import { DEFAULT_RETRY } from '../src/retry'

// Every rule of the core README's "Delivery rules" table, one row each: what happened, the
// engine's state, and the decision. No sockets, no timers; the backoff jitter is fixed at its
// floor (half the step), so backoff(n) = 100 · 2^(n-1) ms with the default 200 ms first step.

const NOW = 1_000_000
const retry = { ...DEFAULT_RETRY, maxAttempts: 5 }
const floor = () => 0

const state = (over: Partial<EngineState> = {}): EngineState => ({
  shuttingDown: false,
  maxAttempts: retry.maxAttempts,
  answeredSeq: 0,
  servedSeq: 0,
  noAnswerAt: 0,
  lone: undefined,
  limitedRun: 0,
  gateRound: 0,
  probing: false,
  connectFailures: 0,
  ...over,
})
const shipment = (over: Partial<ShipmentFacts> = {}): ShipmentFacts => ({
  batch: false,
  attempts: 1,
  spared: 0,
  seq: 50,
  round: 0,
  ...over,
})

/** A request sent after the failing one was answered / served (the service is up). */
const answeredAfter = { answeredSeq: 51, servedSeq: 51 }

interface Row {
  rule: string
  what: AttemptOutcome
  s?: Partial<ShipmentFacts>
  st?: Partial<EngineState>
  expect: Partial<Omit<FailureDecision, 'next'>> & { next?: Partial<FailureDecision['next']> }
}

const rows: Row[] = [
  // Shutting down
  {
    rule: 'close(): whatever failed fails for good',
    what: { status: 500 },
    st: { shuttingDown: true },
    expect: { verdict: 'fail', retryable: true },
  },
  // Batches
  {
    rule: 'batch answered 404: single records from now on, no attempt spent',
    what: { status: 404 },
    s: { batch: true },
    expect: { verdict: 'unbatch', spendAttempt: false },
  },
  {
    rule: 'batch answered 405: the same',
    what: { status: 405 },
    s: { batch: true },
    expect: { verdict: 'unbatch', spendAttempt: false },
  },
  // Answers that never succeed
  {
    rule: '4xx (not 408/429): fails at once, not retried',
    what: { status: 400 },
    expect: { verdict: 'fail', retryable: false, next: { probing: false } },
  },
  {
    rule: 'single record answered 404: fails, not retried',
    what: { status: 404 },
    expect: { verdict: 'fail', retryable: false },
  },
  { rule: '501: fails, not retried', what: { status: 501 }, expect: { verdict: 'fail', retryable: false } },
  { rule: '505: fails, not retried', what: { status: 505 }, expect: { verdict: 'fail', retryable: false } },
  // 5xx and 408
  {
    rule: '500: retried after backoff(attempts), attempt spent, the limit may shrink',
    what: { status: 500 },
    s: { attempts: 2 },
    expect: { verdict: 'retry', delayMs: 200, spendAttempt: true, shrink: true, pace: false, closeGateMs: undefined },
  },
  { rule: '408: retried like a 5xx', what: { status: 408 }, expect: { verdict: 'retry', delayMs: 100, shrink: true } },
  {
    rule: '503 without Retry-After: retried like a 5xx',
    what: { status: 503 },
    expect: { verdict: 'retry', delayMs: 100, shrink: true, closeGateMs: undefined },
  },
  {
    rule: '5xx on the last attempt: fails (gave up)',
    what: { status: 502 },
    s: { attempts: 5 },
    expect: { verdict: 'fail', retryable: true },
  },
  {
    rule: 'any answer: the service answers (connect failures reset, answeredSeq moves)',
    what: { status: 500 },
    st: { connectFailures: 3 },
    expect: { next: { connectFailures: 0, answeredSeq: 50, servedSeq: 50 } },
  },
  {
    rule: 'an answer other than a rate limit ends probing',
    what: { status: 500 },
    st: { probing: true },
    expect: { next: { probing: false } },
  },
  // 429: a rate
  {
    rule: '429 + Retry-After: that request waits its Retry-After, paced, the limit does not shrink',
    what: { status: 429, retryAfterMs: 1_000 },
    expect: {
      verdict: 'retry',
      delayMs: 1_000,
      spendAttempt: true,
      pace: true,
      shrink: false,
      closeGateMs: undefined,
      next: { limitedRun: 1 },
    },
  },
  {
    rule: '429 Retry-After capped by maxRetryAfterMs',
    what: { status: 429, retryAfterMs: 600_000 },
    expect: { verdict: 'retry', delayMs: 60_000 },
  },
  {
    rule: '429 without Retry-After: backoff',
    what: { status: 429 },
    s: { attempts: 3 },
    expect: { verdict: 'retry', delayMs: 400, pace: true },
  },
  {
    rule: '429, the 8th in a row: everything is refused, the gate holds every request for the Retry-After',
    what: { status: 429, retryAfterMs: 2_000 },
    st: { limitedRun: 7 },
    expect: {
      verdict: 'gate',
      closeGateMs: 2_000,
      spendAttempt: true,
      pace: true,
      closedByUnavailable: false,
      next: { limitedRun: 8 },
    },
  },
  {
    rule: '429 to the probe after a gate: the gate closes again',
    what: { status: 429, retryAfterMs: 1_000 },
    st: { probing: true },
    expect: { verdict: 'gate', closeGateMs: 1_000, next: { probing: true } },
  },
  {
    rule: '429 to a request of an earlier gate round: held, the gate is not closed twice',
    what: { status: 429, retryAfterMs: 1_000 },
    s: { round: 1 },
    st: { probing: true, gateRound: 2 },
    expect: { verdict: 'gate', closeGateMs: undefined },
  },
  {
    rule: '429 on the last attempt: fails',
    what: { status: 429, retryAfterMs: 1_000 },
    s: { attempts: 5 },
    st: { limitedRun: 7 },
    expect: { verdict: 'fail', retryable: true },
  },
  // 503 + Retry-After: the service is unavailable
  {
    rule: '503 + Retry-After, nothing sent after it served: the gate holds every request until then',
    what: { status: 503, retryAfterMs: 2_000 },
    expect: {
      verdict: 'gate',
      closeGateMs: 2_000,
      closedByUnavailable: true,
      spendAttempt: true,
      pace: false,
      shrink: false,
      next: { servedSeq: 0, answeredSeq: 50, limitedRun: 0 },
    },
  },
  {
    rule: '503 + Retry-After after a request sent later was served: one instance, only that request waits',
    what: { status: 503, retryAfterMs: 2_000 },
    st: answeredAfter,
    expect: { verdict: 'retry', delayMs: 2_000, closeGateMs: undefined, spendAttempt: true, pace: false },
  },
  {
    rule: '503 + Retry-After capped by maxRetryAfterMs',
    what: { status: 503, retryAfterMs: 600_000 },
    expect: { verdict: 'gate', closeGateMs: 60_000 },
  },
  {
    rule: '503 + Retry-After to a request of an earlier gate round: held, not closed twice',
    what: { status: 503, retryAfterMs: 2_000 },
    s: { round: 0 },
    st: { gateRound: 1 },
    expect: { verdict: 'gate', closeGateMs: undefined },
  },
  {
    rule: '503 + Retry-After to the probe: the gate closes again, still probing',
    what: { status: 503, retryAfterMs: 2_000 },
    s: { round: 1 },
    st: { gateRound: 1, probing: true },
    expect: { verdict: 'gate', closeGateMs: 2_000, next: { probing: true } },
  },
  {
    rule: '503 + Retry-After on the last attempt: fails',
    what: { status: 503, retryAfterMs: 2_000 },
    s: { attempts: 5 },
    expect: { verdict: 'fail', retryable: true },
  },
  {
    rule: 'a 503 + Retry-After does not count as served (a 429 does)',
    what: { status: 429 },
    expect: { next: { servedSeq: 50 } },
  },
  // No answer
  {
    rule: 'kept-alive socket the service had closed: again at once, no attempt spent',
    what: { stale: true },
    st: answeredAfter,
    expect: { verdict: 'gate', spendAttempt: false, closeGateMs: undefined, shrink: false, lone: 'keep' },
  },
  {
    rule: 'connection refused: the service is unreachable, gate backoff(connect failures), no attempt spent, no shrink',
    what: { connectFailed: true },
    st: { connectFailures: 1, ...answeredAfter },
    expect: { verdict: 'gate', spendAttempt: false, closeGateMs: 200, shrink: false, next: { connectFailures: 2 } },
  },
  {
    rule: 'gate steps are at most 1 s',
    what: { connectFailed: true },
    st: { connectFailures: 9 },
    expect: { closeGateMs: 500 },
  },
  {
    rule: 'connection refused, request of an earlier gate round: held, not closed twice',
    what: { connectFailed: true },
    s: { round: 0 },
    st: { gateRound: 3, connectFailures: 2 },
    expect: { verdict: 'gate', closeGateMs: undefined, spendAttempt: false, next: { connectFailures: 2 } },
  },
  {
    rule: 'reset or deadline, nothing sent after it answered: the service went away, gate, no attempt spent',
    what: {},
    expect: { verdict: 'gate', spendAttempt: false, closeGateMs: 100, shrink: true },
  },
  {
    rule: 'reset while later requests are answered, alone: attempt spent, backoff, it becomes the lone failure',
    what: {},
    s: { attempts: 2 },
    st: answeredAfter,
    expect: {
      verdict: 'retry',
      delayMs: 200,
      spendAttempt: true,
      lone: 'this',
      judge: false,
      next: { noAnswerAt: NOW },
    },
  },
  {
    // Requests are ordered by their send, not their send time: one kick sends several in the same
    // millisecond, and the one after this that was answered still proves the service up.
    rule: 'reset alone, the very next send answered (same millisecond or not): the attempt counts',
    what: {},
    st: { answeredSeq: 51, servedSeq: 51 },
    expect: { verdict: 'retry', spendAttempt: true, lone: 'this' },
  },
  {
    rule: 'reset alone on the last attempt: the verdict waits one burst window',
    what: {},
    s: { attempts: 5 },
    st: answeredAfter,
    expect: { verdict: 'retry', delayMs: 1_000, judge: true, lone: 'this' },
  },
  {
    rule: 'reset within a second of another failure without an answer: a burst, spared, gate-capped backoff',
    what: {},
    s: { spared: 2 },
    st: { ...answeredAfter, noAnswerAt: NOW - 500 },
    expect: { verdict: 'retry', spendAttempt: false, spare: true, delayMs: 400, lone: 'clear' },
  },
  {
    rule: 'a record spared 20 times: its attempts count again',
    what: {},
    s: { spared: 20 },
    st: { ...answeredAfter, noAnswerAt: NOW - 500 },
    expect: { verdict: 'retry', spendAttempt: true, spare: false, lone: 'this' },
  },
  {
    rule: 'the second failure of a burst gives the lone first one its attempt back',
    what: {},
    st: { ...answeredAfter, noAnswerAt: NOW - 500, lone: { isThis: false, spared: 0 } },
    expect: { spareLone: true },
  },
  {
    rule: 'no attempt back for the lone failure outside the burst window',
    what: {},
    st: { ...answeredAfter, noAnswerAt: NOW - 1_500, lone: { isThis: false, spared: 0 } },
    expect: { spareLone: false, lone: 'this' },
  },
  {
    rule: 'no attempt back when the lone failure is the same request',
    what: {},
    st: { ...answeredAfter, noAnswerAt: NOW - 500, lone: { isThis: true, spared: 0 } },
    expect: { spareLone: false },
  },
  {
    rule: 'no attempt back for a lone failure spared 20 times',
    what: {},
    st: { ...answeredAfter, noAnswerAt: NOW - 500, lone: { isThis: false, spared: 20 } },
    expect: { spareLone: false },
  },
]

describe('failure policy: one row per delivery rule', () => {
  it.each(rows)('$rule', ({ what, s, st, expect: want }) => {
    const d = decideFailure(what, shipment(s), state(st), NOW, retry, floor)
    const { next, ...rest } = want
    expect(d).toMatchObject(rest)
    if (next) expect(d.next).toMatchObject(next)
  })

  it('is pure: the state passed in is not changed', () => {
    const st = Object.freeze(state({ limitedRun: 7, ...answeredAfter }))
    const before = { ...st }
    decideFailure({ status: 429, retryAfterMs: 1 }, shipment(), st, NOW, retry, floor)
    decideFailure({}, shipment(), st, NOW, retry, floor)
    expect(st).toEqual(before)
  })

  it('backoff jitter stays within [step/2, step]', () => {
    const lo = decideFailure({ status: 500 }, shipment({ attempts: 3 }), state(), NOW, retry, () => 0)
    const hi = decideFailure({ status: 500 }, shipment({ attempts: 3 }), state(), NOW, retry, () => 1)
    expect([lo.delayMs, hi.delayMs]).toEqual([400, 800])
  })
})

describe('a gate a 503 closed', () => {
  it('reopens when a request sent after the 503-ed one is served (one instance was unavailable)', () => {
    expect(servedReopens(51, 50)).toBe(true)
  })
  it('stays closed for answers to requests sent before it or to itself', () => {
    expect(servedReopens(50, 50)).toBe(false)
    expect(servedReopens(49, 50)).toBe(false)
  })
  it('is not reopened early when no 503 closed it', () => {
    expect(servedReopens(51, undefined)).toBe(false)
  })
})
